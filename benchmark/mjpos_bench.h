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

// Shared declarations of mjpos_bench (benchmark/mjpos_bench.cc): the options, the helpers and
// models every study uses (common.cc), the studies (one file each) and the markdown writer
// (report.cc). main, in mjpos_bench.cc, parses the options and runs the studies in order.

#ifndef MJPOS_BENCHMARK_MJPOS_BENCH_H_
#define MJPOS_BENCHMARK_MJPOS_BENCH_H_

#include <cmath>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include "support/contact.h"  // ContactMetrics
#include "support/models.h"  // Median
#include "support/motion.h"  // MotionResult

// Callgrind's client requests (from Debian's valgrind package); without them, no instruction counts
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define MJPOS_HAVE_CALLGRIND 1
#else
#define MJPOS_HAVE_CALLGRIND 0
#define CALLGRIND_START_INSTRUMENTATION
#endif

namespace mjpos::bench {

constexpr int kBatchSteps = 50;           // steps per timed batch (upstream: 50)
constexpr double kFlagTimestep = 0.005;   // the flag's timestep in part 2
constexpr double kPerturbation = 0.05;    // initial joint offset in parts 2 and 4 (rad)
constexpr double kMinTimestep = 1e-4;     // stock timestep search range in part 2
constexpr double kMaxTimestep = 0.02;
constexpr double kChainKp = 20;           // servo gains and timestep of the chains in part 1
constexpr double kChainKv = 1;
constexpr double kChainH = 0.002;

// The command line (see mjpos_bench.cc).
struct Options {
  std::string out = "benchmark-results.md";
  // Google Benchmark's console output, one line per run (main: default benchmark-raw.log beside
  // out)
  std::string raw_log;
  int repetitions = 10;
  int warmup = 500;
  double sim_seconds = 2;
  double zeta = 0;
  int throughput_reps = 3;
  bool smoke = false;
  bool accuracy_only = false;     // only part 4
  bool posweight_only = false;    // only part 5
  bool torque_only = false;       // only part 6
  bool contact_only = false;      // only part 7
  bool motion_only = false;       // only part 8
  // models whose instructions are counted: all, none or a list
  std::string callgrind = "humanoid,servo_humanoid,humanoid100,arm7,chain10,chain30,chain100";
  std::string profile;            // MODEL:on|off|weighted:STEPS, see Profile
  std::string profile_state;      // warm state for --profile, see WriteState
  std::string profile_contact;    // CASE:on|off:STEPS, see ProfileContact
};

//------------------------------------ common.cc --------------------------------------------------

// printf into a std::string (at most 1023 characters)
std::string Fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));

// a file of the pristine source's model directory
std::string ModelPath(const std::string& rel);

// a model name as on the command line: spaces as '_'
std::string Underscored(std::string name);

// an instruction count, rounded, with thousands separators; n/a if not measured
std::string Count(double x);

// "<model name>, <n> logical CPUs" of this machine, and the MuJoCo version line of the tables
std::string Machine();
std::string Version();

// upstream's add_ctrl_noise (step_benchmark_test.cc)
void AddCtrlNoise(const mjModel* m, mjData* d, int step);

// the number of bad-state warnings (qpos, qvel, qacc) d has raised
int BadWarnings(const mjData* d);

// statistics of a sample besides mjpos::Median (support/models.h): Min and Max need one
double Min(const std::vector<double>& x);
double Max(const std::vector<double>& x);

// CPU time of this process (s)
double CpuSeconds();

// the compiler's default nstack (user_model.cc, 2.2.2) for a compiled model without <size nstack>
long DefaultNstack(const mjModel* m);

// mjpos::ChainXml(n, kp, kv, h) with <size nstack> if nstack > 0; null if it does not compile,
// with the compiler's message in *error if given, else on stderr
mjModel* LoadChain(int n, double kp, double kv, double h, int nstack = 0,
                   std::string* error = nullptr);

// a model file of the pristine source (ModelPath); null with a message on stderr
mjModel* LoadFile(const std::string& rel);

// The MuJoCo stack of a model's implicit step (see ProbeStack).
struct Stack {
  int default_nstack;  // the compiler's choice (or the model's <size nstack>)
  int needed;          // mjData.maxuse_stack
  bool warm_stable;    // no bad-state warning and finite state after the warm-up
};

// Stack (mjtNums) used by `steps` implicit steps with control noise from qpos0, flag off then one
// step with the flag on; runs on a copy of m with a stack large enough for the dense nv*nv
// derivative of mjd_smooth_vel and the nbody*6*nv blocks of mjd_rne_vel. Leaves the final state
// (after the flag-off steps) in *state if given.
Stack ProbeStack(const mjModel* m0, int steps, std::vector<mjtNum>* state);

// the servo subjects of parts 2 and 4
enum class Subject { kServoHumanoid, kArm7 };

// the name of a subject in the tables
std::string SubjectName(Subject s);

struct Servo {
  int dof;
  double inertia;  // reflected inertia 1/(M^-1)_ii at qpos0
  double target;   // servo set point (joint position)
};

// The model of a subject for natural frequency fn, with its servo table; per-joint gains
// kp_i = I_i (2 pi fn)^2, kv_i = 2 zeta I_i (2 pi fn). Null (message on stderr) on failure.
mjModel* MakeSubject(Subject s, double fn, double zeta, std::vector<Servo>* servos);

// the perturbed initial state of a subject: set points held, joints offset by +-kPerturbation
void InitSubject(const mjModel* m, mjData* d, const std::vector<Servo>& servos);

// Simulated seconds per wall-clock and per CPU second of m as it is set (timestep, flags):
// trajectories of `steps` steps from InitSubject, repeated until they took min_cpu CPU seconds.
void SubjectRate(const mjModel* m, const std::vector<Servo>& servos, int steps, double min_cpu,
                 double* per_wall, double* per_cpu);

//------------------------------------ cost.cc: part 1, cost of the flag --------------------------

// A model of part 1 with its warm state and its measurements.
struct Case {
  ~Case();
  std::string name;
  mjModel* m = nullptr;
  mjData* d = nullptr;
  std::vector<mjtNum> state;  // qpos, qvel, act, qacc_warmstart after the warm-up
  Stack stack;
  int nstack_used = 0;
  // seconds of CPU time per step, per repetition: [0] flag off, [1] flag on
  std::vector<double> cpu[2];
  std::vector<double> wall[2];
  double instr[2] = {NAN, NAN};  // instructions per step inside mj_step (callgrind)
  // of them, inside mj_stepForceImplicit (the step's applied force: the mjData *_step outputs)
  double outputs[2] = {NAN, NAN};
};
using Cases = std::vector<std::unique_ptr<Case>>;

// restores the warm state s (Case::state) into d
void RestoreState(const mjModel* m, mjData* d, const std::vector<mjtNum>& s);

// The models of part 1, warmed up (or with the warm state of opt.profile_state), in table order;
// only the one named `only` (as on the command line) if not empty. A model that does not load is
// left out, with a message on stderr.
Cases LoadCases(const Options& opt, const std::string& only);

// The --profile mode: one model, STEPS steps in timed batches from its warm state, callgrind's
// instrumentation switched on just before them. Returns the exit status.
int Profile(const Options& opt);

// Times every case with Google Benchmark (already initialized), flag off and on interleaved,
// opt.repetitions pairs; fills Case::cpu and Case::wall. Google Benchmark's console output goes to
// raw (opt.raw_log, opened by the caller); stdout gets one progress line per model.
void TimeCases(const Cases& cases, const Options& opt, std::ostream* raw);

// the warm state of a case and its nstack, for a --profile_state child
bool WriteState(const std::string& path, const Case& c);

//------------------------------------ callgrind.cc: part 1, instructions -------------------------

// Fills Case::instr and Case::outputs of the cases selected by opt.callgrind, running this
// program under callgrind in --profile mode. Returns the note for the table, empty if nothing was
// selected; *failed if valgrind ran but a run failed.
std::string CountInstructions(const Cases& cases, const Options& opt, bool* failed);

//------------------------------------ stack.cc: part 3, stack of long chains ---------------------

// The chain lengths between which the compiler's default stack stops being enough.
struct StackLimit {
  bool found = false;  // false: chain300 already overflows, or chain600 does not
  int lo = 0, hi = 0;  // the default suffices for chain(lo), not for chain(hi) = chain(lo + 1)
  bool lo_compiles = false, hi_compiles = false;  // with the default stack
  std::string hi_error;  // the compiler's message for chain(hi)
};

// Bisects the smallest chain whose implicit step needs more than the default stack, printing
// each probe.
StackLimit FindStackLimit();

//------------------------------------ stiffness.cc: part 2, equal stiffness ----------------------

// One row of part 2: a subject at one natural frequency.
struct Part2Row {
  std::string subject;
  double fn;
  double kp_min, kp_max;
  double hmax;           // largest stable stock timestep found (0: none)
  bool hmax_clipped;     // stable at the upper end of the search
  bool flag_stable;      // flag stable at kFlagTimestep
  double stock_rate, flag_rate;          // simulated s per wall s
  double stock_rate_cpu, flag_rate_cpu;  // simulated s per CPU s
  double flag_amp, flag_freq;
};

// Part 2: both subjects at f_n = 50, 100, 200 Hz.
std::vector<Part2Row> EqualStiffness(const Options& opt);

//------------------------------------ accuracy.cc: part 4, equal accuracy ------------------------

// One row of part 4: a subject, f_n, zeta and error bound.
struct Part4Row {
  std::string subject;
  double fn, zeta, tol;
  double h[3];     // largest timestep meeting tol, per scheme (0: none)
  double rate[3];  // simulated s per wall s there
};

// Part 4: both subjects at f_n = 50, 100, 200 Hz and zeta = 0.1, 0.5, 1 (smoke: one case).
std::vector<Part4Row> EqualAccuracy(const Options& opt);

//------------------------------------ coupled.cc: part 5, the weighted mode on coupled models ---

// One row of part 5: a subject tuned per joint to f_n and zeta, at timestep h.
struct Part5Row {
  std::string subject;
  double fn, zeta, h, hw;
  double stock, backward_euler, weighted;  // the worst class's RMS error of each (inf: diverged)
  double ratio;                            // the mode's worst ratio to the baseline
  std::string worst;                       // its class
  bool stock_stable;                       // stock ran stably on every class
};

// Part 5: chain3, chain5 mixed, chain12, arm7 and the servo humanoid at f_n = 10, 30, 100 Hz,
// zeta = 0, 0.2, 0.7, h = 1, 2, 5, 10 ms (smoke: chain3 at 30 Hz, zeta 0.2).
std::vector<Part5Row> CoupledAccuracy(const Options& opt);

//------------------------------------ torque.cc: part 6, torque limits ---------------------------

// One row of part 6: a subject at servo gain kp under one scheme, every servo force-limited.
struct Part6Row {
  std::string subject, scheme;
  double kp;
  bool stable;          // no bad-state warning, finite state
  int samples, beyond;  // actuator-steps, and those whose applied force left the range
  double max_excess, mean_excess;  // beyond the bound, as a fraction of it
};

// Part 6: the servo humanoid at kp 1e2, 1e3, 1e4 and the finger squeeze at kp 1e3, 1e4, 1e5
// (kv = kp/100, h = 5 ms, 2 s), each under implicit, the flag and the weighted mode (smoke: one
// row each).
std::vector<Part6Row> TorqueLimits(const Options& opt);

//------------------------------------ contact.cc: part 7, contact --------------------------------

// One row of part 7: a contact model at servo gain kp and damping kv, timestep h, its converged
// reference (stock at h_ref) and each scheme's metrics (support/contact.h).
struct Part7Row {
  std::string model;
  double kp, kv, h, h_ref, seconds;
  ContactMetrics ref, stock, flag, weighted;
};

// Part 7: the gripper holding a box by friction, the standing quadruped (both with <position>'s
// default: kv 0, no armature or joint damping), the finger squeeze and the servo humanoid
// standing, kp 1e3, 1e5, 1e7, kv 0 and kp/100, h 2, 5, 10 ms, for 2 s or as long as the
// reference takes to come to rest (up to 32 s), the metrics over the last 0.5 s; the reference
// once per model, kp and kv, and again at an h whose refsafe changes the model, converged to 1 %
// (smoke: the quadruped at kp 1e5, kv 0, h 5 ms, from 1 s).
std::vector<Part7Row> ContactStudy(const Options& opt);

// The --profile_contact mode: a case of part 7 at rest, then STEPS steps flag on or off under
// callgrind's instrumentation; returns the exit status.
int ProfileContact(const Options& opt);

// One row of part 7's dynamic case: the quadruped dropped 0.1 m (support/contact.h, DropMetrics).
struct Part7DropRow {
  double kp, kv, h, h_ref;
  DropMetrics ref, stock, flag, weighted;
};

// The drop at kp 1e3, 1e5, 1e7, kv 0 and kp/100, h 2, 5, 10 ms, 1 s; the reference once per kp
// and kv (smoke: kp 1e5, kv 1e3, h 5 ms).
std::vector<Part7DropRow> DropStudy(const Options& opt);

//------------------------------------ motion.cc: part 8, violent motion -------------------------

// Part 8: the servo humanoid (contact on and off), chain12 and arm7 at f_n 10 ... 1000 Hz, zeta 0,
// 0.3, 0.7, 1, h 2, 5, 10 ms under random targets every 40 ms, a step and tracking across each
// joint's range, each setting against its reference (support/motion.h), rows grouped by model,
// command and h (smoke: the humanoid on its floor, random targets, 100 Hz, zeta 0.7, 10 ms).
std::vector<MotionResult> MotionStudy(const Options& opt);

// Part 8's held-out grids: A (held out from the first form of the flag's substeps, its
// divergences then chose their third level), B and C (run after those choices; with part 8 and
// the real robots they then chose the steady turn's threshold), D (run after every choice). A
// (seed 2: the
// humanoid on its floor and with contact off, chain12, arm7; f_n 15, 45, 150, 450 Hz; zeta 0.05,
// 0.2, 0.85; h 2.5, 4, 8 ms; random targets every 20 and 35 ms, a step, sinusoids of 0.6 s),
// B (seed 3: those and chain6; f_n 20, 70, 220, 700 Hz; zeta 0, 0.4, 1; h 3, 6, 9 ms; random
// targets every 25 and 45 ms, a step, sinusoids of 0.45 s) and C (seed 4: humanoid100 on its
// floor; f_n 30, 100, 300, 1000 Hz; zeta 0.7; h 5, 10 ms; random targets every 40 ms), D (seed
// 5: the humanoid on its floor and with contact off, chain4, chain8, arm7; f_n 12, 40, 130, 400
// Hz; zeta 0, 0.15, 0.6; h 3.5, 7.5 ms; random targets every 30 ms, a step, sinusoids of 0.55 s).
// The flag alone; the reference (as MeasureMotion's) only where the flag diverges (smoke: one
// setting).
struct HeldOutRow {
  std::string grid;
  MotionSetting setting;
  bool loaded = false;
  MotionRun flag;
  bool reference_bounded = true;  // measured only where the flag diverged
};
std::vector<HeldOutRow> MotionHeldOut(const Options& opt);

// Part 8's suite of the weighted mode (support/motion.h, WeightedMotionSettings), with its
// accuracy against stock where stock is bounded (smoke: one setting).
std::vector<WeightedMotionResult> MotionWeighted(const Options& opt);

//------------------------------------ report.cc: the markdown ------------------------------------

// The title, the run's parameters and the table of part 1 (with its notes and the rst medians).
void WriteCost(std::ostream& md, const Options& opt, const std::string& machine,
               const std::string& version, const Cases& cases, const std::string& callgrind_note);

// The stack table of the cases, the chain limit if found (null: not searched), the sizing note.
void WriteStack(std::ostream& md, const Cases& cases, const StackLimit* limit);

// The table of part 2.
void WriteStiffness(std::ostream& md, const Options& opt, const std::vector<Part2Row>& rows);

// The table of part 4.
void WriteAccuracy(std::ostream& md, const std::vector<Part4Row>& rows);

// The table of part 5 and its summary.
void WriteCoupledAccuracy(std::ostream& md, const std::vector<Part5Row>& rows);

// The table of part 6.
void WriteTorqueLimits(std::ostream& md, const std::vector<Part6Row>& rows);

// The table of part 7 and its summary.
void WriteContact(std::ostream& md, const std::vector<Part7Row>& rows,
                  const std::vector<Part7DropRow>& drops);

// The table of part 8 by model, command and h, and every setting where the flag diverged while
// the reference is bounded.
void WriteMotion(std::ostream& md, const std::vector<MotionResult>& rows);

// The held-out grids: per grid, the settings, where the flag is bounded, where it diverged with
// the reference bounded (each listed), and how often it substepped.
void WriteMotionHeldOut(std::ostream& md, const std::vector<HeldOutRow>& rows);

// The weighted mode's suite: per subject, where stock, the flag and the mode are bounded, where
// the mode diverged with the flag bounded (each listed), and its error against stock's where
// stock is bounded and the reference resolves it.
void WriteMotionWeighted(std::ostream& md, const std::vector<WeightedMotionResult>& rows);

}  // namespace mjpos::bench

#endif  // MJPOS_BENCHMARK_MJPOS_BENCH_H_
