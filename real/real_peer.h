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

// A real model's run (real/models.h, RunReal) as a job for upstream's native build (peer/peer.h):
// the real_peer_test's and mjpos_real_table's side of upstream's `discrete`.

#ifndef MJPOS_REAL_REAL_PEER_H_
#define MJPOS_REAL_REAL_PEER_H_

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include "peer/peer.h"
#include "real/models.h"
#include "support/motion.h"

namespace mjpos::real {

// RunReal's run of m (r from dir, with its servos made by MakeRealServos) under `integrator` at
// timestep h for `steps` steps (-1: kMotionSeconds): r's file, m's servos as edits
// (peer::ServoEdits), keyframe 0 if m has one, the command's controls (MotionControls, as rows
// repeated every k steps where they repeat) and kMotionVmax as the job's vmax.
inline peer::Json RealJob(const std::string& dir, const RealModel& r, const mjModel* m,
                          const MotionSetting& s, const std::string& integrator, double h,
                          int steps = -1) {
  peer::Json job{{"file", dir + "/" + r.path},
                 {"integrator", integrator},
                 {"timestep", h},
                 {"model", peer::ServoEdits(m)},
                 {"vmax", kMotionVmax}};
  if (m->nkey > 0) job["key"] = 0;
  std::vector<double> ctrl = MotionControls(m, s, h);
  const int nu = m->nu;
  const int all = nu ? static_cast<int>(ctrl.size()) / nu
                     : static_cast<int>(std::lround(kMotionSeconds / h));
  if (steps < 0 || steps > all) steps = all;
  job["steps"] = steps;
  if (nu > 0) job["ctrls"] = peer::ControlRows(ctrl, nu, steps);
  return job;
}

// Whether the peer's result is bounded as RunReal's criterion has it: it compiled, took every
// step, raised no bad-state warning and stayed finite and within vmax (the driver's `stable`).
inline bool PeerBounded(const peer::Json& result, int steps) {
  return !result.contains("error") && result.value("stable", false) &&
         result.value("steps", 0) == steps;
}

}  // namespace mjpos::real

#endif  // MJPOS_REAL_REAL_PEER_H_
