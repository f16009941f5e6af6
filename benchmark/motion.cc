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
// each joint's range (support/motion.h), each scheme against the converged reference; then the
// held-out grids (A, B and C held out the substeps' first rules, D their steady turn); then the
// weighted mode's suite.

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

std::vector<HeldOutRow> MotionHeldOut(const Options& opt) {
  struct Grid {
    const char* name;
    unsigned seed;
    std::vector<std::pair<const char*, bool>> subjects;
    std::vector<std::pair<Command, double>> commands;
    std::vector<double> fn, zeta, h;
  };
  const Grid grids[] = {
      {"A", 2, {{"humanoid", true}, {"humanoid", false}, {"chain12", false}, {"arm7", false}},
       {{Command::kRandom, 0.02}, {Command::kRandom, 0.035}, {Command::kStep, 0},
        {Command::kTrack, 0.6}},
       {15, 45, 150, 450}, {0.05, 0.2, 0.85}, {0.0025, 0.004, 0.008}},
      {"B", 3,
       {{"humanoid", true}, {"humanoid", false}, {"chain6", false}, {"chain12", false},
        {"arm7", false}},
       {{Command::kRandom, 0.025}, {Command::kRandom, 0.045}, {Command::kStep, 0},
        {Command::kTrack, 0.45}},
       {20, 70, 220, 700}, {0, 0.4, 1}, {0.003, 0.006, 0.009}},
      {"C", 4, {{"humanoid100", true}}, {{Command::kRandom, 0.04}}, {30, 100, 300, 1000}, {0.7},
       {0.005, 0.010}},
      {"D", 5,
       {{"humanoid", true}, {"humanoid", false}, {"chain4", false}, {"chain8", false},
        {"arm7", false}},
       {{Command::kRandom, 0.03}, {Command::kStep, 0}, {Command::kTrack, 0.55}},
       {12, 40, 130, 400}, {0, 0.15, 0.6}, {0.0035, 0.0075}},
  };
  std::vector<HeldOutRow> rows;
  for (const Grid& g : grids) {
    for (auto [subject, contact] : g.subjects) {
      for (auto [command, period] : g.commands) {
        for (double fn : g.fn) {
          for (double zeta : g.zeta) {
            for (double h : g.h) {
              HeldOutRow r;
              r.grid = g.name;
              r.setting.subject = subject;
              r.setting.contact = contact;
              r.setting.command = command;
              r.setting.period = command == Command::kStep ? kMotionSeconds : period;
              r.setting.fn = fn;
              r.setting.zeta = zeta;
              r.setting.h = h;
              r.setting.seed = g.seed;
              rows.push_back(r);
            }
          }
        }
      }
    }
  }
  if (opt.smoke) rows.resize(1);
  OnEveryCore(rows.size(), [&](size_t i) {
    HeldOutRow& r = rows[i];
    mjModel* m = LoadMotionSubject(r.setting, MJPOS_MODEL_DIR);
    if (!m) return;
    r.loaded = true;
    r.flag = RunMotion(m, r.setting, Scheme::kBackwardEuler, r.setting.h);
    if (!r.flag.bounded) {
      double h_ref = MotionReferenceStep(r.setting.h, r.setting.fn);
      r.reference_bounded = RunMotion(m, r.setting, Scheme::kStock, h_ref).bounded &&
                            RunMotion(m, r.setting, Scheme::kStock, h_ref / 2).bounded;
    }
    mj_deleteModel(m);
  });
  return rows;
}

std::vector<WeightedMotionResult> MotionWeighted(const Options& opt) {
  std::vector<MotionSetting> settings = WeightedMotionSettings();
  if (opt.smoke) settings.resize(1);
  std::vector<WeightedMotionResult> rows(settings.size());
  OnEveryCore(settings.size(), [&](size_t i) {
    rows[i] = MeasureWeightedMotion(settings[i], MJPOS_MODEL_DIR, true);
  });
  return rows;
}

}  // namespace mjpos::bench
