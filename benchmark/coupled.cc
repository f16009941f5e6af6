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

// Part 5 of mjpos_bench, the weighted mode's accuracy on coupled models: chains, the 7-dof arm and
// the servo humanoid (contact off), every servo tuned from its reflected inertia to one f_n and
// zeta, every class of input of support/accuracy.h, h = 1, 2, 5, 10 ms; the worst class's error of
// stock, backward Euler and the weighted mode against stock at h/100, and the mode's ratio to
// the baseline (stock where it ran stably, else backward Euler). The settings run on every core.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "benchmark/mjpos_bench.h"
#include "support/accuracy.h"
#include "support/models.h"

namespace mjpos::bench {
namespace {

struct CoupledSubject {
  std::string name;
  bool gravity;  // the load class is gravity (the chains), else a generalized force
};

// a fresh model of subject s
mjModel* LoadSubject(const std::string& name) {
  if (name == "servo humanoid") {
    std::string err;
    mjModel* m = mjpos::LoadWithServos(ModelPath("humanoid/humanoid.xml"), 1, 0, &err);
    if (m) {
      m->opt.integrator = mjINT_IMPLICIT;
      m->opt.disableflags |= mjDSBL_CONTACT;
    }
    return m;
  }
  if (name == "arm7") return LoadXmlString(ChainXml(7, 1, 0, 0.005));
  return LoadXmlString(ChainSpecXml(NamedChainSpec(name), 0.005));
}

// the row of one setting
Part5Row RunSetting(const CoupledSubject& s, double fn, double zeta, double h) {
  Part5Row row{s.name, fn, zeta, h, 2 * M_PI * fn * h, 0, 0, 0, 0, "", false};
  mjModel* m = LoadSubject(s.name);
  if (!m) return row;
  std::vector<TunedServo> servos = TuneServos(m, {fn}, zeta);
  row.stock_stable = true;
  for (Input c : kInputs) {
    SchemeErrors e = CompareSchemes(m, servos, 2 * M_PI * fn, c, h, s.gravity);
    row.stock = std::max(row.stock, e.stock);
    row.backward_euler = std::max(row.backward_euler, e.backward_euler);
    row.weighted = std::max(row.weighted, e.weighted);
    row.stock_stable &= std::isfinite(e.stock);
    double ratio = RatioToBaseline(e);
    if (ratio > row.ratio) {
      row.ratio = ratio;
      row.worst = InputName(c);
    }
  }
  mj_deleteModel(m);
  return row;
}

}  // namespace

std::vector<Part5Row> CoupledAccuracy(const Options& opt) {
  std::vector<CoupledSubject> subjects = {{"chain3", true},  {"chain5 mixed", true},
                                          {"chain12", true}, {"arm7", true},
                                          {"servo humanoid", false}};
  struct Setting {
    const CoupledSubject* s;
    double fn, zeta, h;
  };
  std::vector<Setting> settings;
  for (const CoupledSubject& s : subjects) {
    for (double fn : {10.0, 30.0, 100.0}) {
      for (double zeta : {0.0, 0.2, 0.7}) {
        for (double h : {1e-3, 2e-3, 5e-3, 10e-3}) {
          if (opt.smoke && (s.name != "chain3" || fn != 30 || zeta != 0.2)) continue;
          settings.push_back({&s, fn, zeta, h});
        }
      }
    }
  }

  std::vector<Part5Row> rows(settings.size());
  OnEveryCore(settings.size(), [&](size_t i) {
    const Setting& t = settings[i];
    rows[i] = RunSetting(*t.s, t.fn, t.zeta, t.h);
  });
  return rows;
}

}  // namespace mjpos::bench
