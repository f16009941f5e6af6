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
//
// Prints the tables and writes them as markdown (--out). Our flags (--name=value):
//   --out=FILE          markdown output (default benchmark-results.md)
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
//   --accuracy_only     run part 4 (throughput at equal accuracy) alone and print its table
//   --smoke             tiny run to prove the program works (CI): 1 repetition, 20 warm-up
//                       steps, 0.2 s simulated, coarse bisection, no stack bisection, callgrind
//                       on arm7 only
// Every other flag goes to Google Benchmark (e.g. --benchmark_min_time=0.2, in seconds).

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include <mujoco/mujoco.h>

#include "servo_report/one_dof.h"
#include "test/models.h"

// Callgrind's client requests (from Debian's valgrind package); without them, no instruction counts
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define MJPOS_HAVE_CALLGRIND 1
#else
#define MJPOS_HAVE_CALLGRIND 0
#define CALLGRIND_START_INSTRUMENTATION
#endif

namespace {

constexpr int kBatchSteps = 50;           // steps per timed batch (upstream: 50)
constexpr double kFlagTimestep = 0.005;   // the flag's timestep in part 2
constexpr double kPerturbation = 0.05;    // initial joint offset in part 2 (rad)
constexpr double kMinTimestep = 1e-4;     // stock timestep search range in part 2
constexpr double kMaxTimestep = 0.02;
constexpr double kChainKp = 20;           // servo gains and timestep of the chains in part 1
constexpr double kChainKv = 1;
constexpr double kChainH = 0.002;

struct Options {
  std::string out = "benchmark-results.md";
  int repetitions = 10;
  int warmup = 500;
  double sim_seconds = 2;
  double zeta = 0;
  int throughput_reps = 3;
  bool smoke = false;
  bool accuracy_only = false;     // only part 4, see main
  // models whose instructions are counted: all, none or a list
  std::string callgrind = "humanoid,servo_humanoid,humanoid100,arm7,chain10,chain30,chain100";
  std::string profile;            // MODEL:on|off:STEPS, see main
  std::string profile_state;      // warm state for --profile, see WriteState
};

std::string Fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Fmt(const char* format, ...) {
  char buf[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof(buf), format, args);
  va_end(args);
  return buf;
}

std::string ModelPath(const std::string& rel) { return std::string(MJPOS_MODEL_DIR) + "/" + rel; }

// a model name as on the command line: spaces as '_'
std::string Underscored(std::string name) {
  std::replace(name.begin(), name.end(), ' ', '_');
  return name;
}

// an instruction count, rounded, with thousands separators; n/a if not measured
std::string Count(double x) {
  if (!std::isfinite(x)) return "n/a";
  std::string s = Fmt("%.0f", x);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(i, ",");
  return s;
}

void SetFlag(mjModel* m, bool on) {
  if (on) {
    m->opt.enableflags |= mjENBL_IMPLICITPOS;
  } else {
    m->opt.enableflags &= ~mjENBL_IMPLICITPOS;
  }
}

// upstream's add_ctrl_noise (step_benchmark_test.cc)
void AddCtrlNoise(const mjModel* m, mjData* d, int step) {
  for (int i = 0; i < m->nu; i++) {
    mjtNum center = 0.0;
    mjtNum radius = 1.0;
    const mjtNum* range = m->actuator_ctrlrange + 2 * i;
    if (m->actuator_ctrllimited[i]) {
      center = (range[1] + range[0]) / 2;
      radius = (range[1] - range[0]) / 2;
    }
    radius *= 0.01;
    d->ctrl[i] = center + radius * (2 * mju_Halton(step, i + 2) - 1);
  }
}

int BadWarnings(const mjData* d) {
  return d->warning[mjWARN_BADQPOS].number + d->warning[mjWARN_BADQVEL].number +
         d->warning[mjWARN_BADQACC].number;
}

double Median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  size_t n = x.size();
  if (n == 0) return NAN;
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}
double Min(const std::vector<double>& x) { return *std::min_element(x.begin(), x.end()); }
double Max(const std::vector<double>& x) { return *std::max_element(x.begin(), x.end()); }

std::string g_last_error;  // of the last quiet LoadChain

// the compiler's default nstack (user_model.cc, 2.2.2) for a compiled model without <size nstack>
long DefaultNstack(const mjModel* m) {
  long a = m->njmax + m->neq + m->nv;
  return std::max<long>(1000, 5 * a * a + 20 * (m->nq + m->nv + m->nu + m->na + m->nbody +
                                                m->njnt + m->ngeom + m->nsite + m->neq +
                                                m->ntendon + m->nwrap));
}

// mjpos::ChainXml(n, ...) compiled through a VFS. Debian's tinyxml2 stops parsing at element
// depth 100 (XML_ELEMENT_DEPTH_EXCEEDED), which a serial chain of about 97 links reaches, so the
// nested bodies are split into <include> files of kSegment links each: MuJoCo parses every
// included file on its own and splices it in, so no single document is deep.
mjModel* LoadChain(int n, double kp, double kv, double h, int nstack = 0, bool quiet = false) {
  constexpr int kSegment = 40;
  std::istringstream in(mjpos::ChainXml(n, kp, kv, h));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  auto trimmed = [](const std::string& s) { return s.substr(s.find_first_not_of(' ')); };
  // body k opens at lines[open[k]] and holds lines up to the next body; closes are in order
  std::vector<size_t> open;
  size_t first_close = lines.size();
  for (size_t i = 0; i < lines.size(); i++) {
    if (lines[i].find_first_not_of(' ') == std::string::npos) continue;
    std::string t = trimmed(lines[i]);
    if (t.rfind("<body", 0) == 0) open.push_back(i);
    if (t == "</body>" && first_close == lines.size()) first_close = i;
  }
  if (open.size() != static_cast<size_t>(n)) return nullptr;
  std::vector<std::pair<std::string, std::string>> files;
  std::string main;
  for (size_t i = 0; i < open[0]; i++) {
    main += lines[i] + "\n";
    if (i == 0 && nstack > 0) main += Fmt("  <size nstack=\"%d\"/>\n", nstack);
  }
  main += "<include file=\"seg0.xml\"/>\n";
  for (size_t i = first_close + n; i < lines.size(); i++) main += lines[i] + "\n";
  files.push_back({"model.xml", main});
  for (int s = 0; s * kSegment < n; s++) {
    int b0 = s * kSegment, b1 = std::min(n, b0 + kSegment);
    std::string seg = "<mujocoinclude>\n";
    size_t end = b1 < n ? open[b1] : first_close;
    for (size_t i = open[b0]; i < end; i++) seg += lines[i] + "\n";
    if (b1 < n) seg += Fmt("<include file=\"seg%d.xml\"/>\n", s + 1);
    for (int k = b0; k < b1; k++) seg += "</body>\n";
    seg += "</mujocoinclude>\n";
    files.push_back({Fmt("seg%d.xml", s), seg});
  }
  char err[1000] = "";
  mjVFS vfs;
  mj_defaultVFS(&vfs);
  for (auto& f : files) {
    mj_makeEmptyFileVFS(&vfs, f.first.c_str(), f.second.size());
    int id = mj_findFileVFS(&vfs, f.first.c_str());
    std::memcpy(vfs.filedata[id], f.second.data(), f.second.size());
  }
  mjModel* m = mj_loadXML("model.xml", &vfs, err, sizeof(err));
  mj_deleteVFS(&vfs);
  if (!m && !quiet) std::fprintf(stderr, "mjpos_bench: chain%d does not compile: %s\n", n, err);
  if (!m && quiet) g_last_error = err;
  return m;
}

mjModel* LoadFile(const std::string& rel) {
  char err[1000] = "";
  mjModel* m = mj_loadXML(ModelPath(rel).c_str(), nullptr, err, sizeof(err));
  if (!m) std::fprintf(stderr, "mjpos_bench: %s: %s\n", rel.c_str(), err);
  return m;
}

//------------------------------------ stack ------------------------------------------------------

// Stack (mjtNums) used by `steps` implicit steps with control noise from qpos0, flag off then one
// step with the flag on; runs on a copy of m with a stack large enough for the dense nv*nv
// derivative of mjd_smooth_vel and the nbody*6*nv blocks of mjd_rne_vel. Leaves the final state
// (after the flag-off steps) in *state if given.
struct Stack {
  int default_nstack;  // the compiler's choice (or the model's <size nstack>)
  int needed;          // mjData.maxuse_stack
  bool warm_stable;    // no bad-state warning and finite state after the warm-up
};

Stack ProbeStack(const mjModel* m0, int steps, std::vector<mjtNum>* state) {
  Stack s;
  s.default_nstack = m0->nstack;
  mjModel* m = mj_copyModel(nullptr, m0);
  long nv = m->nv, nbody = m->nbody;
  long big = m0->nstack + 2 * (7 * nv * nv + 18 * nbody * nv) + 100000;
  m->nstack = static_cast<int>(std::min<long>(big, 1L << 30));
  mjData* d = mj_makeData(m);
  SetFlag(m, false);
  for (int i = 0; i < steps; i++) {
    AddCtrlNoise(m, d, i);
    mj_step(m, d);
  }
  s.warm_stable = BadWarnings(d) == 0;
  for (int i = 0; i < m->nq; i++) s.warm_stable &= std::isfinite(d->qpos[i]);
  for (int i = 0; i < m->nv; i++) s.warm_stable &= std::isfinite(d->qvel[i]);
  if (state) {
    state->assign(d->qpos, d->qpos + m->nq);
    state->insert(state->end(), d->qvel, d->qvel + m->nv);
    state->insert(state->end(), d->act, d->act + m->na);
    state->insert(state->end(), d->qacc_warmstart, d->qacc_warmstart + m->nv);
  }
  mjData* d2 = mj_copyData(nullptr, m, d);
  SetFlag(m, true);
  AddCtrlNoise(m, d2, steps);
  mj_step(m, d2);
  s.needed = std::max(d->maxuse_stack, d2->maxuse_stack);
  mj_deleteData(d2);
  mj_deleteData(d);
  mj_deleteModel(m);
  return s;
}

//------------------------------------ part 1: cost of the flag -----------------------------------

struct Case {
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
};

void RestoreState(const mjModel* m, mjData* d, const std::vector<mjtNum>& s) {
  const mjtNum* p = s.data();
  mju_copy(d->qpos, p, m->nq);
  p += m->nq;
  mju_copy(d->qvel, p, m->nv);
  p += m->nv;
  mju_copy(d->act, p, m->na);
  p += m->na;
  mju_copy(d->qacc_warmstart, p, m->nv);
}

void RunStep(benchmark::State& state, Case* c, bool on, int warmup) {
  mjModel* m = c->m;
  mjData* d = c->d;
  SetFlag(m, on);
  while (state.KeepRunningBatch(kBatchSteps)) {
    RestoreState(m, d, c->state);
    for (int i = 0; i < kBatchSteps; i++) {
      AddCtrlNoise(m, d, i + warmup);
      mj_step(m, d);
    }
  }
  SetFlag(m, false);
  state.SetItemsProcessed(state.iterations());
}

// registered name -> (case, flag)
struct RunId {
  Case* c;
  int on;
};
std::map<std::string, RunId> g_runs;

class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred || r.iterations == 0) continue;
      auto it = g_runs.find(r.run_name.function_name);
      if (it == g_runs.end()) continue;
      Case* c = it->second.c;
      int on = it->second.on;
      c->cpu[on].push_back(r.cpu_accumulated_time / r.iterations);
      c->wall[on].push_back(r.real_accumulated_time / r.iterations);
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

// The warm state of a case and its nstack, for a --profile_state child: two ints (nstack, number
// of mjtNums), then the state as in Case::state.
bool WriteState(const std::string& path, const Case& c) {
  std::ofstream f(path, std::ios::binary);
  int header[2] = {c.m->nstack, static_cast<int>(c.state.size())};
  f.write(reinterpret_cast<const char*>(header), sizeof(header));
  f.write(reinterpret_cast<const char*>(c.state.data()), c.state.size() * sizeof(mjtNum));
  return static_cast<bool>(f);
}

bool ReadState(const std::string& path, mjModel* m, std::vector<mjtNum>* state) {
  std::ifstream f(path, std::ios::binary);
  int header[2] = {0, 0};
  f.read(reinterpret_cast<char*>(header), sizeof(header));
  if (!f || header[0] <= 0 || header[1] != m->nq + 2 * m->nv + m->na) return false;
  m->nstack = header[0];
  state->resize(header[1]);
  f.read(reinterpret_cast<char*>(state->data()), state->size() * sizeof(mjtNum));
  return static_cast<bool>(f);
}

Case* MakeCase(std::vector<std::unique_ptr<Case>>* cases, const std::string& name, mjModel* m,
               const Options& opt) {
  if (!m) return nullptr;
  m->opt.integrator = mjINT_IMPLICIT;
  auto c = std::make_unique<Case>();
  c->name = name;
  c->m = m;
  if (opt.profile_state.empty()) {
    c->stack = ProbeStack(m, opt.warmup, &c->state);
    // size the stack: the default if it is enough, else 25% above what one step used
    if (c->stack.needed > c->stack.default_nstack) {
      m->nstack = static_cast<int>(1.25 * c->stack.needed);
    }
  } else if (ReadState(opt.profile_state, m, &c->state)) {
    c->stack = Stack{m->nstack, 0, true};
  } else {
    std::fprintf(stderr, "mjpos_bench: %s: no warm state of %s\n", opt.profile_state.c_str(),
                 name.c_str());
    mj_deleteModel(m);
    return nullptr;
  }
  c->nstack_used = m->nstack;
  c->d = mj_makeData(m);
  cases->push_back(std::move(c));
  return cases->back().get();
}

//------------------------------------ part 1: instruction counts ---------------------------------

// For each selected case and flag, the program runs itself under
//   valgrind --tool=callgrind --instr-atstart=no --toggle-collect=mj_step
// in --profile mode: the child reads the case's warm state from a file (no warm-up), switches
// callgrind's instrumentation on and steps one batch of kBatchSteps steps, exactly as a timed
// batch. The collected count is therefore that of the batch's mj_steps alone.

struct CallgrindRun {
  Case* c = nullptr;
  int on = 0;
  std::string state, out, log;  // files
  pid_t pid = 0;
  std::chrono::steady_clock::time_point start;
};

std::string SelfPath() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, n) : "";
}

// the total of a callgrind output file ("totals:" line), or -1
double CallgrindTotal(const std::string& path) {
  std::ifstream f(path);
  double total = -1;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("totals:", 0) == 0) total = std::strtod(line.c_str() + 7, nullptr);
  }
  return total;
}

// starts args[0] (from PATH) with stdout and stderr to log; 0 or the errno
int Spawn(const std::vector<std::string>& args, const std::string& log, pid_t* pid) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int err = posix_spawnp(pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return err;
}

// Fills Case::instr of the cases selected by opt.callgrind, running as many children at a time as
// there are logical CPUs (off and on of a model side by side). Returns the note for the table,
// empty if nothing was selected; *failed if valgrind ran but a run failed.
std::string CountInstructions(const std::vector<std::unique_ptr<Case>>& cases,
                              const Options& opt, bool* failed) {
  *failed = false;
  std::string dir = opt.out.substr(0, opt.out.find_last_of('/') + 1) + "callgrind";
  std::vector<CallgrindRun> runs;
  std::string list = "," + opt.callgrind + ",";
  for (const auto& c : cases) {
    std::string name = Underscored(c->name);
    if (opt.callgrind != "all" && list.find("," + name + ",") == std::string::npos) continue;
    for (int on = 0; on < 2; on++) {
      CallgrindRun r;
      r.c = c.get();
      r.on = on;
      r.state = dir + "/" + name + ".state";
      r.out = Fmt("%s/%s.%s.callgrind.out", dir.c_str(), name.c_str(), on ? "on" : "off");
      r.log = Fmt("%s/%s.%s.log", dir.c_str(), name.c_str(), on ? "on" : "off");
      runs.push_back(r);
    }
  }
  if (runs.empty()) return "";
  if (!MJPOS_HAVE_CALLGRIND) {
    return "Instructions: not counted, mjpos_bench was built without valgrind/callgrind.h "
           "(tools/setup.sh installs valgrind).";
  }
  mkdir(dir.c_str(), 0777);
  for (const CallgrindRun& r : runs) {
    if (r.on == 0 && !WriteState(r.state, *r.c)) {
      std::fprintf(stderr, "mjpos_bench: cannot write %s\n", r.state.c_str());
      *failed = true;
      return "Instructions: not counted (cannot write the warm states).";
    }
  }

  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::printf("mjpos_bench: callgrind, %zu runs, %d at a time, profiles in %s/\n", runs.size(),
              jobs, dir.c_str());
  std::fflush(stdout);
  std::string self = SelfPath();
  auto t0 = std::chrono::steady_clock::now();
  size_t next = 0;
  int running = 0;
  bool missing = false;
  double cpu = 0;  // of the children
  while (true) {
    while (!missing && next < runs.size() && running < jobs) {
      CallgrindRun& r = runs[next++];
      std::vector<std::string> args = {
          "valgrind", "--tool=callgrind", "--instr-atstart=no", "--toggle-collect=mj_step",
          "--callgrind-out-file=" + r.out, self, Fmt("--warmup=%d", opt.warmup),
          Fmt("--profile=%s:%s:%d", Underscored(r.c->name).c_str(), r.on ? "on" : "off",
              kBatchSteps),
          "--profile_state=" + r.state};
      r.start = std::chrono::steady_clock::now();
      int err = Spawn(args, r.log, &r.pid);
      if (err == ENOENT) {
        missing = true;
      } else if (err) {
        std::fprintf(stderr, "mjpos_bench: cannot start valgrind: %s\n", std::strerror(err));
        *failed = true;
      } else {
        running++;
      }
    }
    if (running == 0) break;
    int status;
    rusage usage;
    pid_t pid = wait4(-1, &status, 0, &usage);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (CallgrindRun& r : runs) {
      if (r.pid != pid) continue;
      running--;
      cpu += usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
             1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
      double total = CallgrindTotal(r.out);
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count();
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && total >= 0) {
        r.c->instr[r.on] = total / kBatchSteps;
        std::printf("mjpos_bench: callgrind %s, flag %s: %s instructions per step (%.1f s)\n",
                    r.c->name.c_str(), r.on ? "on" : "off", Count(r.c->instr[r.on]).c_str(),
                    seconds);
      } else {
        std::fprintf(stderr, "mjpos_bench: callgrind run failed, see %s\n", r.log.c_str());
        *failed = true;
      }
      std::fflush(stdout);
    }
  }
  if (missing) {
    std::fprintf(stderr, "mjpos_bench: valgrind not found, no instruction counts\n");
    return "Instructions: not counted, valgrind not found (tools/setup.sh installs it).";
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("mjpos_bench: callgrind took %.1f s (%.1f CPU s)\n", seconds, cpu);
  return Fmt("Instructions per step inside `mj_step`, flag off and on: this program in "
             "`--profile` mode under `valgrind --tool=callgrind --instr-atstart=no "
             "--toggle-collect=mj_step`, from the warm state of the timing (read from a file, no "
             "warm-up under valgrind), instrumentation switched on for one batch of %d steps, as "
             "timed; per step = collected / %d. %zu runs, %d at a time, took %.1f s (%.1f CPU s); "
             "profiles in `%s/`.",
             kBatchSteps, kBatchSteps, runs.size(), jobs, seconds, cpu, dir.c_str()) +
         (*failed ? " A run failed (n/a): see its log there." : "");
}

//------------------------------------ part 2: equal stiffness ------------------------------------

// which model of part 2
enum class Subject { kServoHumanoid, kArm7 };

struct Servo {
  int dof;
  double inertia;  // reflected inertia 1/(M^-1)_ii at qpos0
  double target;   // servo set point (joint position)
};

// The model of part 2 for natural frequency fn, with its servo table; per-joint gains
// kp_i = I_i (2 pi fn)^2, kv_i = 2 zeta I_i (2 pi fn).
mjModel* MakeSubject(Subject s, double fn, double zeta, std::vector<Servo>* servos) {
  mjModel* m = nullptr;
  if (s == Subject::kServoHumanoid) {
    std::string err;
    m = mjpos::LoadServoHumanoid(ModelPath("humanoid/humanoid.xml"), 1, 0, &err);
    if (!m) {
      std::fprintf(stderr, "mjpos_bench: servo humanoid: %s\n", err.c_str());
      return nullptr;
    }
    m->opt.disableflags |= mjDSBL_CONTACT;
  } else {
    m = LoadChain(7, 1, 0, kFlagTimestep);
    if (!m) return nullptr;
  }
  m->opt.integrator = mjINT_IMPLICIT;

  // reflected inertia at qpos0: 1/(M^-1)_ii (the servo report's)
  mjData* d = mj_makeData(m);
  mj_forward(m, d);
  servos->clear();
  double w = 2 * M_PI * fn;
  for (int i = 0; i < m->nu; i++) {
    int jnt = m->actuator_trnid[2 * i];
    int dof = m->jnt_dofadr[jnt];
    Servo sv;
    sv.dof = dof;
    sv.inertia = mjpos::DofReflectedInertia(m, d, dof);
    // set point: middle of the joint range if limited (away from the limits), else qpos0
    const mjtNum* range = m->jnt_range + 2 * jnt;
    sv.target = m->jnt_limited[jnt] ? 0.5 * (range[0] + range[1]) : m->qpos0[m->jnt_qposadr[jnt]];
    servos->push_back(sv);
    double kp = sv.inertia * w * w;
    double kv = 2 * zeta * sv.inertia * w;
    m->actuator_gainprm[mjNGAIN * i] = kp;
    m->actuator_biasprm[mjNBIAS * i + 1] = -kp;
    m->actuator_biasprm[mjNBIAS * i + 2] = -kv;
  }
  mj_deleteData(d);
  return m;
}

// the perturbed initial state of part 2: set points held, joints offset by +-kPerturbation
void InitSubject(const mjModel* m, mjData* d, const std::vector<Servo>& servos) {
  mj_resetData(m, d);
  for (size_t i = 0; i < servos.size(); i++) {
    int jnt = m->actuator_trnid[2 * i];
    int adr = m->jnt_qposadr[jnt];
    d->ctrl[i] = servos[i].target;
    d->qpos[adr] = servos[i].target + (i % 2 ? -kPerturbation : kPerturbation);
  }
}

bool StableAt(mjModel* m, const std::vector<Servo>& servos, double h, bool on, double seconds) {
  m->opt.timestep = h;
  SetFlag(m, on);
  mjData* d = mj_makeData(m);
  InitSubject(m, d, servos);
  bool ok = mjpos::StepStable(m, d, static_cast<int>(std::ceil(seconds / h)));
  mj_deleteData(d);
  SetFlag(m, false);
  return ok;
}

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

// simulated seconds per wall-clock and per CPU second: trajectories of `seconds` simulated time
// from the initial state, repeated until they took min_cpu CPU seconds
void Throughput(mjModel* m, const std::vector<Servo>& servos, double h, bool on, double seconds,
                double min_cpu, double* per_wall, double* per_cpu) {
  m->opt.timestep = h;
  SetFlag(m, on);
  mjData* d = mj_makeData(m);
  int n = static_cast<int>(std::ceil(seconds / h));
  double sim = 0, wall = 0, cpu = 0;
  do {
    InitSubject(m, d, servos);
    auto t0 = std::chrono::steady_clock::now();
    double c0 = CpuSeconds();
    for (int i = 0; i < n; i++) mj_step(m, d);
    cpu += CpuSeconds() - c0;
    wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sim += d->time;
  } while (cpu < min_cpu);
  mj_deleteData(d);
  SetFlag(m, false);
  *per_wall = sim / wall;
  *per_cpu = sim / cpu;
}

// one hinge under the flag (backward Euler in q and v): per-step amplitude factor and delivered
// frequency (Hz) of the dominant mode with natural frequency fn, damping ratio zeta, timestep h
// (the servo report's one-dof map, unit inertia)
void FlagOneHinge(double fn, double zeta, double h, double* amp, double* freq) {
  double w = 2 * M_PI * fn;
  mjpos::Discrete z = mjpos::OneDofMap(mjINT_IMPLICIT, true, h, 1, w * w, 2 * zeta * w, 0);
  *amp = z.modulus;
  *freq = z.freq_damped;
}

//------------------------------------ part 4: equal accuracy ------------------------------------

// The integration schemes compared at equal accuracy.
enum class Scheme { kStock, kBackwardEuler, kWeighted };

void SetScheme(mjModel* m, Scheme s) {
  m->opt.enableflags &= ~(mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT);
  if (s != Scheme::kStock) m->opt.enableflags |= mjENBL_IMPLICITPOS;
  if (s == Scheme::kWeighted) m->opt.enableflags |= mjENBL_POSWEIGHT;
}

// Actuated joint positions after each of the first n steps at timestep h from InitSubject;
// empty if the run diverged (StepStable).
std::vector<std::vector<double>> Trajectory(mjModel* m, const std::vector<Servo>& servos,
                                            double h, Scheme s, int n) {
  m->opt.timestep = h;
  SetScheme(m, s);
  mjData* d = mj_makeData(m);
  InitSubject(m, d, servos);
  std::vector<std::vector<double>> q;
  for (int k = 0; k < n; k++) {
    if (!mjpos::StepStable(m, d, 1)) {
      q.clear();
      break;
    }
    std::vector<double> row;
    for (const Servo& sv : servos) row.push_back(d->qpos[m->jnt_qposadr[m->dof_jntid[sv.dof]]]);
    q.push_back(row);
  }
  mj_deleteData(d);
  SetScheme(m, Scheme::kStock);
  return q;
}

// Step error of a scheme at timestep h = j * h_ref: RMS over the steps in (0, 20/w_n] (at least
// one) and over the servos of q - q_ref, relative to the initial offset kPerturbation; q_ref is
// the reference trajectory (stock at h_ref) at the same times. Infinity if it diverged.
double StepError(mjModel* m, const std::vector<Servo>& servos, Scheme s, int j, double h_ref,
                 const std::vector<std::vector<double>>& ref) {
  int n = std::max(1, static_cast<int>(ref.size()) / j);
  std::vector<std::vector<double>> q = Trajectory(m, servos, j * h_ref, s, n);
  if (q.empty()) return INFINITY;
  double sum = 0;
  int count = 0;
  for (int k = 0; k < n; k++) {
    const std::vector<double>& r = ref[std::min((k + 1) * j, static_cast<int>(ref.size())) - 1];
    for (size_t i = 0; i < servos.size(); i++) {
      double e = q[k][i] - r[i];
      sum += e * e;
      count++;
    }
  }
  return std::sqrt(sum / count) / kPerturbation;
}

struct Part4Row {
  std::string subject;
  double fn, zeta, tol;
  double h[3];     // largest timestep meeting tol, per scheme (0: none)
  double rate[3];  // simulated s per wall s there
};

// the largest j of the geometric grid (factor 1.1, from 1 to n_ref) up to which every j meets tol
int LargestWithin(mjModel* m, const std::vector<Servo>& servos, Scheme s, double tol,
                  double h_ref, const std::vector<std::vector<double>>& ref) {
  int best = 0;
  for (double x = 1; x <= ref.size(); x *= 1.1) {
    int j = static_cast<int>(std::round(x));
    if (j <= best) continue;
    if (!(StepError(m, servos, s, j, h_ref, ref) < tol)) break;
    best = j;
  }
  return best;
}

std::vector<Part4Row> RunPart4(Subject subject, const std::string& name, double fn, double zeta,
                               const Options& opt) {
  std::vector<Servo> servos;
  mjModel* m = MakeSubject(subject, fn, zeta, &servos);
  std::vector<Part4Row> rows;
  if (!m) return rows;
  // reference: stock at h_ref = window / n_ref, far inside its accurate range (h w_n = 0.005)
  double window = 20 / (2 * M_PI * fn);
  int n_ref = opt.smoke ? 400 : 4000;
  double h_ref = window / n_ref;
  std::vector<std::vector<double>> ref = Trajectory(m, servos, h_ref, Scheme::kStock, n_ref);
  for (double tol : {0.05, 0.10}) {
    Part4Row row{name, fn, zeta, tol, {0, 0, 0}, {0, 0, 0}};
    for (int s = 0; s < 3; s++) {
      int j = ref.empty() ? 0 : LargestWithin(m, servos, static_cast<Scheme>(s), tol, h_ref, ref);
      row.h[s] = j * h_ref;
      if (j > 0) {
        // throughput there: 0.5 s trajectories, at least 0.2 CPU s
        m->opt.timestep = row.h[s];
        SetScheme(m, static_cast<Scheme>(s));
        mjData* d = mj_makeData(m);
        int steps = std::max(1, static_cast<int>(std::ceil(0.5 / row.h[s])));
        double sim = 0, wall = 0, cpu = 0;
        do {
          InitSubject(m, d, servos);
          auto t0 = std::chrono::steady_clock::now();
          double c0 = CpuSeconds();
          for (int k = 0; k < steps; k++) mj_step(m, d);
          cpu += CpuSeconds() - c0;
          wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          sim += d->time;
        } while (cpu < (opt.smoke ? 0 : 0.2));
        mj_deleteData(d);
        SetScheme(m, Scheme::kStock);
        row.rate[s] = sim / wall;
      }
    }
    rows.push_back(row);
  }
  mj_deleteModel(m);
  return rows;
}

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

Part2Row RunPart2(Subject s, const std::string& name, double fn, const Options& opt) {
  Part2Row row{};
  row.subject = name;
  row.fn = fn;
  std::vector<Servo> servos;
  mjModel* m = MakeSubject(s, fn, opt.zeta, &servos);
  if (!m) return row;
  row.kp_min = 1e300;
  row.kp_max = 0;
  for (int i = 0; i < m->nu; i++) {
    row.kp_min = std::min(row.kp_min, m->actuator_gainprm[mjNGAIN * i]);
    row.kp_max = std::max(row.kp_max, m->actuator_gainprm[mjNGAIN * i]);
  }

  // bisect (geometrically) the largest stable stock timestep in [lo, hi]
  double lo = kMinTimestep, hi = kMaxTimestep;
  double tol = opt.smoke ? 1.3 : 1.01;
  bool found = false;
  if (StableAt(m, servos, hi, false, opt.sim_seconds)) {
    row.hmax = hi;
    row.hmax_clipped = true;
  } else {
    auto stable = [&](double h) {
      bool ok = StableAt(m, servos, h, false, opt.sim_seconds);
      found |= ok;
      return ok;
    };
    mjpos::Bisect(stable, INT_MAX, tol, true, &lo, &hi);
    row.hmax = (found || StableAt(m, servos, lo, false, opt.sim_seconds)) ? lo : 0;
  }
  row.flag_stable = StableAt(m, servos, kFlagTimestep, true, opt.sim_seconds);

  // throughput, interleaved stock / flag, median
  std::vector<double> stock, flag, stock_cpu, flag_cpu;
  double min_cpu = opt.smoke ? 0 : 0.3;
  for (int r = 0; r < opt.throughput_reps; r++) {
    double w, c;
    if (row.hmax > 0) {
      Throughput(m, servos, row.hmax, false, opt.sim_seconds, min_cpu, &w, &c);
      stock.push_back(w);
      stock_cpu.push_back(c);
    }
    Throughput(m, servos, kFlagTimestep, true, opt.sim_seconds, min_cpu, &w, &c);
    flag.push_back(w);
    flag_cpu.push_back(c);
  }
  row.stock_rate = stock.empty() ? 0 : Median(stock);
  row.stock_rate_cpu = stock.empty() ? 0 : Median(stock_cpu);
  row.flag_rate = Median(flag);
  row.flag_rate_cpu = Median(flag_cpu);
  FlagOneHinge(fn, opt.zeta, kFlagTimestep, &row.flag_amp, &row.flag_freq);
  mj_deleteModel(m);
  return row;
}

//------------------------------------ machine ----------------------------------------------------

std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t p = line.find(':');
      if (p != std::string::npos) return line.substr(p + 2);
    }
  }
  return "unknown";
}

std::string Version() {
  int v = mj_version();
  return Fmt("%d.%d.%d", v / 100, (v / 10) % 10, v % 10);
}

bool ParseOurFlag(const char* arg, Options* opt) {
  auto value = [&](const char* name) -> const char* {
    size_t n = std::strlen(name);
    if (std::strncmp(arg, name, n) == 0 && arg[n] == '=') return arg + n + 1;
    return nullptr;
  };
  const char* v;
  if ((v = value("--out"))) {
    opt->out = v;
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
  } else if (std::strcmp(arg, "--smoke") == 0) {
    opt->smoke = true;
  } else if (std::strcmp(arg, "--accuracy_only") == 0) {
    opt->accuracy_only = true;
  } else {
    return false;
  }
  return true;
}

}  // namespace

// Part 4: the table of throughput at equal accuracy, appended to md.
void EqualAccuracy(const Options& opt, std::ostringstream& md) {
  std::vector<Part4Row> acc;
  for (Subject s : {Subject::kServoHumanoid, Subject::kArm7}) {
    std::string name = s == Subject::kServoHumanoid ? "servo humanoid (contact off)" : "arm7";
    for (double fn : {50.0, 100.0, 200.0}) {
      for (double zeta : {0.1, 0.5, 1.0}) {
        if (opt.smoke && (fn != 100.0 || zeta != 0.5 || s != Subject::kArm7)) continue;
        for (const Part4Row& r : RunPart4(s, name, fn, zeta, opt)) acc.push_back(r);
      }
    }
  }
  md << "\n## Throughput at equal accuracy\n\n";
  md << "The same subjects and servos as above (gains from f_n and zeta), the same initial offsets "
        "of +-" << kPerturbation << " rad. Step error of a scheme at timestep h: RMS, over the "
        "steps in the window 0 < t <= 20/w_n (at least one step, so that a larger step cannot "
        "dilute it) and over the servos, of q - q_ref, relative to the offset; q_ref is stock "
        "implicit at h_ref = window/4000 (h w_n = 0.005). Largest h: on a geometric grid "
        "(factor 1.1) of multiples of h_ref, the largest up to which every h meets the bound. "
        "Throughput: simulated seconds per wall second at that h (0.5 s trajectories, at least "
        "0.2 CPU s). Schemes: stock `implicit`, backward Euler (`implicitpos`), weighted "
        "(`implicitpos` + `posweight`).\n\n";
  md << "| model | f_n (Hz) | zeta | error bound | largest h (ms): stock, BE, weighted | "
        "h ratio: BE / stock, weighted / stock | sim s / wall s: stock, BE, weighted | "
        "throughput: BE / stock, weighted / stock |\n"
        "|---|---|---|---|---|---|---|---|\n";
  for (const Part4Row& r : acc) {
    auto ratio = [&](int s) { return r.rate[0] > 0 ? Fmt("%.2f", r.rate[s] / r.rate[0]) : "n/a"; };
    auto hratio = [&](int s) { return r.h[0] > 0 ? Fmt("%.2f", r.h[s] / r.h[0]) : "n/a"; };
    md << Fmt("| %s | %g | %g | %g %% | %.3f, %.3f, %.3f | ", r.subject.c_str(), r.fn, r.zeta,
              100 * r.tol, 1e3 * r.h[0], 1e3 * r.h[1], 1e3 * r.h[2])
       << hratio(1) << ", **" << hratio(2) << "** | "
       << Fmt("%.1f, %.1f, %.1f | ", r.rate[0], r.rate[1], r.rate[2]) << ratio(1) << ", **"
       << ratio(2) << "** |\n";
  }

}

int main(int argc, char** argv) {
  Options opt;
  std::vector<char*> rest = {argv[0]};
  for (int i = 1; i < argc; i++) {
    if (!ParseOurFlag(argv[i], &opt)) rest.push_back(argv[i]);
  }
  if (opt.accuracy_only) {
    mju_user_warning = [](const char*) {};  // diverging trials are expected
    std::ostringstream md;
    EqualAccuracy(opt, md);
    std::printf("%s", md.str().c_str());
    return 0;
  }
  if (opt.smoke) {
    opt.repetitions = 1;
    opt.warmup = std::min(opt.warmup, 20);
    opt.sim_seconds = std::min(opt.sim_seconds, 0.2);
    opt.throughput_reps = 1;
    if (opt.callgrind == Options().callgrind) opt.callgrind = "arm7";
  }
  int bargc = static_cast<int>(rest.size());
  benchmark::Initialize(&bargc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(bargc, rest.data())) return 2;

  std::string machine = Fmt("%s, %u logical CPUs", CpuModel().c_str(),
                            std::thread::hardware_concurrency());
  std::string version = Fmt("MuJoCo %s (Debian source) + implicitpos patches", Version().c_str());
  std::printf("mjpos_bench: %s; %s\n", machine.c_str(), version.c_str());

  // part 1 models (all, or the one of --profile)
  std::string only;
  if (!opt.profile.empty()) only = opt.profile.substr(0, opt.profile.find(':'));
  auto want = [&](const std::string& name) { return only.empty() || Underscored(name) == only; };
  std::vector<std::unique_ptr<Case>> cases;
  {
    std::string err;
    if (want("humanoid")) MakeCase(&cases, "humanoid", LoadFile("humanoid/humanoid.xml"), opt);
    if (want("servo humanoid")) {
      MakeCase(&cases, "servo humanoid",
               mjpos::LoadServoHumanoid(ModelPath("humanoid/humanoid.xml"), 100, 10, &err), opt);
    }
    if (want("humanoid100")) {
      MakeCase(&cases, "humanoid100", LoadFile("humanoid100/humanoid100.xml"), opt);
    }
    if (want("22_humanoids")) {
      MakeCase(&cases, "22_humanoids", LoadFile("humanoid/22_humanoids.xml"), opt);
    }
    if (want("arm7")) MakeCase(&cases, "arm7", LoadChain(7, kChainKp, kChainKv, kChainH), opt);
    for (int n : {10, 30, 100, 300}) {
      if (want(Fmt("chain%d", n))) {
        MakeCase(&cases, Fmt("chain%d", n), LoadChain(n, kChainKp, kChainKv, kChainH), opt);
      }
    }
  }
  if (!opt.profile.empty()) {
    size_t a = opt.profile.find(':'), b = opt.profile.rfind(':');
    if (cases.size() != 1 || a == b) {
      std::fprintf(stderr, "mjpos_bench: --profile=MODEL:on|off:STEPS, MODEL one of the tables\n");
      return 2;
    }
    Case* c = cases[0].get();
    std::string mode = opt.profile.substr(a + 1, b - a - 1);
    bool on = mode != "off";
    int steps = std::atoi(opt.profile.c_str() + b + 1);
    SetFlag(c->m, on);
    if (mode == "weighted") c->m->opt.enableflags |= mjENBL_POSWEIGHT;
    CALLGRIND_START_INSTRUMENTATION;
    for (int done = 0; done < steps; done += kBatchSteps) {
      RestoreState(c->m, c->d, c->state);
      for (int i = 0; i < kBatchSteps && done + i < steps; i++) {
        AddCtrlNoise(c->m, c->d, i + opt.warmup);
        mj_step(c->m, c->d);
      }
    }
    std::printf("mjpos_bench: %s, flag %s, %d steps\n", c->name.c_str(), mode.c_str(), steps);
    mj_deleteData(c->d);
    mj_deleteModel(c->m);
    return 0;
  }
  if (cases.size() != 9) {
    std::fprintf(stderr, "mjpos_bench: a model did not load\n");
    return 1;
  }

  // instruction counts first, so that the children do not disturb the timing
  bool callgrind_failed;
  std::string callgrind_note = CountInstructions(cases, opt, &callgrind_failed);

  // interleaved registration: per model off,on,off,on,...
  for (auto& c : cases) {
    for (int r = 0; r < opt.repetitions; r++) {
      for (int on = 0; on < 2; on++) {
        std::string name =
            Underscored(Fmt("%s/%s/rep%d", c->name.c_str(), on ? "on" : "off", r));
        g_runs[name] = {c.get(), on};
        Case* cp = c.get();
        int warmup = opt.warmup;
        benchmark::RegisterBenchmark(name.c_str(), [cp, on, warmup](benchmark::State& st) {
          RunStep(st, cp, on != 0, warmup);
        })->Unit(benchmark::kMicrosecond);
      }
    }
  }
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  std::ostringstream md;
  md << "# mjENBL_IMPLICITPOS benchmark results\n\n";
  md << "- machine: " << machine << "\n";
  md << "- source: " << version << "\n";
  md << "- integrator: implicit; Google Benchmark " << opt.repetitions
     << " interleaved off/on repetitions per model, " << opt.warmup
     << " warm-up steps (flag off), batches of " << kBatchSteps
     << " steps from the restored state; times are CPU time per step; instructions per step "
        "inside mj_step from callgrind\n\n";

  // part 1 table
  md << "## Cost of the flag (ms per step)\n\n";
  md << "| model | nv | h (ms) | warm-up stable | flag off: median [min, max] | "
        "flag on: median [min, max] | on/off: median of paired ratios [min, max] | "
        "instr/step off | instr/step on | instr ratio |\n";
  md << "|---|---|---|---|---|---|---|---|---|---|\n";
  std::ostringstream rst;
  double scatter_wall = 0, scatter_cpu = 0;  // largest deviation of a time from its median
  bool any_timed = false, any_counted = false;
  for (auto& c : cases) {
    bool timed = !c->cpu[0].empty() && c->cpu[0].size() == c->cpu[1].size();
    bool counted = std::isfinite(c->instr[0] + c->instr[1]);
    any_counted |= counted;
    std::string instr_ratio = counted ? Fmt("%.4f", c->instr[1] / c->instr[0]) : "n/a";
    std::string instr = Fmt("%s | %s | %s", Count(c->instr[0]).c_str(), Count(c->instr[1]).c_str(),
                            instr_ratio.c_str());
    if (!timed) {
      // e.g. --benchmark_filter=NOTHING: the instruction counts alone
      if (counted) {
        md << Fmt("| %s | %d | %g | %s | n/a | n/a | n/a | %s |\n", c->name.c_str(), c->m->nv,
                  1e3 * c->m->opt.timestep, c->stack.warm_stable ? "yes" : "NO", instr.c_str());
      }
      continue;
    }
    any_timed = true;
    std::vector<double> ratio;
    for (size_t r = 0; r < c->cpu[0].size(); r++) ratio.push_back(c->cpu[1][r] / c->cpu[0][r]);
    for (int on = 0; on < 2; on++) {
      for (double t : c->wall[on]) {
        scatter_wall = std::max(scatter_wall, std::abs(t / Median(c->wall[on]) - 1));
      }
      for (double t : c->cpu[on]) {
        scatter_cpu = std::max(scatter_cpu, std::abs(t / Median(c->cpu[on]) - 1));
      }
    }
    double off = 1e3 * Median(c->cpu[0]), on = 1e3 * Median(c->cpu[1]);
    md << Fmt("| %s | %d | %g | %s | %.4f [%.4f, %.4f] | %.4f [%.4f, %.4f] | %.4f [%.4f, %.4f] | "
              "%s |\n",
              c->name.c_str(), c->m->nv, 1e3 * c->m->opt.timestep,
              c->stack.warm_stable ? "yes" : "NO", off, 1e3 * Min(c->cpu[0]),
              1e3 * Max(c->cpu[0]), on, 1e3 * Min(c->cpu[1]), 1e3 * Max(c->cpu[1]),
              Median(ratio), Min(ratio), Max(ratio), instr.c_str());
    rst << c->name << ":\n\n"
        << ".. csv-table::\n"
        << "   :header: \"timing\", \"implicit\", \"implicit + implicitpos\"\n"
        << "   :widths: auto\n"
        << "   :align: left\n\n"
        << Fmt("   one step (ms), %.3g, %.3g\n", off, on)
        << Fmt("   steps/second, %.0f, %.0f\n\n", 1e3 / off, 1e3 / on);
  }
  md << "\n";
  if (any_timed && opt.repetitions > 1) {
    md << Fmt("Times scatter on a shared machine: in this run the wall-clock time per step of a "
              "repetition strayed up to %.0f%% from its median (CPU time: %.0f%%). ",
              100 * scatter_wall, 100 * scatter_cpu);
    if (any_counted) md << "The instruction ratio, which is deterministic, decides. ";
  }
  md << callgrind_note << "\n";
  md << "\nThe same medians as reStructuredText (style of MuJoCo's 2.3.3 changelog):\n\n```rst\n"
     << rst.str() << "```\n\n";

  // stack table
  md << "## MuJoCo stack per implicit step (mjtNums)\n\n";
  md << "| model | nv | nbody | default nstack | used by one step (maxuse_stack) | "
        "nstack used here |\n|---|---|---|---|---|---|\n";
  for (auto& c : cases) {
    md << Fmt("| %s | %d | %d | %d | %d | %d%s |\n", c->name.c_str(), c->m->nv, c->m->nbody,
              c->stack.default_nstack, c->stack.needed, c->nstack_used,
              c->nstack_used != c->stack.default_nstack ? " (raised)" : "");
  }
  if (!opt.smoke) {
    // smallest chain length whose implicit step needs more than the default stack: compiled with
    // a large <size nstack> (the compiler's own test step would overflow), compared with the
    // default the compiler would have chosen
    auto overflows = [&](int n) {
      int big = static_cast<int>(30L * n * n + 5L * (500 + n) * (500 + n) + 100000);
      mjModel* m = LoadChain(n, kChainKp, kChainKv, kChainH, big);
      if (!m) return false;
      Stack s = ProbeStack(m, 1, nullptr);
      long def = DefaultNstack(m);
      std::printf("stack probe: chain%d nv=%d default nstack=%ld used=%d\n", n, m->nv, def,
                  s.needed);
      mj_deleteModel(m);
      return s.needed > def;
    };
    int lo = 300, hi = 600;
    if (!overflows(lo) && overflows(hi)) {
      while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        (overflows(mid) ? hi : lo) = mid;
      }
      // check: with the default stack, chain(lo) compiles and chain(hi) does not
      mjModel* mlo = LoadChain(lo, kChainKp, kChainKv, kChainH, 0, true);
      std::string lo_err = g_last_error;
      mjModel* mhi = LoadChain(hi, kChainKp, kChainKv, kChainH, 0, true);
      std::string hi_err = mhi ? "" : g_last_error;
      while (!hi_err.empty() && (hi_err.back() == '\n' || hi_err.back() == ' ')) hi_err.pop_back();
      md << Fmt("\nChains (ChainXml, no `<size>`): the default stack suffices up to N = %d; "
                "from N = %d on, one implicit step needs more. Checked by compiling with the "
                "default stack: chain%d %s; chain%d %s%s%s (the compiler's own test step, "
                "mj_step, runs out of stack).\n",
                lo, hi, lo, mlo ? "compiles" : "FAILS", hi, mhi ? "compiles" : "fails: \"",
                hi_err.c_str(), mhi ? "" : "\"");
      if (mlo) mj_deleteModel(mlo);
      if (mhi) mj_deleteModel(mhi);
    }
  }
  md << "\nSizing: `<size nstack=\"S\"/>` in the model, or `m->nstack = S` before `mj_makeData`, "
        "with S at least the used value above (mjData.maxuse_stack after a step with a large "
        "stack); stock 2.2.2's implicit step takes about 7 nv^2 + 18 nbody nv of it "
        "(mjd_smooth_vel's dense nv x nv matrix and mjd_rne_vel's 6 nv blocks).\n\n";

  // part 2; bisection trials that diverge are expected: no warning text (StepStable still sees
  // the warning counters)
  mju_user_warning = [](const char*) {};
  std::vector<Part2Row> rows;
  for (double fn : {50.0, 100.0, 200.0}) {
    rows.push_back(RunPart2(Subject::kServoHumanoid, "servo humanoid (contact off)", fn, opt));
    rows.push_back(RunPart2(Subject::kArm7, "arm7", fn, opt));
  }
  md << "## Throughput at equal stiffness\n\n";
  md << Fmt("Per-joint servo gains kp_i = I_i (2 pi f_n)^2, kv_i = 2 zeta I_i (2 pi f_n), zeta = "
            "%g, I_i = 1/(M^-1)_ii at qpos0 (mj_solveM). Initial state: set points held "
            "(middle of the joint range, or qpos0), joints offset by +-%g rad. Stable: "
            "mjpos::StepStable over %g s simulated. Stock h: largest stable timestep, bisected "
            "geometrically in [%g, %g] s to a factor %g. Throughput: simulated seconds per "
            "wall-clock second and per CPU second, over repeated "
            "%g s trajectories (at least %g CPU s in all), median of %d interleaved "
            "stock/flag measurements; wall time is what a user waits, CPU time is robust "
            "to other load on the machine.\n\n",
            opt.zeta, kPerturbation, opt.sim_seconds, kMinTimestep, kMaxTimestep,
            opt.smoke ? 1.3 : 1.01, opt.sim_seconds, opt.smoke ? 0.0 : 0.3,
            opt.throughput_reps);
  md << "| model | f_n (Hz) | kp range | stock: largest stable h (ms) | flag: stable at 5 ms | "
        "sim s / wall s: stock, flag, flag/stock | sim s / CPU s: stock, flag, flag/stock | "
        "flag @ 5 ms, one hinge: delivered f (Hz), amplitude factor per step |\n"
        "|---|---|---|---|---|---|---|---|\n";
  for (const Part2Row& r : rows) {
    md << Fmt("| %s | %g | %.3g - %.3g | %s%.3f | %s | %.1f, %.1f, **%.2f** | %.1f, %.1f, **%.2f** | "
              "%.1f, %.3f |\n",
              r.subject.c_str(), r.fn, r.kp_min, r.kp_max, r.hmax_clipped ? ">= " : "",
              1e3 * r.hmax, r.flag_stable ? "yes" : "NO", r.stock_rate, r.flag_rate,
              r.stock_rate > 0 ? r.flag_rate / r.stock_rate : NAN, r.stock_rate_cpu,
              r.flag_rate_cpu, r.stock_rate_cpu > 0 ? r.flag_rate_cpu / r.stock_rate_cpu : NAN,
              r.flag_freq, r.flag_amp);
  }
  md << Fmt("\nAt h = 5 ms the flag's trajectory is heavily damped: the frequency it delivers "
            "saturates at pi/(2h) (%.0f Hz at 5 ms), so this table compares stability, not "
            "fidelity.\n", 1 / (4 * kFlagTimestep));

  EqualAccuracy(opt, md);

  std::string text = md.str();
  std::printf("\n%s", text.c_str());
  std::ofstream out(opt.out);
  out << text;
  if (!out) {
    std::fprintf(stderr, "mjpos_bench: cannot write %s\n", opt.out.c_str());
    return 1;
  }
  std::printf("mjpos_bench: wrote %s\n", opt.out.c_str());

  for (auto& c : cases) {
    mj_deleteData(c->d);
    mj_deleteModel(c->m);
  }
  return callgrind_failed ? 1 : 0;
}
