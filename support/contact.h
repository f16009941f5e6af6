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

// Contact metrics of a standing or grasping robot and their converged reference: the same model
// under stock at h/N, N doubled until the metrics agree.

#ifndef MJPOS_SUPPORT_CONTACT_H_
#define MJPOS_SUPPORT_CONTACT_H_

#include <string>

#include <mujoco/mujoco.h>

namespace mjpos {

// Over the last `window` seconds of `seconds` from the model's initial state, sampled every
// millisecond: the mean summed normal force of the contacts (mj_contactForce), the mean
// penetration (mean -dist over the contacts), the ripple (standard deviation of the force over
// its mean) and the slip (speed of `body`'s displacement over the window; 0 if body < 0).
// stable: no bad-qpos/qvel/qacc warning, a finite state and contacts throughout the window.
struct ContactMetrics {
  double force = 0, penetration = 0, ripple = 0, slip = 0;
  bool stable = false;
};
ContactMetrics MeasureContact(const mjModel* m, double seconds, double window, int body);

// The converged reference of MeasureContact for the model: stock implicit (flags cleared) at
// h/N, N = 2, 4, ... until force and penetration change by less than `tol` (RelDiff) over three
// successive halvings (N/8 to N), or h/N < hmin; *h_ref the timestep it converged at (0 if it
// did not). Fewer halvings can be fooled: the gripper at kp 1e7, kv 1e5 holds a false rest at
// 250, 125 and 62.5 us (359 N, a stock limit cycle) and the true one from 31 us down (240 N).
ContactMetrics ContactReference(const mjModel* m, double seconds, double window, int body,
                                double tol, double hmin, double* h_ref);

}  // namespace mjpos

#endif  // MJPOS_SUPPORT_CONTACT_H_
