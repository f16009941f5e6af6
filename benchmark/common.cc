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

// What the studies of mjpos_bench share: formatting, statistics, the models of part 1 and the
// stack probe, the servo subjects of parts 2 and 4.

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <mujoco/mujoco.h>

#include "benchmark/mjpos_bench.h"
#include "support/one_dof.h"
#include "support/models.h"

namespace mjpos::bench {

//------------------------------------ formatting and statistics ----------------------------------

std::string Fmt(const char* format, ...) {
  char buf[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof(buf), format, args);
  va_end(args);
  return buf;
}

std::string ModelPath(const std::string& rel) { return std::string(MJPOS_MODEL_DIR) + "/" + rel; }

std::string Underscored(std::string name) {
  std::replace(name.begin(), name.end(), ' ', '_');
  return name;
}

std::string Count(double x) {
  if (!std::isfinite(x)) return "n/a";
  std::string s = Fmt("%.0f", x);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(i, ",");
  return s;
}

namespace {

// the first "model name" of /proc/cpuinfo
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

}  // namespace

std::string Machine() {
  return Fmt("%s, %u logical CPUs", CpuModel().c_str(), std::thread::hardware_concurrency());
}

std::string Version() {
  int v = mj_version();
  return Fmt("MuJoCo %d.%d.%d (Debian source) + implicitpos patches", v / 100, (v / 10) % 10,
             v % 10);
}

double Min(const std::vector<double>& x) { return *std::min_element(x.begin(), x.end()); }
double Max(const std::vector<double>& x) { return *std::max_element(x.begin(), x.end()); }

double CpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

//------------------------------------ stepping ---------------------------------------------------

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

//------------------------------------ models -----------------------------------------------------

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
mjModel* LoadChain(int n, double kp, double kv, double h, int nstack, std::string* error) {
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
  if (!m && !error) std::fprintf(stderr, "mjpos_bench: chain%d does not compile: %s\n", n, err);
  if (!m && error) *error = err;
  return m;
}

mjModel* LoadFile(const std::string& rel) {
  char err[1000] = "";
  mjModel* m = mj_loadXML(ModelPath(rel).c_str(), nullptr, err, sizeof(err));
  if (!m) std::fprintf(stderr, "mjpos_bench: %s: %s\n", rel.c_str(), err);
  return m;
}

//------------------------------------ stack ------------------------------------------------------

Stack ProbeStack(const mjModel* m0, int steps, std::vector<mjtNum>* state) {
  Stack s;
  s.default_nstack = m0->nstack;
  mjModel* m = mj_copyModel(nullptr, m0);
  long nv = m->nv, nbody = m->nbody;
  long big = m0->nstack + 2 * (7 * nv * nv + 18 * nbody * nv) + 100000;
  m->nstack = static_cast<int>(std::min<long>(big, 1L << 30));
  mjData* d = mj_makeData(m);
  SetEnable(m, mjENBL_IMPLICITPOS, false);
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
  SetEnable(m, mjENBL_IMPLICITPOS, true);
  AddCtrlNoise(m, d2, steps);
  mj_step(m, d2);
  s.needed = std::max(d->maxuse_stack, d2->maxuse_stack);
  mj_deleteData(d2);
  mj_deleteData(d);
  mj_deleteModel(m);
  return s;
}

//------------------------------------ servo subjects of parts 2 and 4 ----------------------------

std::string SubjectName(Subject s) {
  return s == Subject::kServoHumanoid ? "servo humanoid (contact off)" : "arm7";
}

mjModel* MakeSubject(Subject s, double fn, double zeta, std::vector<Servo>* servos) {
  mjModel* m = nullptr;
  if (s == Subject::kServoHumanoid) {
    std::string err;
    m = mjpos::LoadWithServos(ModelPath("humanoid/humanoid.xml"), 1, 0, &err);
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

void InitSubject(const mjModel* m, mjData* d, const std::vector<Servo>& servos) {
  mj_resetData(m, d);
  for (size_t i = 0; i < servos.size(); i++) {
    int jnt = m->actuator_trnid[2 * i];
    int adr = m->jnt_qposadr[jnt];
    d->ctrl[i] = servos[i].target;
    d->qpos[adr] = servos[i].target + (i % 2 ? -kPerturbation : kPerturbation);
  }
}

void SubjectRate(const mjModel* m, const std::vector<Servo>& servos, int steps, double min_cpu,
                 double* per_wall, double* per_cpu) {
  mjData* d = mj_makeData(m);
  double sim = 0, wall = 0, cpu = 0;
  do {
    InitSubject(m, d, servos);
    auto t0 = std::chrono::steady_clock::now();
    double c0 = CpuSeconds();
    for (int i = 0; i < steps; i++) mj_step(m, d);
    cpu += CpuSeconds() - c0;
    wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    sim += d->time;
  } while (cpu < min_cpu);
  mj_deleteData(d);
  *per_wall = sim / wall;
  *per_cpu = sim / cpu;
}

}  // namespace mjpos::bench
