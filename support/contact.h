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

// Contact metrics of a standing or grasping robot, and of a robot dropped onto the floor, and
// their converged references: the same model under stock at h/N, N doubled until the metrics
// agree.

#ifndef MJPOS_SUPPORT_CONTACT_H_
#define MJPOS_SUPPORT_CONTACT_H_

#include <functional>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

namespace mjpos {

// The study's settings, shared by the main job's part 7 and the peer table: the metrics' window
// (the last 0.5 s), the references' convergence (1 %), their smallest timestep and the longest
// run they may take to come to rest.
constexpr double kContactWindow = 0.5;
constexpr double kContactTol = 0.01;
constexpr double kContactHmin = 2.5e-7;
constexpr double kContactMaxSeconds = 32;

// The steps between two samples of MeasureContact at timestep h: one millisecond, at least one.
int ContactStride(double h);

// Over the last `window` seconds of `seconds` from the model's initial state, sampled after every
// step k of the window with k·h a whole number of milliseconds: the mean summed normal force of the
// contacts (mj_contactForce), the mean penetration (mean -dist over the contacts), the ripple
// (standard deviation of the force over its mean) and the slip (speed of `body`'s displacement over
// the window; 0 if body < 0). stable: no bad-qpos/qvel/qacc warning, a finite state and contacts
// throughout the window.
struct ContactMetrics {
  double force = 0, penetration = 0, ripple = 0, slip = 0;
  bool stable = false;
};
ContactMetrics MeasureContact(const mjModel* m, double seconds, double window, int body);

// The metrics of MeasureContact from its samples over the window (summed normal force, mean
// penetration, at least one contact in each) and the held body's displacement over the window.
ContactMetrics ContactMetricsOf(const std::vector<double>& force,
                                const std::vector<double>& penetration, double moved,
                                double window);

// The summed normal force of d's contacts (mj_contactForce) and their mean penetration (0
// without contacts): what both metrics sample.
void ContactSample(const mjModel* m, mjData* d, double* force, double* penetration);

// Raises every positive constraint time constant (solref[0]) of m below 2h to 2h, as MuJoCo's
// integrator safety does for a model stepped at h unless mjDSBL_REFSAFE is set: the constraints
// as the step at h runs them. A contact's solref is mixed from its geoms' before the clamp, so
// this is exact unless one geom's time constant is below 2h and the other's above. Returns
// whether anything changed.
bool ApplyRefsafe(mjModel* m, double h);

// The converged reference of MeasureContact for the model: stock implicit (flags cleared) at
// h/N, with the constraints as the step at h runs them (ApplyRefsafe), N = 2, 4, ... until force
// and penetration change by less than `tol` (RelDiff) over three successive halvings (N/8 to
// N), or h/N < hmin; *h_ref the timestep it converged at (0 if it did not). Fewer halvings can
// be fooled: the gripper at kp 1e7, kv 1e5 holds a false rest at 250, 125 and 62.5 us (359 N,
// a stock limit cycle) and the true one from 31 us down (240 N). The reference must also be at
// rest: at h_ref, its metrics over the window ending at *seconds / 2 agree with those ending at
// *seconds to tol; otherwise *seconds doubles, up to max_seconds (then *h_ref is 0).
ContactMetrics ContactReference(const mjModel* m, double* seconds, double max_seconds,
                                double window, int body, double tol, double hmin,
                                double* h_ref);

// A drop: over `seconds` from the model's initial state, the peak of the summed normal force
// averaged over 10 ms windows (the longest grid step; h must divide 10 ms), the lowest height
// of `body` and its rebound: its highest height after the lowest, minus its height at the end.
// stable: no bad-state warning and a finite state.
struct DropMetrics {
  double peak_force = 0, lowest = 0, rebound = 0;
  bool stable = false;
};
DropMetrics MeasureDrop(const mjModel* m, double seconds, int body);

// The metrics of MeasureDrop from the summed normal force after each step of h and the body's
// height after it.
DropMetrics DropMetricsOf(const std::vector<double>& force, const std::vector<double>& height,
                          double h);

// The converged reference of MeasureDrop, by the rule of ContactReference, on peak force,
// lowest height and rebound.
DropMetrics DropReference(const mjModel* m, double seconds, int body, double tol, double hmin,
                          double* h_ref);

// m under stock implicit with flags cleared and ApplyRefsafe at m's timestep, run at h_run.
mjModel* StockAt(const mjModel* m, double h_run);

// The rule of both references: `measure` (metrics, empty where unstable) of StockAt(m, h/N), N = 2,
// 4, ... until every metric changes by less than tol over three successive halvings or h/N < hmin.
// Returns the last metrics; *h_ref the timestep they converged at, 0 if they did not.
std::vector<double> ConvergedStock(
    const mjModel* m, double tol, double hmin, double* h_ref,
    const std::function<std::vector<double>(const mjModel*)>& measure);

// The models of the contact study (doc/contact.md) at servo gain kp, damping kv and timestep
// h, under implicit. `xml`: the MJCF text (model_dir: the pristine source's model/); servos:
// every motor made a position servo of gear 1 (MakeServos, LoadWithServos) after compiling;
// body: the held body whose slip is measured (the drop: the torso whose height is), or null;
// seconds: the duration to start from (ContactReference doubles it until the reference is at
// rest); lift: the free joint released this
// much above its initial height.
struct ContactCase {
  const char* name;
  std::string (*xml)(const std::string& model_dir, double kp, double kv, double h);
  bool servos;
  const char* body;
  double seconds;
  double lift;
};

// The standing and grasping cases: the gripper holding a box by friction, the standing
// quadruped (both with <position>'s default: kv 0, no armature or joint damping), the finger
// squeeze and the servo humanoid standing.
std::vector<ContactCase> StandingCases();

// The dynamic case: the standing quadruped released 0.1 m above its standing height.
ContactCase DropCase();

// The case's model (nullptr if it does not compile), with *xml its MJCF text if xml is given.
mjModel* LoadContactCase(const ContactCase& c, const std::string& model_dir, double kp,
                         double kv, double h, std::string* xml = nullptr);

}  // namespace mjpos

#endif  // MJPOS_SUPPORT_CONTACT_H_
