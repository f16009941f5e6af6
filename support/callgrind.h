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

// Instructions inside mj_step of another process, counted by valgrind's callgrind: the native
// cost tables of the peer suite and of the real robots. A program that profiles itself runs
// SelfCommand() with its own profile mode; that mode reaches its warm state uninstrumented and
// calls CALLGRIND_START_INSTRUMENTATION (valgrind/callgrind.h) before the counted steps.

#ifndef MJPOS_SUPPORT_CALLGRIND_H_
#define MJPOS_SUPPORT_CALLGRIND_H_

#include <string>

namespace mjpos {

// s quoted for a POSIX shell.
std::string ShellQuote(const std::string& s);

// This program's executable, quoted for a shell.
std::string SelfCommand();

// Runs `command` (a shell command line; `input`, if not empty, on its stdin) under
//   valgrind --tool=callgrind --toggle-collect=mj_step [--instr-atstart=no]
// and returns the instructions inside mj_step divided by `steps`; NaN if it exits non-zero.
// instr_at_start false: the command starts instrumentation itself. output: its stdout, if given.
double CallgrindPerStep(const std::string& command, const std::string& input, int steps,
                        bool instr_at_start, std::string* output = nullptr);

}  // namespace mjpos

#endif  // MJPOS_SUPPORT_CALLGRIND_H_
