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

// Part 1 of mjpos_bench, instructions per step: for each selected case and flag, the program runs
// itself under
//   valgrind --tool=callgrind --instr-atstart=no --toggle-collect=mj_step
// in --profile mode: the child reads the case's warm state from a file (no warm-up), switches
// callgrind's instrumentation on and steps one batch of kBatchSteps steps, exactly as a timed
// batch. The collected count is therefore that of the batch's mj_steps alone.

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/mjpos_bench.h"

namespace mjpos::bench {
namespace {

// one child: a case with the flag off or on
struct CallgrindRun {
  Case* c = nullptr;
  int on = 0;
  std::string state, out, log;  // files
  pid_t pid = 0;
  std::chrono::steady_clock::time_point start;
};

// the path of this program's executable
std::string SelfPath() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, n) : "";
}

// the total of a callgrind output file ("totals:" line), or -1
double CallgrindTotal(const std::string& path) {
  std::ifstream f(path);
  double total = -1;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("totals:", 0) == 0) total = std::strtod(line.c_str() + 7, nullptr);
  }
  return total;
}

// the inclusive count of function fn in a callgrind output file, or -1 if it is not there: every
// cost line of its blocks, its own lines wherever inlined code puts them (fi=, fe=) and the
// inclusive lines of its calls (after calls=); one event (Ir), names compressed as "(id) name"
double CallgrindInclusive(const std::string& path, const std::string& fn) {
  std::ifstream f(path);
  std::map<std::string, std::string> names;  // "(id)" -> name
  double total = -1;
  bool in = false;
  for (std::string line; std::getline(f, line);) {
    bool is_fn = line.rfind("fn=", 0) == 0;
    if (is_fn || line.rfind("cfn=", 0) == 0) {
      std::string spec = line.substr(is_fn ? 3 : 4), name = spec;
      if (!spec.empty() && spec[0] == '(') {
        size_t close = spec.find(')');
        std::string id = spec.substr(0, close + 1);
        if (close + 1 < spec.size()) names[id] = spec.substr(close + 2);
        name = names[id];
      }
      if (is_fn) {
        in = name == fn;
        if (in && total < 0) total = 0;
      }
      continue;
    }
    if (!in || line.empty()) continue;
    char c = line[0];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '*') {
      size_t space = line.find(' ');
      if (space != std::string::npos) total += std::strtod(line.c_str() + space, nullptr);
    }
  }
  return total;
}

// starts args[0] (from PATH) with stdout and stderr to log; 0 or the errno
int Spawn(const std::vector<std::string>& args, const std::string& log, pid_t* pid) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int err = posix_spawnp(pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return err;
}

// the runs of the models that opt.callgrind selects, flag off and on, their files under dir
std::vector<CallgrindRun> PlanRuns(const Cases& cases, const Options& opt,
                                   const std::string& dir) {
  std::vector<CallgrindRun> runs;
  std::string list = "," + opt.callgrind + ",";
  for (const auto& c : cases) {
    std::string name = Underscored(c->name);
    if (opt.callgrind != "all" && list.find("," + name + ",") == std::string::npos) continue;
    for (int on = 0; on < 2; on++) {
      CallgrindRun r;
      r.c = c.get();
      r.on = on;
      r.state = dir + "/" + name + ".state";
      r.out = Fmt("%s/%s.%s.callgrind.out", dir.c_str(), name.c_str(), on ? "on" : "off");
      r.log = Fmt("%s/%s.%s.log", dir.c_str(), name.c_str(), on ? "on" : "off");
      runs.push_back(r);
    }
  }
  return runs;
}

// reads the count of a finished run into its case, or marks the stage failed
void Collect(CallgrindRun* r, int status, bool* failed) {
  double total = CallgrindTotal(r->out);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - r->start).count();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && total >= 0) {
    r->c->instr[r->on] = total / kBatchSteps;
    double outputs = CallgrindInclusive(r->out, "mj_stepForceImplicit");
    r->c->outputs[r->on] = outputs >= 0 ? outputs / kBatchSteps : NAN;
    std::printf("mjpos_bench: callgrind %s, flag %s: %s instructions per step (%.1f s)\n",
                r->c->name.c_str(), r->on ? "on" : "off", Count(r->c->instr[r->on]).c_str(),
                seconds);
  } else {
    std::fprintf(stderr, "mjpos_bench: callgrind run failed, see %s\n", r->log.c_str());
    *failed = true;
  }
  std::fflush(stdout);
}

// runs every run under valgrind, jobs at a time; false if valgrind is not found. cpu: the
// children's CPU seconds
bool RunAll(std::vector<CallgrindRun>* runs, const Options& opt, int jobs, bool* failed,
            double* cpu) {
  std::string self = SelfPath();
  size_t next = 0;
  int running = 0;
  bool missing = false;
  while (true) {
    while (!missing && next < runs->size() && running < jobs) {
      CallgrindRun& r = (*runs)[next++];
      std::vector<std::string> args = {
          "valgrind", "--tool=callgrind", "--instr-atstart=no", "--toggle-collect=mj_step",
          "--callgrind-out-file=" + r.out, self, Fmt("--warmup=%d", opt.warmup),
          Fmt("--profile=%s:%s:%d", Underscored(r.c->name).c_str(), r.on ? "on" : "off",
              kBatchSteps),
          "--profile_state=" + r.state};
      r.start = std::chrono::steady_clock::now();
      int err = Spawn(args, r.log, &r.pid);
      if (err == ENOENT) {
        missing = true;
      } else if (err) {
        std::fprintf(stderr, "mjpos_bench: cannot start valgrind: %s\n", std::strerror(err));
        *failed = true;
      } else {
        running++;
      }
    }
    if (running == 0) break;
    int status;
    rusage usage;
    pid_t pid = wait4(-1, &status, 0, &usage);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (CallgrindRun& r : *runs) {
      if (r.pid != pid) continue;
      running--;
      *cpu += usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
              1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
      Collect(&r, status, failed);
    }
  }
  return !missing;
}

}  // namespace

// As many children run at a time as there are logical CPUs (off and on of a model side by side).
std::string CountInstructions(const Cases& cases, const Options& opt, bool* failed) {
  *failed = false;
  std::string dir = opt.out.substr(0, opt.out.find_last_of('/') + 1) + "callgrind";
  std::vector<CallgrindRun> runs = PlanRuns(cases, opt, dir);
  if (runs.empty()) return "";
  if (!MJPOS_HAVE_CALLGRIND) {
    return "Instructions: not counted, mjpos_bench was built without valgrind/callgrind.h "
           "(tools/setup.sh installs valgrind).";
  }
  mkdir(dir.c_str(), 0777);
  for (const CallgrindRun& r : runs) {
    if (r.on == 0 && !WriteState(r.state, *r.c)) {
      std::fprintf(stderr, "mjpos_bench: cannot write %s\n", r.state.c_str());
      *failed = true;
      return "Instructions: not counted (cannot write the warm states).";
    }
  }

  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::printf("mjpos_bench: callgrind, %zu runs, %d at a time, profiles in %s/\n", runs.size(),
              jobs, dir.c_str());
  std::fflush(stdout);
  auto t0 = std::chrono::steady_clock::now();
  double cpu = 0;  // of the children
  if (!RunAll(&runs, opt, jobs, failed, &cpu)) {
    std::fprintf(stderr, "mjpos_bench: valgrind not found, no instruction counts\n");
    return "Instructions: not counted, valgrind not found (tools/setup.sh installs it).";
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("mjpos_bench: callgrind took %.1f s (%.1f CPU s)\n", seconds, cpu);
  return Fmt("Instructions per step inside `mj_step`, flag off and on: this program in "
             "`--profile` mode under `valgrind --tool=callgrind --instr-atstart=no "
             "--toggle-collect=mj_step`, from the warm state of the timing (read from a file, no "
             "warm-up under valgrind), instrumentation switched on for one batch of %d steps, as "
             "timed; per step = collected / %d. %zu runs, %d at a time, took %.1f s (%.1f CPU s); "
             "profiles in `%s/`.",
             kBatchSteps, kBatchSteps, runs.size(), jobs, seconds, cpu, dir.c_str()) +
         (*failed ? " A run failed (n/a): see its log there." : "");
}

}  // namespace mjpos::bench
