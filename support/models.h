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

// Servo models shared by the tests, the benchmarks and the tools: generated MJCF and in-memory
// conversions of shipped models. Gains are in actuator units: force = kp*(ctrl - length) - kv*vel.

#ifndef MJPOS_SUPPORT_MODELS_H_
#define MJPOS_SUPPORT_MODELS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>

namespace mjpos {

// owners of MuJoCo's model and data
struct ModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
struct DataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using ModelPtr = std::unique_ptr<mjModel, ModelDeleter>;
using DataPtr = std::unique_ptr<mjData, DataDeleter>;

// Compiles an MJCF string (through a virtual file); nullptr, and the compiler's message in
// *error, if it does not compile.
mjModel* LoadXmlString(const std::string& xml, std::string* error = nullptr);

// One hinge with no gravity, inertia I about its axis (all of it armature), a position servo
// (general actuator: gain kp, bias [0, -kp, -kv]) and timestep h. The body's own inertia about the
// axis is 1e-12 of I; read the exact I from qM.
std::string OneHingeXml(double inertia, double kp, double kv, double h,
                        const std::string& integrator = "implicit");

// As OneHingeXml, but the restoring force is joint stiffness, with joint damping kv, no actuator.
std::string OneHingeSpringXml(double inertia, double stiffness, double damping, double h,
                              const std::string& integrator = "implicit");

// Serial chain of n hinge links (capsules, alternating y and z axes, gravity on, contact off),
// each with a position servo kp, kv and armature 0.01. n = 7 is the "7-dof arm".
std::string ChainXml(int n, double kp, double kv, double h,
                     const std::string& integrator = "implicit");

// A rope of n capsule links (0.1 m, 10 mm radius), each on a ball joint with stiffness
// `stiffness` and damping `damping`, held horizontal at one end and bent by gravity (contact off):
// the scope test of ball-joint springs.
std::string BallRopeXml(int n, double stiffness, double damping, double h,
                        const std::string& integrator = "implicit");

// Servos whose moment is a row on several dofs of one chain, the Gauss-Newton terms of K (gravity
// on, contact off, position servos of gain kp and damping kv, links of 0.2 m with armature 0.01):
// - "site": a Cartesian servo, an arm of three hinges (z, y, y; the elbow bent by 40 degrees at
//   qpos0, off the singular stretched pose) whose tip site is held by three servos on a site
//   transmission with a world refsite, gear x, y and z;
// - "spatial": two hinges (y), a spatial tendon from a world site to each link's tip, a servo on
//   each;
// - "ball": a rope of `links` ball joints (three by default), each held by three servos, gear x,
//   y and z.
std::string RowServoXml(const std::string& kind, double kp, double kv, double h,
                        const std::string& integrator = "implicit", int links = 3);

// Three hinge links (gravity on, contact off) with joint stiffness and damping, servos on j0
// (gear 1) and j1 (gear 2), and a servo on a fixed tendon over j1 and j2 (coefficients 1 and
// -0.5): the arm of the peer suite, every in-scope term of K at once.
std::string GearTendonArmXml(double kp, double kv, double h,
                             const std::string& integrator = "implicit");

// Contact models of the peer suite's contact study; gravity on, a floor, timestep h, servos gain
// kp and damping kv holding their targets. Touch sensors (one per finger or foot) report the
// normal contact force.
// Two slide-joint fingers squeezing a free 8 cm box that rests on the floor; each finger's target
// is 1 cm inside the box, so the squeeze is about kp * 0.01.
std::string FingerSqueezeXml(double kp, double kv, double h,
                             const std::string& integrator = "implicit");
// Five hinges in a tree whose rows of the D pattern (and of qDeriv) have gaps: a root hinge (dof
// 0) with a leaf link (dof 1) and a link (dof 2) that carries two leaves (dofs 3 and 4), so that
// the rows of dofs 2, 3 and 4 are {0, 2, 3, 4}, {0, 2, 3} and {0, 2, 4}. Axes alternate so that
// the velocity derivative couples them; a position servo on each hinge (gain kp, bias
// [0 -kp -kv]), armature 0.01, gravity on, contact off.
std::string BranchedTreeXml(double kp, double kv, double h,
                            const std::string& integrator = "implicit");

// A two-finger hand closed by one tendon across its branches: a palm welded to the world, two
// fingers of two hinges each (proximal and distal phalanges, 4 cm capsules of 20 g, armature
// 1e-4, damping 1e-3) curling toward each other, and one fixed tendon over the four hinges
// (coefficients 1, 0.5 per finger) driven by one position servo: gain kp, bias [0 -kp -kv]. Its
// moment lies on two branches. Gravity on; no geom collides.
std::string TwoFingerHandXml(double kp, double kv, double h,
                             const std::string& integrator = "implicit");
// An arm driven by muscles: a shoulder and an elbow hinge (axis y, limited to +-1.5 rad, armature
// 0.01, damping 0.1) carrying links of 0.3 m / 1 kg and 0.25 m / 0.6 kg, horizontal at qpos0 under
// gravity; an antagonist pair of muscles on each joint (moment arms +-4 cm) and a biarticular pair
// on a fixed tendon over both (3 cm each). Every muscle has peak force `force`, lengthrange the
// joints' range times its arm, operating range 0.9 to 1.5 optimal lengths (at qpos0 each is at
// 1.2, stretched: its passive curve holds the relaxed arm) and its activation dynamics; no geom
// collides.
std::string MuscleArmXml(double force, double h, const std::string& integrator = "implicit");
// A 2.2 kg quadruped (free torso, hip and knee hinges per leg) standing on its servos, which
// hold the bent-knee pose it is drawn in (ctrl = 0); it starts with its feet on the floor. Its
// joints have armature `armature` and damping `damping`.
std::string LeggedXml(double kp, double kv, double h, const std::string& integrator = "implicit",
                      double armature = 0.01, double damping = 0.05);
// A parallel gripper holding a 0.2 kg box (8 cm) in the air by friction (1) against gravity: two
// slide fingers (10 cm boxes of 0.1 kg, armature `armature`) on a fixed palm, each starting 1 mm
// off a face with its target (ctrl 0) 1 cm inside; no floor. The box is body "object".
std::string GripperXml(double kp, double kv, double h, const std::string& integrator = "implicit",
                       double armature = 0);

// The scope test's configurations, one force class or transmission each: a servo of gain `gain`
// (kv 1) on a joint, fixed and spatial tendons on one chain and across branches, a site without
// and with a refsite, a body (adhesion), ball and free joints, a muscle, a clamped forcerange, a
// non-restoring slope, a motor, and joint stiffness `stiffness` on a ball joint, a free joint and
// a hinge. changes:
// whether mjENBL_IMPLICITPOS may change the trajectory (in scope); the rules are those of
// mjd_actuatorPosScope and mjd_jointPosScope.
struct ScopeConfiguration {
  std::string name;
  std::string xml;
  bool changes;
};
std::vector<ScopeConfiguration> ScopeConfigurations(double gain, double stiffness);

// Sets each actuator's ctrl to its current actuator_length (after mj_forward at the current
// state), so that servos hold the current pose.
void HoldPose(const mjModel* m, mjData* d);

// Steps n times; false if the simulation warned about bad qpos, qvel or qacc (MuJoCo's reset
// path) or left a non-finite state. The stability criterion of the tests and benchmarks.
bool StepStable(const mjModel* m, mjData* d, int n);

// The continuous PD servo's unit step response from rest at time t: the solution of
// inertia q'' + kv q' + kp (q - 1) = 0, q(0) = q'(0) = 0.
double PdStepResponse(double inertia, double kp, double kv, double t);

//------------------------------ independent references -------------------------------------------

// -d(qfrc_actuator + qfrc_passive)/dqpos at the state of start by central differences of step
// eps (dense, row-major): the reference for K. The in-scope forces are affine in the positions
// of hinges and slides, so eps only sets the rounding error.
std::vector<double> FiniteDifferenceK(const mjModel* m, const mjData* start, double eps);

// Velocity after one step of backward Euler in q and v from dense row-major nv x nv matrices:
// qvel + h qacc with (mass - h damping + h^2 k_matrix) qacc = force - h k_shift qvel, solved
// by LU with partial pivoting. The reference the engine's step is checked against; k_matrix
// and k_shift are separate so that either term can be dropped.
std::vector<double> BackwardEulerVelocity(int nv, double h, const std::vector<double>& mass,
                                          const std::vector<double>& damping,
                                          const std::vector<double>& k_matrix,
                                          const std::vector<double>& k_shift,
                                          const double* force, const double* qvel);

//------------------------------ servos from motors ------------------------------------------------

// Replaces every actuator of m by a position servo on the same transmission and gear: gain
// type fixed with gain kp, affine bias [0, -kp, -kv], no control or force limits.
void MakeServos(mjModel* m, double kp, double kv);

// MakeServos, and every actuator's gear 1 on the same transmission.
void MakeServosOfGearOne(mjModel* m, double kp, double kv);

// The model at path with every actuator replaced by a position servo of gear 1 on the same
// transmission (MakeServosOfGearOne); nullptr (and error) if the file does not load.
mjModel* LoadWithServos(const std::string& path, double kp, double kv,
                           std::string* error = nullptr);

//------------------------------ numbers -----------------------------------------------------------

// max_i |a_i - b_i| / max_i |b_i|: the relative error of a against the reference b (the
// absolute error if b is 0). The one relative error of the tests, benchmarks and tools.
double RelDiff(const double* a, const double* b, int n);
inline double RelDiff(double a, double b) { return RelDiff(&a, &b, 1); }
inline double RelDiff(const std::vector<double>& a, const std::vector<double>& b) {
  return RelDiff(a.data(), b.data(), static_cast<int>(b.size()));
}

// The median of a sample (NaN for none).
double Median(std::vector<double> x);

// Whether a and b hold the same numbers bit for bit.
bool BitIdentical(const std::vector<mjtNum>& a, const std::vector<mjtNum>& b);

//------------------------------ running -----------------------------------------------------------

// run(i) for i = 0 ... n - 1 on every core, each taking the next i.
void OnEveryCore(size_t n, const std::function<void(size_t)>& run);

}  // namespace mjpos

#endif  // MJPOS_SUPPORT_MODELS_H_
