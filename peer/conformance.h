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

// One step of this product against one step of upstream's 4.0 build, on the contact- and
// constraint-free in-scope models of the test suite. Used by the conformance tests (which assert
// the tolerances) and by the side-by-side table (which prints what they reach).

#ifndef MJPOS_PEER_CONFORMANCE_H_
#define MJPOS_PEER_CONFORMANCE_H_

#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include "peer/peer.h"
#include "support/models.h"

namespace mjpos::peer {

// A model of ours and what the peer needs to build the same one.
struct Subject {
  std::string name;                  // e.g. "hinge kp=1e5 h=5ms"
  std::string xml;                   // MJCF that both sides compile
  Json edits;                        // mjModel edits after compiling (servos made from motors)
  std::vector<std::string> disable;  // disable flags, by name, set on both sides
  ModelPtr m;                        // ours: compiled, edits and disable flags applied
  bool exact = true;                 // K is the exact derivative off target (not the
                                     // Gauss-Newton term of a site or spatial tendon servo),
                                     // and the forces are affine in the velocity
  double act = 0;                    // the activation of every actuator with dynamics
};

// The conformance models: one hinge servo over a kp grid and joint stiffness alone (h = 5 and
// 2 ms), the 4-link chain and the gear/tendon arm over kp, a rope of 8 ball joints with stiffness,
// the servos on a site, spatial tendons and ball joints (RowServoXml) over kp, the two-finger hand,
// the muscle arm (MuscleArmXml) relaxed and activated over its force,
// the servo humanoid with contact, joint limits and equality constraints disabled. model_dir:
// MuJoCo's model/ directory.
std::vector<Subject> ConformanceSubjects(const std::string& model_dir);

// Velocities after one step from the same state, on each side, and the dense references.
struct OneStep {
  std::vector<double> flag;      // ours: implicit + mjENBL_IMPLICITPOS
  std::vector<double> off;       // ours: implicit, flag off (stock)
  std::vector<double> discrete;  // 4.0: integrator="discrete"
  std::vector<double> implicit;  // 4.0: integrator="implicit"
  // (M - h D + h^2 K) dv/h = f - h K v, solved densely with K and D from central differences of
  // our forces: D with the velocity derivative of the bias (Coriolis/centripetal) force, as our
  // implicit integrator has it, and D without it, as discrete and implicitfast have it.
  std::vector<double> dense_with_bias;
  std::vector<double> dense_without_bias;
  // what our flag's step reports it applied (qfrc_smooth_step + qfrc_constraint), and what it
  // takes to compute the force from a velocity: the start's qvel, mass matrix (dense) and h
  std::vector<double> flag_applied, qvel, mass;
  double timestep = 0;
};

// One step of every subject from its deterministic test state: joint angles and servo targets
// away from rest, and qvel = 0 (at_rest) or a velocity on every dof. One driver run for all.
// With driver_args kWarp the upstream steps are MuJoCo Warp's, and a subject it cannot run has
// them empty.
std::vector<OneStep> StepAll(const std::vector<Subject>& subjects, bool at_rest,
                             const std::string& driver_args = "");

}  // namespace mjpos::peer

#endif  // MJPOS_PEER_CONFORMANCE_H_
