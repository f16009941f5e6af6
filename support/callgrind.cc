// Copyright 2026 The MuJoCo implicitpos Authors
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

#include "support/callgrind.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace mjpos {

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string SelfCommand() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return ShellQuote(n > 0 ? std::string(buf, n) : "");
}

double CallgrindPerStep(const std::string& command, const std::string& input, int steps,
                        bool instr_at_start, std::string* output) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/mjpos_callgrind_XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0) return NAN;
  close(fd);
  const std::string in = path + ".in", out = path + ".out";
  if (!input.empty()) std::ofstream(in) << input;
  std::string cmd = "valgrind --tool=callgrind --toggle-collect=mj_step " +
                    std::string(instr_at_start ? "" : "--instr-atstart=no ") +
                    "--callgrind-out-file=" + ShellQuote(path) + " " + command +
                    (input.empty() ? "" : " < " + ShellQuote(in)) + " > " + ShellQuote(out) +
                    " 2>/dev/null";
  double total = NAN;
  if (std::system(cmd.c_str()) == 0) {
    std::ifstream f(path);
    for (std::string line; std::getline(f, line);) {
      if (line.rfind("totals:", 0) == 0) total = std::strtod(line.c_str() + 7, nullptr);
    }
    if (output) {
      std::ifstream o(out);
      output->assign(std::istreambuf_iterator<char>(o), std::istreambuf_iterator<char>());
    }
  }
  std::remove(path.c_str());
  std::remove(in.c_str());
  std::remove(out.c_str());
  return total / steps;
}

}  // namespace mjpos
