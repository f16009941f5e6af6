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

// Part 2 of mjpos_bench, throughput at equal stiffness: position servos tuned to a natural
// frequency f_n; the largest timestep at which stock implicit is stable (bisected) against the
// flag at h = 5 ms, in simulated seconds per wall-clock second.

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "benchmark/mjpos_bench.h"
#include "support/one_dof.h"
#include "support/models.h"

namespace mjpos::bench {
namespace {

// whether the subject m stays stable for `seconds` at timestep h, flag on or off (StepStable)
bool StableAt(mjModel* m, const std::vector<Servo>& servos, double h, bool on, double seconds) {
  m->opt.timestep = h;
  SetEnable(m, mjENBL_IMPLICITPOS, on);
  mjData* d = mj_makeData(m);
  InitSubject(m, d, servos);
  bool ok = mjpos::StepStable(m, d, static_cast<int>(std::ceil(seconds / h)));
  mj_deleteData(d);
  SetEnable(m, mjENBL_IMPLICITPOS, false);
  return ok;
}

// simulated seconds per wall-clock and per CPU second at timestep h, flag on or off:
// trajectories of `seconds` simulated time from the initial state, repeated until they took
// min_cpu CPU seconds
void Throughput(mjModel* m, const std::vector<Servo>& servos, double h, bool on, double seconds,
                double min_cpu, double* per_wall, double* per_cpu) {
  m->opt.timestep = h;
  SetEnable(m, mjENBL_IMPLICITPOS, on);
  SubjectRate(m, servos, static_cast<int>(std::ceil(seconds / h)), min_cpu, per_wall, per_cpu);
  SetEnable(m, mjENBL_IMPLICITPOS, false);
}

// one hinge under the flag (backward Euler in q and v): per-step amplitude factor and delivered
// frequency (Hz) of the dominant mode with natural frequency fn, damping ratio zeta, timestep h
// (the servo report's one-dof map, unit inertia)
void FlagOneHinge(double fn, double zeta, double h, double* amp, double* freq) {
  double w = 2 * M_PI * fn;
  mjpos::Discrete z = mjpos::OneDofMap(mjINT_IMPLICIT, true, h, 1, w * w, 2 * zeta * w, 0);
  *amp = z.modulus;
  *freq = z.freq_damped;
}

// one row: subject s at natural frequency fn
Part2Row RunPart2(Subject s, const std::string& name, double fn, const Options& opt) {
  Part2Row row{};
  row.subject = name;
  row.fn = fn;
  std::vector<Servo> servos;
  mjModel* m = MakeSubject(s, fn, opt.zeta, &servos);
  if (!m) return row;
  row.kp_min = 1e300;
  row.kp_max = 0;
  for (int i = 0; i < m->nu; i++) {
    row.kp_min = std::min(row.kp_min, m->actuator_gainprm[mjNGAIN * i]);
    row.kp_max = std::max(row.kp_max, m->actuator_gainprm[mjNGAIN * i]);
  }

  // bisect (geometrically) the largest stable stock timestep in [lo, hi]
  double lo = kMinTimestep, hi = kMaxTimestep;
  double tol = opt.smoke ? 1.3 : 1.01;
  bool found = false;
  if (StableAt(m, servos, hi, false, opt.sim_seconds)) {
    row.hmax = hi;
    row.hmax_clipped = true;
  } else {
    auto stable = [&](double h) {
      bool ok = StableAt(m, servos, h, false, opt.sim_seconds);
      found |= ok;
      return ok;
    };
    mjpos::Bisect(stable, INT_MAX, tol, true, &lo, &hi);
    row.hmax = (found || StableAt(m, servos, lo, false, opt.sim_seconds)) ? lo : 0;
  }
  row.flag_stable = StableAt(m, servos, kFlagTimestep, true, opt.sim_seconds);

  // throughput, interleaved stock / flag, median
  std::vector<double> stock, flag, stock_cpu, flag_cpu;
  double min_cpu = opt.smoke ? 0 : 0.3;
  for (int r = 0; r < opt.throughput_reps; r++) {
    double w, c;
    if (row.hmax > 0) {
      Throughput(m, servos, row.hmax, false, opt.sim_seconds, min_cpu, &w, &c);
      stock.push_back(w);
      stock_cpu.push_back(c);
    }
    Throughput(m, servos, kFlagTimestep, true, opt.sim_seconds, min_cpu, &w, &c);
    flag.push_back(w);
    flag_cpu.push_back(c);
  }
  row.stock_rate = stock.empty() ? 0 : Median(stock);
  row.stock_rate_cpu = stock.empty() ? 0 : Median(stock_cpu);
  row.flag_rate = Median(flag);
  row.flag_rate_cpu = Median(flag_cpu);
  FlagOneHinge(fn, opt.zeta, kFlagTimestep, &row.flag_amp, &row.flag_freq);
  mj_deleteModel(m);
  return row;
}

}  // namespace

std::vector<Part2Row> EqualStiffness(const Options& opt) {
  std::vector<Part2Row> rows;
  for (double fn : {50.0, 100.0, 200.0}) {
    for (Subject s : {Subject::kServoHumanoid, Subject::kArm7}) {
      rows.push_back(RunPart2(s, SubjectName(s), fn, opt));
    }
  }
  return rows;
}

}  // namespace mjpos::bench
