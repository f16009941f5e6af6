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

// Part 8: violent motion. The servo humanoid (on its floor and with contact off), chain12 and
// arm7, every servo tuned from its reflected inertia to one f_n and zeta, under RL commands across
// each joint's range (support/motion.h), each scheme against the converged reference.

#include <string>
#include <utility>
#include <vector>

#include "benchmark/mjpos_bench.h"
#include "support/motion.h"

namespace mjpos::bench {

std::vector<MotionResult> MotionStudy(const Options& opt) {
  struct Subject {
    const char* name;
    bool contact;
  };
  const Subject subjects[] = {{"humanoid", true}, {"humanoid", false}, {"chain12", false},
                              {"arm7", false}};
  const std::pair<Command, double> commands[] = {
      {Command::kRandom, 0.04}, {Command::kStep, 0}, {Command::kTrack, 0.5}};
  std::vector<MotionSetting> settings;
  for (const Subject& sub : subjects) {
    for (auto [command, period] : commands) {
      for (double fn : {10.0, 30.0, 100.0, 300.0, 1000.0}) {
        for (double zeta : {0.0, 0.3, 0.7, 1.0}) {
          for (double h : {0.002, 0.005, 0.010}) {
            MotionSetting s;
            s.subject = sub.name;
            s.contact = sub.contact;
            s.fn = fn;
            s.zeta = zeta;
            s.h = h;
            s.command = command;
            s.period = command == Command::kStep ? kMotionSeconds : period;
            if (opt.smoke && (!sub.contact || command != Command::kRandom || fn != 100 ||
                              zeta != 0.7 || h != 0.010)) {
              continue;
            }
            settings.push_back(s);
          }
        }
      }
    }
  }

  std::vector<MotionResult> rows(settings.size());
  OnEveryCore(settings.size(), [&](size_t i) {
    rows[i] = MeasureMotion(settings[i], MJPOS_MODEL_DIR);
  });
  return rows;
}

}  // namespace mjpos::bench
