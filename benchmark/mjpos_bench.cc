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

// The benchmark suite of mjENBL_IMPLICITPOS, one program:
//
//  1. Cost of the flag: ms per mj_step under the implicit integrator, flag off and on, in the same
//     process on the same mjModel (m->opt.enableflags toggled), Google Benchmark runs interleaved
//     off,on,off,on,... Each run restores one warmed-up state and times batches of mj_step with
//     small control noise, as upstream's test/benchmark/step_benchmark_test.cc (2.2.2). Beside the
//     times, the instructions per step inside mj_step with the flag off and on (callgrind): the
//     program runs itself under valgrind in --profile mode, one batch from the same warm state.
//  2. Throughput at equal stiffness: position servos tuned to a natural frequency f_n from the
//     reflected inertia at qpos0; the largest timestep at which stock implicit is stable (bisected)
//     against the flag at h = 5 ms, in simulated seconds per wall-clock second.
//  3. Stack: the MuJoCo stack that one implicit step needs (mjData.maxuse_stack) against the
//     compiler's default nstack, and the chain length at which the default stops being enough.
//  4. Throughput at equal accuracy: the subjects of part 2 with damped servos; the largest
//     timestep of each scheme (stock, backward Euler, weighted) within an error bound.
//
// The terminal shows what the program is doing (a line as each phase starts and ends, one per model
// as its timing starts, one per callgrind run) and, at the end, the tables, which it also writes
// as markdown (--out). Google Benchmark's own console output, a line per run (180 in the full
// suite), goes to a log file instead (--raw_log), which the tables name. Our flags (--name=value):
//   --out=FILE          markdown output (default benchmark-results.md)
//   --raw_log=FILE      Google Benchmark's console output (default benchmark-raw.log in the
//                       directory of --out; tools/bench.sh: <build>/benchmark-raw.log)
//   --repetitions=N     interleaved off/on pairs per model (default 10)
//   --warmup=N          warm-up steps before the saved state (default 500)
//   --sim_seconds=T     simulated duration of the stability test and throughput runs (default 2)
//   --zeta=Z            servo damping ratio for part 2, kv = 2 Z I w (default 0)
//   --throughput_reps=N interleaved stock/flag wall-clock runs in part 2 (default 3)
//   --callgrind=all|none|MODEL,...  models of part 1 whose instructions per step are counted
//                       under callgrind (needs valgrind; runs before the timing). Default: all
//                       but 22_humanoids and chain300, whose runs take minutes each
//   --profile=MODEL:on|off|weighted:STEPS  no benchmark: warm up MODEL (name as in the tables,
//                       spaces as '_'), then STEPS timed-batch steps with the flag on or off (or
//                       on with mjENBL_POSWEIGHT), and exit; for
//                       `valgrind --tool=callgrind --toggle-collect=mj_step` (instruction counts).
//                       Callgrind's instrumentation is switched on just before the STEPS steps
//                       (a no-op unless valgrind runs with --instr-atstart=no)
//   --profile_state=FILE  with --profile: the warm state (and nstack) from FILE, written by the
//                       callgrind stage, instead of the warm-up
//   --profile_contact=CASE:on|off:STEPS  as --profile, on a case of part 7 (its name up to " (",
//                       spaces as '_') at kp 1e3, kv 10, h 2 ms, where stock holds them all: 500
//                       steps flag off to rest, then STEPS steps, no control noise (the same
//                       constraints on and off)
//   --accuracy_only     run part 4 (throughput at equal accuracy) alone and print its table
//   --posweight_only    run part 5 (the weighted mode on coupled models) alone and print its table
//   --torque_only       run part 6 (torque limits: the applied force against forcerange) alone
//   --contact_only      run part 7 (contact against the converged reference) alone
//   --motion_only       run part 8 (violent motion against the converged reference) alone
//   --smoke             tiny run to prove the program works (CI): 1 repetition, 20 warm-up
//                       steps, 0.2 s simulated, coarse bisection, no stack bisection, callgrind
//                       on arm7 only
// Every other flag goes to Google Benchmark (e.g. --benchmark_min_time=0.2, in seconds).
//
// The files: mjpos_bench.h (what the files share), common.cc (helpers, models, stack probe, servo
// subjects), cost.cc (part 1: models, timing, --profile), callgrind.cc (part 1: instruction
// counts), stiffness.cc (part 2), stack.cc (part 3: chain length limit), accuracy.cc (part 4),
// coupled.cc (part 5), torque.cc (part 6), contact.cc (part 7), motion.cc (part 8), report.cc
// (the markdown), this file (options and the order of the studies).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <mujoco/mujoco.h>

#include "benchmark/mjpos_bench.h"

namespace mjpos::bench {
namespace {

// Reads one of our flags (--name=value) into *opt; false if arg is not ours.
bool ParseOurFlag(const char* arg, Options* opt) {
  auto value = [&](const char* name) -> const char* {
    size_t n = std::strlen(name);
    if (std::strncmp(arg, name, n) == 0 && arg[n] == '=') return arg + n + 1;
    return nullptr;
  };
  const char* v;
  if ((v = value("--out"))) {
    opt->out = v;
  } else if ((v = value("--raw_log"))) {
    opt->raw_log = v;
  } else if ((v = value("--repetitions"))) {
    opt->repetitions = std::max(1, std::atoi(v));
  } else if ((v = value("--warmup"))) {
    opt->warmup = std::max(0, std::atoi(v));
  } else if ((v = value("--sim_seconds"))) {
    opt->sim_seconds = std::atof(v);
  } else if ((v = value("--zeta"))) {
    opt->zeta = std::atof(v);
  } else if ((v = value("--throughput_reps"))) {
    opt->throughput_reps = std::max(1, std::atoi(v));
  } else if ((v = value("--callgrind"))) {
    opt->callgrind = v;
  } else if ((v = value("--profile"))) {
    opt->profile = v;
  } else if ((v = value("--profile_state"))) {
    opt->profile_state = v;
  } else if ((v = value("--profile_contact"))) {
    opt->profile_contact = v;
  } else if (std::strcmp(arg, "--smoke") == 0) {
    opt->smoke = true;
  } else if (std::strcmp(arg, "--accuracy_only") == 0) {
    opt->accuracy_only = true;
  } else if (std::strcmp(arg, "--posweight_only") == 0) {
    opt->posweight_only = true;
  } else if (std::strcmp(arg, "--torque_only") == 0) {
    opt->torque_only = true;
  } else if (std::strcmp(arg, "--contact_only") == 0) {
    opt->contact_only = true;
  } else if (std::strcmp(arg, "--motion_only") == 0) {
    opt->motion_only = true;
  } else {
    return false;
  }
  return true;
}

// --smoke: the tiny budget of the CI test
void ApplySmoke(Options* opt) {
  opt->repetitions = 1;
  opt->warmup = std::min(opt->warmup, 20);
  opt->sim_seconds = std::min(opt->sim_seconds, 0.2);
  opt->throughput_reps = 1;
  if (opt->callgrind == Options().callgrind) opt->callgrind = "arm7";
}

// No warning text from MuJoCo: the diverging trials of parts 2 and 4 are expected (StepStable
// still sees the warning counters).
void QuietWarnings() { mju_user_warning = [](const char*) {}; }

// Runs a phase of the suite, saying what it is before and how long it took after (wall clock).
void Phase(const char* what, const std::function<void()>& run) {
  std::printf("mjpos_bench: %s ...\n", what);
  std::fflush(stdout);
  auto t0 = std::chrono::steady_clock::now();
  run();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("mjpos_bench: %s: done in %.0f s\n", what, s);
  std::fflush(stdout);
}

// --accuracy_only, --posweight_only, --torque_only, --contact_only and --motion_only: part 4, 5,
// 6, 7 or 8 alone,
// its table on stdout.
int OnePart(const Options& opt) {
  QuietWarnings();
  std::ostringstream md;
  if (opt.accuracy_only) WriteAccuracy(md, EqualAccuracy(opt));
  if (opt.posweight_only) WriteCoupledAccuracy(md, CoupledAccuracy(opt));
  if (opt.torque_only) WriteTorqueLimits(md, TorqueLimits(opt));
  if (opt.contact_only) WriteContact(md, ContactStudy(opt), DropStudy(opt));
  if (opt.motion_only) {
    WriteMotion(md, MotionStudy(opt));
    WriteMotionHeldOut(md, MotionHeldOut(opt));
    WriteMotionWeighted(md, MotionWeighted(opt));
  }
  std::printf("%s", md.str().c_str());
  return 0;
}

// The suite: parts 1 to 8 in this order, then the tables on stdout and in opt.out.
int Suite(const Options& opt, const std::string& machine, const std::string& version) {
  // opened first: a path that cannot be written fails now, not after the callgrind stage
  std::ofstream raw(opt.raw_log);
  if (!raw) {
    std::fprintf(stderr, "mjpos_bench: cannot write %s\n", opt.raw_log.c_str());
    return 1;
  }
  Cases cases = LoadCases(opt, "");
  if (cases.size() != 9) {
    std::fprintf(stderr, "mjpos_bench: a model did not load\n");
    return 1;
  }
  // instruction counts first, so that the children do not disturb the timing; each part says
  // what it does and, when done, how long it took
  bool callgrind_failed;
  std::string callgrind_note;
  Phase("part 1: instructions per step (callgrind)",
        [&]() { callgrind_note = CountInstructions(cases, opt, &callgrind_failed); });
  Phase("part 1: time per step, flag off and on", [&]() { TimeCases(cases, opt, &raw); });
  StackLimit limit;
  if (!opt.smoke) Phase("part 3: stack of long chains", [&]() { limit = FindStackLimit(); });
  QuietWarnings();
  std::vector<Part2Row> stiffness;
  std::vector<Part4Row> accuracy;
  std::vector<Part5Row> coupled;
  std::vector<Part6Row> torque;
  std::vector<Part7Row> contact;
  std::vector<Part7DropRow> drops;
  std::vector<MotionResult> motion;
  std::vector<HeldOutRow> heldout;
  std::vector<WeightedMotionResult> weighted;
  Phase("part 2: throughput at equal stiffness", [&]() { stiffness = EqualStiffness(opt); });
  Phase("part 4: equal accuracy on tracking", [&]() { accuracy = EqualAccuracy(opt); });
  Phase("part 5: the weighted mode on coupled models", [&]() { coupled = CoupledAccuracy(opt); });
  Phase("part 6: torque limits", [&]() { torque = TorqueLimits(opt); });
  Phase("part 7: contact against the converged reference",
        [&]() {
          contact = ContactStudy(opt);
          drops = DropStudy(opt);
        });
  Phase("part 8: violent motion against the converged reference",
        [&]() { motion = MotionStudy(opt); });
  Phase("part 8: the held-out grids", [&]() { heldout = MotionHeldOut(opt); });
  Phase("part 8: the weighted mode under motion", [&]() { weighted = MotionWeighted(opt); });

  std::ostringstream md;
  WriteCost(md, opt, machine, version, cases, callgrind_note);
  WriteStack(md, cases, opt.smoke ? nullptr : &limit);
  WriteStiffness(md, opt, stiffness);
  WriteAccuracy(md, accuracy);
  WriteCoupledAccuracy(md, coupled);
  WriteTorqueLimits(md, torque);
  WriteContact(md, contact, drops);
  WriteMotion(md, motion);
  WriteMotionHeldOut(md, heldout);
  WriteMotionWeighted(md, weighted);
  std::string text = md.str();
  std::printf("\n%s", text.c_str());
  std::ofstream out(opt.out);
  out << text;
  if (!out) {
    std::fprintf(stderr, "mjpos_bench: cannot write %s\n", opt.out.c_str());
    return 1;
  }
  std::printf("mjpos_bench: wrote %s; Google Benchmark's raw output in %s\n", opt.out.c_str(),
              opt.raw_log.c_str());
  return callgrind_failed ? 1 : 0;
}

}  // namespace
}  // namespace mjpos::bench

int main(int argc, char** argv) {
  namespace bench = mjpos::bench;
  bench::Options opt;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; i++) {
    if (!bench::ParseOurFlag(argv[i], &opt)) rest.push_back(argv[i]);
  }
  if (opt.accuracy_only || opt.posweight_only || opt.torque_only || opt.contact_only ||
      opt.motion_only) {
    return bench::OnePart(opt);
  }
  if (opt.smoke) bench::ApplySmoke(&opt);
  if (opt.raw_log.empty()) {
    opt.raw_log = opt.out.substr(0, opt.out.find_last_of('/') + 1) + "benchmark-raw.log";
  }
  int bargc = static_cast<int>(rest.size());
  benchmark::Initialize(&bargc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(bargc, rest.data())) return 2;

  std::string machine = bench::Machine(), version = bench::Version();
  std::printf("mjpos_bench: %s; %s\n", machine.c_str(), version.c_str());
  if (!opt.profile.empty()) return bench::Profile(opt);
  if (!opt.profile_contact.empty()) return bench::ProfileContact(opt);
  return bench::Suite(opt, machine, version);
}
