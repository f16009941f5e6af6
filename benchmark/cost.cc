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

// Part 1 of mjpos_bench, cost of the flag: the models with their warm states, the timing with
// Google Benchmark (flag off and on interleaved) and the --profile mode that callgrind runs
// (callgrind.cc).

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <mujoco/mujoco.h>

#include "benchmark/mjpos_bench.h"
#include "support/one_dof.h"
#include "support/models.h"

namespace mjpos::bench {

Case::~Case() {
  mj_deleteData(d);
  mj_deleteModel(m);
}

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

bool WriteState(const std::string& path, const Case& c) {
  std::ofstream f(path, std::ios::binary);
  int header[2] = {c.m->nstack, static_cast<int>(c.state.size())};
  f.write(reinterpret_cast<const char*>(header), sizeof(header));
  f.write(reinterpret_cast<const char*>(c.state.data()), c.state.size() * sizeof(mjtNum));
  return static_cast<bool>(f);
}

namespace {

// The warm state and nstack of m written by WriteState: two ints (nstack, number of mjtNums),
// then the state as in Case::state.
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

// Appends the case of model m (owned from here on; null: nothing) under the implicit integrator,
// warmed up and its stack sized, or with the warm state of opt.profile_state.
void AddCase(Cases* cases, const std::string& name, mjModel* m, const Options& opt) {
  if (!m) return;
  m->opt.integrator = mjINT_IMPLICIT;
  auto c = std::make_unique<Case>();
  c->name = name;
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
    return;
  }
  c->m = m;
  c->nstack_used = m->nstack;
  c->d = mj_makeData(m);
  cases->push_back(std::move(c));
}

// One Google Benchmark run: batches of kBatchSteps steps from the warm state, flag on or off.
void RunStep(benchmark::State& state, Case* c, bool on, int warmup) {
  mjModel* m = c->m;
  mjData* d = c->d;
  SetEnable(m, mjENBL_IMPLICITPOS, on);
  while (state.KeepRunningBatch(kBatchSteps)) {
    RestoreState(m, d, c->state);
    for (int i = 0; i < kBatchSteps; i++) {
      AddCtrlNoise(m, d, i + warmup);
      mj_step(m, d);
    }
  }
  SetEnable(m, mjENBL_IMPLICITPOS, false);
  state.SetItemsProcessed(state.iterations());
}

// Google Benchmark's console reporter, writing to the raw log (not the terminal), which also files
// the time per step of each run under its case and flag. No terminal colours: its output is a
// file. Its context (CPU, caches, load) is replaced by one line: Debian's libbenchmark is built
// without NDEBUG and says "Library was built as DEBUG", which concerns its own timing loop only;
// the code timed is MuJoCo's release build. A run that fails is also said on stderr.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  explicit CollectingReporter(std::ostream* raw) : ConsoleReporter(OO_Tabular) {
    SetOutputStream(raw);
    SetErrorStream(raw);
  }

  bool ReportContext(const Context& context) override {
    name_field_width_ = context.name_field_width;
    printed_header_ = false;
    prev_counters_.clear();
    const benchmark::CPUInfo& cpu = context.cpu_info;
    GetOutputStream() << "timing: Google Benchmark, " << cpu.num_cpus << " CPUs, load "
                      << (cpu.load_avg.empty() ? 0.0 : cpu.load_avg[0])
                      << "; the library's own assertions (Debian's build keeps them) are outside"
                         " the timed MuJoCo code\n";
    return true;
  }

  // the run registered as `name` times case c with the flag `on`
  void Expect(const std::string& name, Case* c, int on) { runs_[name] = {c, on}; }

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type == Run::RT_Iteration && r.error_occurred) {
        std::fprintf(stderr, "mjpos_bench: %s: %s\n", r.benchmark_name().c_str(),
                     r.error_message.c_str());
      }
      if (r.run_type != Run::RT_Iteration || r.error_occurred || r.iterations == 0) continue;
      auto it = runs_.find(r.run_name.function_name);
      if (it == runs_.end()) continue;
      Case* c = it->second.first;
      int on = it->second.second;
      c->cpu[on].push_back(r.cpu_accumulated_time / r.iterations);
      c->wall[on].push_back(r.real_accumulated_time / r.iterations);
    }
    ConsoleReporter::ReportRuns(runs);
    GetOutputStream().flush();  // the log follows the runs (tail -f)
  }

 private:
  std::map<std::string, std::pair<Case*, int>> runs_;  // registered name -> (case, flag)
};

// The terminal's progress: one line as the first run of each model starts.
class Progress {
 public:
  Progress(const Cases& cases, int repetitions) : total_(cases.size()), reps_(repetitions) {}

  // called on entering a run of case c, number i (from 1) of the cases: a line if c is new
  void Enter(const Case* c, size_t i) {
    if (c == last_) return;
    last_ = c;
    std::printf("mjpos_bench: timing %s (%zu/%zu), %d off/on pair%s\n", c->name.c_str(), i,
                total_, reps_, reps_ == 1 ? "" : "s");
    std::fflush(stdout);
  }

 private:
  const Case* last_ = nullptr;
  size_t total_;
  int reps_;
};

}  // namespace

Cases LoadCases(const Options& opt, const std::string& only) {
  auto want = [&](const std::string& name) { return only.empty() || Underscored(name) == only; };
  Cases cases;
  std::string err;
  if (want("humanoid")) AddCase(&cases, "humanoid", LoadFile("humanoid/humanoid.xml"), opt);
  if (want("servo humanoid")) {
    AddCase(&cases, "servo humanoid",
            mjpos::LoadWithServos(ModelPath("humanoid/humanoid.xml"), 100, 10, &err), opt);
  }
  if (want("humanoid100")) {
    AddCase(&cases, "humanoid100", LoadFile("humanoid100/humanoid100.xml"), opt);
  }
  if (want("22_humanoids")) {
    AddCase(&cases, "22_humanoids", LoadFile("humanoid/22_humanoids.xml"), opt);
  }
  if (want("arm7")) AddCase(&cases, "arm7", LoadChain(7, kChainKp, kChainKv, kChainH), opt);
  for (int n : {10, 30, 100, 300}) {
    if (want(Fmt("chain%d", n))) {
      AddCase(&cases, Fmt("chain%d", n), LoadChain(n, kChainKp, kChainKv, kChainH), opt);
    }
  }
  return cases;
}

int Profile(const Options& opt) {
  Cases cases = LoadCases(opt, opt.profile.substr(0, opt.profile.find(':')));
  size_t a = opt.profile.find(':'), b = opt.profile.rfind(':');
  if (cases.size() != 1 || a == b) {
    std::fprintf(stderr, "mjpos_bench: --profile=MODEL:on|off:STEPS, MODEL one of the tables\n");
    return 2;
  }
  Case* c = cases[0].get();
  std::string mode = opt.profile.substr(a + 1, b - a - 1);
  bool on = mode != "off";
  int steps = std::atoi(opt.profile.c_str() + b + 1);
  SetScheme(c->m, mode == "weighted" ? Scheme::kWeighted
                  : on                 ? Scheme::kBackwardEuler
                                       : Scheme::kStock);
  CALLGRIND_START_INSTRUMENTATION;
  for (int done = 0; done < steps; done += kBatchSteps) {
    RestoreState(c->m, c->d, c->state);
    for (int i = 0; i < kBatchSteps && done + i < steps; i++) {
      AddCtrlNoise(c->m, c->d, i + opt.warmup);
      mj_step(c->m, c->d);
    }
  }
  std::printf("mjpos_bench: %s, flag %s, %d steps\n", c->name.c_str(), mode.c_str(), steps);
  return 0;
}

void TimeCases(const Cases& cases, const Options& opt, std::ostream* raw) {
  // interleaved registration: per model off,on,off,on,...
  CollectingReporter reporter(raw);
  Progress progress(cases, opt.repetitions);
  for (size_t i = 0; i < cases.size(); i++) {
    Case* cp = cases[i].get();
    for (int r = 0; r < opt.repetitions; r++) {
      for (int on = 0; on < 2; on++) {
        std::string name =
            Underscored(Fmt("%s/%s/rep%d", cp->name.c_str(), on ? "on" : "off", r));
        reporter.Expect(name, cp, on);
        int warmup = opt.warmup;
        // the progress line before RunStep, outside the timed batches (Google Benchmark starts
        // its timer in the first KeepRunningBatch)
        benchmark::RegisterBenchmark(
            name.c_str(), [cp, on, warmup, &progress, i](benchmark::State& st) {
              progress.Enter(cp, i + 1);
              RunStep(st, cp, on != 0, warmup);
            })->Unit(benchmark::kMicrosecond);
      }
    }
  }
  size_t n = benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();  // their functions refer to `progress`
  std::printf("mjpos_bench: timed %zu runs; Google Benchmark's output in %s\n", n,
              opt.raw_log.c_str());
  std::fflush(stdout);
}

}  // namespace mjpos::bench
