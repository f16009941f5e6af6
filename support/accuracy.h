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

// The accuracy suite of the servo schemes (stock implicit, backward Euler, the weighted mode) on
// coupled models: servos tuned the way robots are tuned, each from its reflected inertia, and the
// classes of input they are held to (step, free decay, tracking at four speeds, load), each
// against a reference run of stock implicit at a timestep 100 times finer. The tests and the
// benchmark share it.

#ifndef MJPOS_SUPPORT_ACCURACY_H_
#define MJPOS_SUPPORT_ACCURACY_H_

#include <random>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include "support/one_dof.h"  // Scheme

namespace mjpos {

//------------------------------ models tuned per joint --------------------------------------------

// A serial chain of n capsule links for the coupled studies: joint i a hinge (axes alternating y
// and z) or, where slide[i], a slide along the link; joint i driven by a position servo with gear
// gear[i]; where tendon >= 0 also a servo on a fixed tendon over joints tendon and tendon + 1
// (coefficients 1 and -0.5) with gear tendon_gear, the last actuator or, where tendon_first, the
// first. Link lengths and masses are given per link; gravity on, contact off, armature
// `armature` on every joint, timestep h. Gains are set by TuneServos.
struct ChainSpec {
  int n = 3;
  std::vector<bool> slide;      // n entries (default: all hinges)
  std::vector<double> gear;     // n entries (default: 1)
  std::vector<double> length;   // n entries (default: 0.2)
  std::vector<double> mass;     // n entries (default: 0.5)
  int tendon = -1;
  bool tendon_first = false;
  double tendon_gear = 1;
  double armature = 0;
};
std::string ChainSpecXml(const ChainSpec& spec, double h);

// The named chains of the tests and the benchmark: "chainN" (N hinges, the defaults), "chain5
// mixed" (slides, gears 0.5 ... 3, unequal links, a tendon servo over joints 1 and 2), "chain8
// mixed" (the same kind over 8 links, armature 1e-3).
ChainSpec NamedChainSpec(const std::string& name);

// A random chain of 2 to 12 links: lengths 0.05 ... 0.4, masses 0.05 ... 2, about one joint in
// five a slide, gears 0.5 ... 3, a fixed-tendon servo in one chain of two, armature 0 or
// 1e-4 ... 1e-2.
ChainSpec RandomChainSpec(std::mt19937* rng);

// A position servo of a tuned model: actuator, the dof it drives (-1 but on a hinge or slide), its
// reflected inertia 1/(m M^-1 m') at qpos0 and its set point (actuator_length at qpos0).
struct TunedServo {
  int actuator;
  int dof;
  double inertia;
  double target;
};

// Tunes every actuator of m with an affine bias (a position servo) to natural frequency fn[i]
// (Hz; one entry for all, or one per actuator) and damping ratio zeta from its reflected inertia
// at qpos0: kp = I w^2, kv = 2 zeta I w, in actuator units. Returns the tuned servos.
std::vector<TunedServo> TuneServos(mjModel* m, const std::vector<double>& fn, double zeta);

//------------------------------ classes of input --------------------------------------------------

// The classes: a step of every set point by +-A; a free decay from joint velocities +-A w_n;
// sinusoidal targets A (sin(W t + phi_i) - sin phi_i) at W/w_n = 0.02, 0.1, 0.3 and 1; a step of
// a constant load (a generalized force +-A k_i on each servo's dof, or gravity where the model
// asks for it). A = kAmplitude, alternating in sign over the servos, phi_i = i.
enum class Input { kStep, kDecay, kTrack002, kTrack01, kTrack03, kTrack1, kLoad };
constexpr Input kInputs[] = {Input::kStep,    Input::kDecay,   Input::kTrack002, Input::kTrack01,
                             Input::kTrack03, Input::kTrack1,  Input::kLoad};
constexpr double kAmplitude = 0.01;
const char* InputName(Input c);

// W / w_n of a tracking input, 0 for the others.
double TrackingRatio(Input c);

// The window of input c for servos of natural frequency wn (rad/s): 20/w_n, or one period of the
// target where longer, at most max_window seconds.
double InputWindow(Input c, double wn, double max_window = 1);

// The servos' joint positions (tendon servos have none) relative to their set points, divided by
// kAmplitude, after each `hold` steps of scheme s at timestep h, over `steps` records, under
// input c; the targets are held over each `hold` steps (1 for the scheme's own run; 100 with
// h / 100 for the reference of a run at h). Empty if the run diverged (a bad-state warning or a
// non-finite state). Gravity is off but for kLoad with gravity_load, where it is the load. m's
// timestep, flags and gravity are restored.
std::vector<double> Response(mjModel* m, const std::vector<TunedServo>& servos, double wn,
                             Input c, Scheme s, double h, int steps, int hold = 1,
                             bool gravity_load = false);

// Whether scheme s keeps m finite and free of bad-state warnings for `seconds` from qpos0,
// released with velocities of +-release * wn alternating over the dofs (the ball-rope tests;
// the caller silences MuJoCo's warnings). m's flags are left set for s.
bool ReleasedStable(mjModel* m, Scheme s, double release, double wn, double seconds);

// RMS over the records of response against the reference (the same length); infinity if either
// is empty.
double ResponseError(const std::vector<double>& response, const std::vector<double>& reference);

// One setting of the suite: the RMS error of stock, backward Euler and the weighted mode at
// timestep h under input c over InputWindow(c, wn, max_window), each against stock at h / 100
// with the same held targets.
struct SchemeErrors {
  double stock, backward_euler, weighted;
};
SchemeErrors CompareSchemes(mjModel* m, const std::vector<TunedServo>& servos, double wn,
                            Input c, double h, bool gravity_load = false, double max_window = 1);

// The exact response of one servo dof of natural frequency wn (rad/s) and damping ratio zeta
// under input c with its targets and load held over each step of h, as Response records it
// (relative to the set point, divided by kAmplitude, the servo's sign +1, phase 0) after each of
// `steps` steps: the continuous system discretized exactly (matrix exponential).
std::vector<double> ExactOneDofResponse(double wn, double zeta, Input c, double h, int steps);

// The ratio the weighted mode is held to: its error over stock's where stock ran (stable), else
// over backward Euler's.
double RatioToBaseline(const SchemeErrors& e);

}  // namespace mjpos

#endif  // MJPOS_SUPPORT_ACCURACY_H_
