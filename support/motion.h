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

// The violent-motion suite: robots whose servos are tuned the way users tune them (each from its
// reflected inertia, one natural frequency, TuneServos) under the commands an RL policy sends,
// across each joint's whole range: a new random target every few tens of ms, a step, tracking.
// Each run is judged against the converged reference (stock at h/N): is it bounded where the
// reference is, and how far is its qpos from the reference's. The tests and the main job share it.

#ifndef MJPOS_SUPPORT_MOTION_H_
#define MJPOS_SUPPORT_MOTION_H_

#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include "support/one_dof.h"  // Scheme

namespace mjpos {

// The suite's settings: the run's length, a hinge's target span where its joint has no range,
// the joint speed beyond which a run counts as diverged, the qpos sampling interval (a multiple
// of every timestep run) and the reference's resolution of the servos (h_ref * 2 pi f_n).
constexpr double kMotionSeconds = 2;
constexpr double kMotionSpan = 1.5;
constexpr double kMotionVmax = 1e4;
constexpr double kMotionSample = 0.01;
constexpr double kMotionRefResolution = 0.2;

// The reference's timestep for h and f_n: h / (10 * 2^k), the first with h_ref * 2 pi f_n at
// most kMotionRefResolution.
double MotionReferenceStep(double h, double fn);

// The commands: a new uniformly random target inside each servo's span every `period` s; one
// step at t = 0 to a random point of the span, held; each target tracking the span's sinusoid
// of period `period`, phase i for servo i.
enum class Command { kRandom, kStep, kTrack };
const char* CommandName(Command c);

// One setting: a subject ("humanoid": MuJoCo's, its motors made servos of gear 1, on its floor or
// with contact off; "humanoid100": MuJoCo's 100 humanoids, made servos the same way; "chainN";
// "arm7"), its servos' f_n (Hz) and zeta, the timestep, the command.
struct MotionSetting {
  std::string subject;
  bool contact = true;
  double fn = 100, zeta = 0, h = 0.005;
  Command command = Command::kRandom;
  double period = 0.04;
  unsigned seed = 0;
};

// One run: bounded (finite, no bad-state warning, every |qvel| <= kMotionVmax to the end), else
// the time it diverged; the largest hinge speed; the hinge positions every kMotionSample s; the
// steps that mj_step took as substeps (the flag's, doc/scope.md) and the forward passes they
// added, counted by mjData.timer[mjTIMER_FORWARD].number: one per step unless substepped.
struct MotionRun {
  bool bounded = false;
  double t_div = 0;
  double peak_speed = 0;
  std::vector<double> samples;
  int steps = 0, substepped = 0;
  long substeps = 0;
};

// The bad-state warnings MuJoCo's reset path raises (bad qpos, qvel, qacc), counted so far.
int BadStateWarnings(const mjData* d);

// Whether a run has diverged after a step: a bad-state warning since `warnings` were counted, a
// non-finite qpos or qvel, or a |qvel| above kMotionVmax.
bool MotionDiverged(const mjModel* m, const mjData* d, int warnings);

// The subject's model with its servos tuned to s.fn and s.zeta; nullptr (and error) if it does
// not load. model_dir: the pristine source's model/; xml: its MJCF text, if given (the servos'
// gains are edits of the compiled model, peer::ServoEdits; empty for humanoid100, whose file
// includes another).
mjModel* LoadMotionSubject(const MotionSetting& s, const std::string& model_dir,
                           std::string* error = nullptr, std::string* xml = nullptr);

// The controls of s's command at timestep h: steps (kMotionSeconds / h) rows of m->nu, row k
// applied before step k; each servo's target inside its span, the same at every timestep (the
// actuators that are not servos on a joint stay 0).
std::vector<double> MotionControls(const mjModel* m, const MotionSetting& s, double h);

// s in words, for tables and failure messages: "subject (contact off), command (period s), f_n
// F Hz, zeta Z, h H ms" (no period for a step).
std::string MotionSettingName(const MotionSetting& s);

// Runs scheme `scheme` of m (from LoadMotionSubject for s) at timestep h under s's command for
// kMotionSeconds from qpos0 (m's timestep and flags are set; MuJoCo's warnings are the caller's).
MotionRun RunMotion(mjModel* m, const MotionSetting& s, Scheme scheme, double h);

// The loop of RunMotion: `steps` steps of m from d's state at m's timestep and flags, row k of
// ctrl (rows of m->nu) applied before step k, judged and sampled the same way.
MotionRun RunMotionFrom(const mjModel* m, mjData* d, const std::vector<double>& ctrl, int steps);

// The RMS over samples and hinges of run against the reference (infinity if either diverged).
double MotionError(const MotionRun& run, const MotionRun& reference);

// One setting measured: the reference (stock at MotionReferenceStep) and whether it is bounded
// there and at half that step; stock, the flag and the weighted mode at h.
struct MotionResult {
  MotionSetting setting;
  bool loaded = false;
  bool reference_bounded = false;
  double h_ref = 0;
  MotionRun reference, stock, flag, weighted;
};
MotionResult MeasureMotion(const MotionSetting& s, const std::string& model_dir);

// Whether a run of error `error` against the reference is judged: the reference at half its
// step (half) moves by at most kMotionResolved of that error; a chaotic run, which any change of
// step sends elsewhere, is not.
constexpr double kMotionResolved = 0.1;
bool MotionJudged(const MotionRun& reference, const MotionRun& half, double error);

// Whether a scheme's error is within the weighted mode's promise of stock's: at most
// kMotionWithinStock times stock_error.
constexpr double kMotionWithinStock = 1.05;
inline bool WithinStock(double error, double stock_error) {
  return error <= kMotionWithinStock * stock_error;
}

// The weighted mode's motion suite (doc/posweight.md, "Under motion"): chains of 2, 4, 7 and 12
// links, arm7, the servo humanoid on its floor and with contact off; f_n 10, 30, 100, 300 Hz;
// zeta 0 (kv 0, <position>'s default), 0.05, 0.3, 1; h 2, 5, 10 ms; random targets every 20 and
// 50 ms, a step, sinusoids of 0.5 s; seed 1.
std::vector<MotionSetting> WeightedMotionSettings();

// One setting of that suite: stock, the flag and the weighted mode at h; with accuracy, where
// stock is bounded, the reference (stock at MotionReferenceStep) and at half its step, and the
// errors of stock and the mode against it. judged: MotionJudged for stock's error.
struct WeightedMotionResult {
  MotionSetting setting;
  bool loaded = false;
  MotionRun stock, flag, weighted;
  bool judged = false;
  double stock_error = 0, weighted_error = 0;
};
WeightedMotionResult MeasureWeightedMotion(const MotionSetting& s, const std::string& model_dir,
                                           bool accuracy);

}  // namespace mjpos

#endif  // MJPOS_SUPPORT_MOTION_H_
