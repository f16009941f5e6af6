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

// Part 4 of mjpos_bench, throughput at equal accuracy: the subjects of part 2 with damped servos;
// for each scheme (stock implicit, backward Euler, weighted) the largest timestep whose error
// against a fine stock reference stays within a bound, and the throughput there.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "benchmark/mjpos_bench.h"
#include "servo_report/one_dof.h"
#include "test/models.h"

namespace mjpos::bench {
namespace {

// Actuated joint positions after each of the first n steps at timestep h from InitSubject;
// empty if the run diverged (StepStable).
std::vector<std::vector<double>> Trajectory(mjModel* m, const std::vector<Servo>& servos,
                                            double h, Scheme s, int n) {
  m->opt.timestep = h;
  SetScheme(m, s);
  mjData* d = mj_makeData(m);
  InitSubject(m, d, servos);
  std::vector<std::vector<double>> q;
  for (int k = 0; k < n; k++) {
    if (!mjpos::StepStable(m, d, 1)) {
      q.clear();
      break;
    }
    std::vector<double> row;
    for (const Servo& sv : servos) row.push_back(d->qpos[m->jnt_qposadr[m->dof_jntid[sv.dof]]]);
    q.push_back(row);
  }
  mj_deleteData(d);
  SetScheme(m, Scheme::kStock);
  return q;
}

// Step error of a scheme at timestep h = j * h_ref: RMS over the steps in (0, 20/w_n] (at least
// one) and over the servos of q - q_ref, relative to the initial offset kPerturbation; q_ref is
// the reference trajectory (stock at h_ref) at the same times. Infinity if it diverged.
double StepError(mjModel* m, const std::vector<Servo>& servos, Scheme s, int j, double h_ref,
                 const std::vector<std::vector<double>>& ref) {
  int n = std::max(1, static_cast<int>(ref.size()) / j);
  std::vector<std::vector<double>> q = Trajectory(m, servos, j * h_ref, s, n);
  if (q.empty()) return INFINITY;
  double sum = 0;
  int count = 0;
  for (int k = 0; k < n; k++) {
    const std::vector<double>& r = ref[std::min((k + 1) * j, static_cast<int>(ref.size())) - 1];
    for (size_t i = 0; i < servos.size(); i++) {
      double e = q[k][i] - r[i];
      sum += e * e;
      count++;
    }
  }
  return std::sqrt(sum / count) / kPerturbation;
}

// the largest j of the geometric grid (factor 1.1, from 1 to n_ref) up to which every j meets tol
int LargestWithin(mjModel* m, const std::vector<Servo>& servos, Scheme s, double tol,
                  double h_ref, const std::vector<std::vector<double>>& ref) {
  int best = 0;
  for (double x = 1; x <= ref.size(); x *= 1.1) {
    int j = static_cast<int>(std::round(x));
    if (j <= best) continue;
    if (!(StepError(m, servos, s, j, h_ref, ref) < tol)) break;
    best = j;
  }
  return best;
}

// the rows of subject `subject` at natural frequency fn and damping ratio zeta, one per bound
std::vector<Part4Row> RunPart4(Subject subject, const std::string& name, double fn, double zeta,
                               const Options& opt) {
  std::vector<Servo> servos;
  mjModel* m = MakeSubject(subject, fn, zeta, &servos);
  std::vector<Part4Row> rows;
  if (!m) return rows;
  // reference: stock at h_ref = window / n_ref, far inside its accurate range (h w_n = 0.005)
  double window = 20 / (2 * M_PI * fn);
  int n_ref = opt.smoke ? 400 : 4000;
  double h_ref = window / n_ref;
  std::vector<std::vector<double>> ref = Trajectory(m, servos, h_ref, Scheme::kStock, n_ref);
  for (double tol : {0.05, 0.10}) {
    Part4Row row{name, fn, zeta, tol, {0, 0, 0}, {0, 0, 0}};
    for (int s = 0; s < 3; s++) {
      int j = ref.empty() ? 0 : LargestWithin(m, servos, static_cast<Scheme>(s), tol, h_ref, ref);
      row.h[s] = j * h_ref;
      if (j > 0) {
        // throughput there: 0.5 s trajectories, at least 0.2 CPU s
        m->opt.timestep = row.h[s];
        SetScheme(m, static_cast<Scheme>(s));
        int steps = std::max(1, static_cast<int>(std::ceil(0.5 / row.h[s])));
        double per_cpu;
        SubjectRate(m, servos, steps, opt.smoke ? 0 : 0.2, &row.rate[s], &per_cpu);
        SetScheme(m, Scheme::kStock);
      }
    }
    rows.push_back(row);
  }
  mj_deleteModel(m);
  return rows;
}

}  // namespace

std::vector<Part4Row> EqualAccuracy(const Options& opt) {
  std::vector<Part4Row> rows;
  for (Subject s : {Subject::kServoHumanoid, Subject::kArm7}) {
    for (double fn : {50.0, 100.0, 200.0}) {
      for (double zeta : {0.1, 0.5, 1.0}) {
        if (opt.smoke && (fn != 100.0 || zeta != 0.5 || s != Subject::kArm7)) continue;
        for (const Part4Row& r : RunPart4(s, SubjectName(s), fn, zeta, opt)) rows.push_back(r);
      }
    }
  }
  return rows;
}

}  // namespace mjpos::bench
