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

// Part 4 of mjpos_bench, throughput at equal accuracy on tracking: the subjects of part 2, every
// servo tracking a sinusoid; for each scheme (stock implicit, backward Euler, weighted) the
// largest timestep whose tracking error against a fine stock reference stays within a bound of
// the motion, and the throughput there.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "benchmark/mjpos_bench.h"
#include "support/one_dof.h"
#include "support/models.h"

namespace mjpos::bench {
namespace {

// Tracking: servo i's target moves as set point + kMotion sin(W t + i), W = kTrackingRatio w_n,
// from the state on that motion at t = 0 (joints at their targets, moving with them).
constexpr double kMotion = 0.1;          // amplitude of the motion (rad)
constexpr double kTrackingRatio = 0.1;   // W / w_n

void SetTargets(const mjModel* m, mjData* d, const std::vector<Servo>& servos, double wn,
                double t) {
  for (size_t i = 0; i < servos.size(); i++) {
    d->ctrl[i] = servos[i].target + kMotion * std::sin(kTrackingRatio * wn * t + i);
  }
}

// Actuated joint positions after each of the first n steps at timestep h of the tracking motion
// (targets set at the start of each step); empty if the run diverged (StepStable).
std::vector<std::vector<double>> Trajectory(mjModel* m, const std::vector<Servo>& servos,
                                            double wn, double h, Scheme s, int n) {
  m->opt.timestep = h;
  SetScheme(m, s);
  mjData* d = mj_makeData(m);
  mj_resetData(m, d);
  for (size_t i = 0; i < servos.size(); i++) {
    int jnt = m->actuator_trnid[2 * i];
    d->qpos[m->jnt_qposadr[jnt]] = servos[i].target + kMotion * std::sin(static_cast<double>(i));
    d->qvel[servos[i].dof] = kMotion * kTrackingRatio * wn * std::cos(static_cast<double>(i));
  }
  std::vector<std::vector<double>> q;
  for (int k = 0; k < n; k++) {
    SetTargets(m, d, servos, wn, k * h);
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

// Tracking error of a scheme at timestep h = j * h_ref: RMS over the steps of the window and
// over the servos of q - q_ref, relative to the motion kMotion; q_ref is the reference trajectory
// (stock at h_ref) at the same times. Infinity if it diverged.
double TrackingError(mjModel* m, const std::vector<Servo>& servos, double wn, Scheme s, int j,
                     double h_ref, const std::vector<std::vector<double>>& ref) {
  int n = std::max(1, static_cast<int>(ref.size()) / j);
  std::vector<std::vector<double>> q = Trajectory(m, servos, wn, j * h_ref, s, n);
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
  return std::sqrt(sum / count) / kMotion;
}

// the largest j of the geometric grid (factor 1.1, from 1 to n_ref) up to which every j meets
// tol, and which also tracks stably for 0.5 s
int LargestWithin(mjModel* m, const std::vector<Servo>& servos, double wn, Scheme s, double tol,
                  double h_ref, const std::vector<std::vector<double>>& ref) {
  std::vector<int> within;
  for (double x = 1; x <= ref.size(); x *= 1.1) {
    int j = static_cast<int>(std::round(x));
    if (!within.empty() && j <= within.back()) continue;
    if (!(TrackingError(m, servos, wn, s, j, h_ref, ref) < tol)) break;
    within.push_back(j);
  }
  // the largest of them that also tracks stably for 0.5 s
  while (!within.empty()) {
    double h = within.back() * h_ref;
    if (!Trajectory(m, servos, wn, h, s, static_cast<int>(std::ceil(0.5 / h))).empty()) break;
    within.pop_back();
  }
  return within.empty() ? 0 : within.back();
}

// the rows of subject `subject` at natural frequency fn and damping ratio zeta, one per bound
std::vector<Part4Row> RunPart4(Subject subject, const std::string& name, double fn, double zeta,
                               const Options& opt) {
  std::vector<Servo> servos;
  mjModel* m = MakeSubject(subject, fn, zeta, &servos);
  std::vector<Part4Row> rows;
  if (!m) return rows;
  // reference: stock at h_ref = window / n_ref over one period of the motion, far inside its
  // accurate range (h w_n = 0.016)
  double wn = 2 * M_PI * fn;
  double window = 2 * M_PI / (kTrackingRatio * wn);
  int n_ref = opt.smoke ? 400 : 4000;
  double h_ref = window / n_ref;
  std::vector<std::vector<double>> ref = Trajectory(m, servos, wn, h_ref, Scheme::kStock, n_ref);
  for (double tol : {0.05, 0.10}) {
    Part4Row row{name, fn, zeta, tol, {0, 0, 0}, {0, 0, 0}};
    for (int s = 0; s < 3; s++) {
      int j = ref.empty() ? 0
                          : LargestWithin(m, servos, wn, static_cast<Scheme>(s), tol, h_ref, ref);
      row.h[s] = j * h_ref;
      if (j > 0) {
        // throughput there: tracking trajectories of 0.5 s, at least 0.2 CPU s
        int steps = std::max(1, static_cast<int>(std::ceil(0.5 / row.h[s])));
        double sim = 0, wall = 0, cpu = 0;
        do {
          double c0 = CpuSeconds();
          auto t0 = std::chrono::steady_clock::now();
          sim += Trajectory(m, servos, wn, row.h[s], static_cast<Scheme>(s), steps).size() *
                 row.h[s];
          wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          cpu += CpuSeconds() - c0;
        } while (cpu < (opt.smoke ? 0 : 0.2));
        row.rate[s] = sim / wall;
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
