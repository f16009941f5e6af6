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

// Part 6 of mjpos_bench, torque limits: with a forcerange on every servo, how often and by how
// much the force each step applied (mjData.actuator_force_step) leaves the range, under stock
// `implicit`, with the flag, and in the weighted mode. The servo humanoid (contact on) tracks
// sinusoidal targets; the finger squeeze holds the box with a squeeze twice its range. Euler's
// applied actuator force is the explicit, clamped one, so it never leaves the range.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "benchmark/mjpos_bench.h"
#include "support/models.h"
#include "support/one_dof.h"

namespace mjpos::bench {
namespace {

constexpr double kH = 0.005;
constexpr double kSeconds = 2;

struct Scheme {
  const char* name;
  bool flag, weighted;
};
const Scheme kSchemes[] = {
    {"implicit", false, false},
    {"implicit + flag", true, false},
    {"implicit + flag + posweight", true, true},
};

// each actuator limited to +-range[i]
void LimitForces(mjModel* m, const std::vector<double>& range) {
  for (int i = 0; i < m->nu; ++i) {
    m->actuator_forcelimited[i] = 1;
    m->actuator_forcerange[2 * i] = -range[i];
    m->actuator_forcerange[2 * i + 1] = range[i];
  }
}

// one run: steps kSeconds, targets(m, d, t) setting ctrl before each step; the applied forces
// beyond the range counted over all actuator-steps
Part6Row Run(const std::string& subject, double kp, const Scheme& s, mjModel* m,
             void (*targets)(const mjModel*, mjData*, const std::vector<double>&, double)) {
  Part6Row row{subject, s.name, kp, true, 0, 0, 0, 0};
  SetEnable(m, mjENBL_IMPLICITPOS, s.flag);
  SetEnable(m, mjENBL_POSWEIGHT, s.weighted);
  mjData* d = mj_makeData(m);
  mj_forward(m, d);
  HoldPose(m, d);
  std::vector<double> hold(d->ctrl, d->ctrl + m->nu);
  double excess_sum = 0;
  int steps = static_cast<int>(std::lround(kSeconds / m->opt.timestep));
  for (int t = 0; t < steps && row.stable; ++t) {
    targets(m, d, hold, d->time);
    row.stable = StepStable(m, d, 1);
    for (int i = 0; i < m->nu && row.stable; ++i) {
      const mjtNum* range = m->actuator_forcerange + 2 * i;
      double f = d->actuator_force_step[i];
      double excess = std::max({f - range[1], range[0] - f, 0.0}) / range[1];
      row.samples++;
      if (excess > 1e-9) {
        row.beyond++;
        row.max_excess = std::max(row.max_excess, excess);
        excess_sum += excess;
      }
    }
  }
  row.mean_excess = row.beyond ? excess_sum / row.beyond : 0;
  mj_deleteData(d);
  return row;
}

// humanoid targets: the held pose plus 0.3 rad at 1 Hz, a phase per joint
void Tracking(const mjModel* m, mjData* d, const std::vector<double>& hold, double t) {
  for (int i = 0; i < m->nu; ++i) {
    d->ctrl[i] = hold[i] + 0.3 * std::sin(2 * M_PI * t + 0.7 * i);
  }
}

// finger targets: 1 cm inside the box (ctrl 0, FingerSqueezeXml)
void Squeeze(const mjModel* m, mjData* d, const std::vector<double>&, double) {
  for (int i = 0; i < m->nu; ++i) d->ctrl[i] = 0;
}

}  // namespace

std::vector<Part6Row> TorqueLimits(const Options& opt) {
  std::vector<Part6Row> rows;
  for (double kp : {1e2, 1e3, 1e4}) {
    for (const Scheme& s : kSchemes) {
      std::string err;
      mjModel* m = mjpos::LoadWithServos(ModelPath("humanoid/humanoid.xml"), kp, kp / 100, &err);
      if (!m) continue;
      m->opt.timestep = kH;
      m->opt.integrator = mjINT_IMPLICIT;
      LimitForces(m, std::vector<double>(m->nu, 0.1 * kp));  // the force at 0.1 rad of error
      rows.push_back(Run("servo humanoid", kp, s, m, Tracking));
      mj_deleteModel(m);
      if (opt.smoke) break;
    }
    if (opt.smoke) break;
  }
  for (double kp : {1e3, 1e4, 1e5}) {
    for (const Scheme& s : kSchemes) {
      mjModel* m = LoadXmlString(FingerSqueezeXml(kp, kp / 100, kH));
      if (!m) continue;
      LimitForces(m, std::vector<double>(m->nu, 0.5 * 0.01 * kp));  // half the squeeze
      rows.push_back(Run("finger squeeze", kp, s, m, Squeeze));
      mj_deleteModel(m);
      if (opt.smoke) break;
    }
    if (opt.smoke) break;
  }
  return rows;
}

}  // namespace mjpos::bench
