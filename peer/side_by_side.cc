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

// The side-by-side table: this product (MuJoCo 2.2.2 + mjENBL_IMPLICITPOS) against upstream's
// MuJoCo 4.0 (integrator="discrete", "implicit", "implicitfast"; the official native build
// through peer/driver.py) and MuJoCo Warp where installed. Run by the main job (tools/bench.sh);
// prints markdown and writes it to --out.
//
//   mjpos_peer_table [--out=FILE] [--repetitions=N] [--contact_only] [--motion_only]
//                    [--cost_only] [--warp_only]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>
// Callgrind's client requests (from Debian's valgrind package)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#endif

#include "peer/conformance.h"
#include "peer/peer.h"
#include "support/callgrind.h"
#include "support/contact.h"
#include "support/one_dof.h"
#include "support/models.h"
#include "support/motion.h"

namespace mjpos::peer {
namespace {

constexpr double kInertia = 0.01576;
constexpr char kHumanoid[] = MJPOS_MODEL_DIR "/humanoid/humanoid.xml";
constexpr int kGridTop = 12;  // decade grid 1e0 ... 1e12
constexpr double kContactH = 0.005;  // timestep of the contact cases
constexpr int kCostWarmup = 50;      // cost table: steps to the warm state,
constexpr int kCostSteps = 50;       // steps counted under callgrind,
constexpr int kCostWallSteps = 500;  // steps timed

std::string Fmt(const char* format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, x);
  return buf;
}
std::string Sci(double x) { return Fmt("%.3g", x); }

// a model on both sides, and how to start it
struct Case {
  std::string xml;
  std::string file;  // the MJCF file, if the model has <include> files (xml is then empty)
  Json edits = Json::object();
  std::vector<std::string> disable;
  ModelPtr m;
  std::function<void(const mjModel*, mjData*)> start;
};

// servos hold the initial pose; small joint velocities
void HoldWithVelocity(const mjModel* m, mjData* d) {
  HoldPose(m, d);
  for (int j = 0; j < m->njnt; ++j) {
    if (m->jnt_type[j] == mjJNT_HINGE || m->jnt_type[j] == mjJNT_SLIDE) {
      d->qvel[m->jnt_dofadr[j]] = 0.1 * std::sin(3.0 * j);
    }
  }
}

// targets at ctrl = 0 (the finger squeeze's: 1 cm inside the box)
void ZeroTargets(const mjModel* m, mjData* d) {
  mj_forward(m, d);
  for (int u = 0; u < m->nu; ++u) d->ctrl[u] = 0;
}

// a unit step of the target from rest
void UnitStep(const mjModel* m, mjData* d) {
  mj_forward(m, d);
  for (int u = 0; u < m->nu; ++u) d->ctrl[u] = 1;
}

Case XmlCase(const std::string& xml, std::function<void(const mjModel*, mjData*)> start) {
  std::string error;
  Case c;
  c.xml = xml;
  c.m.reset(LoadXmlString(xml, &error));
  if (!c.m) {
    std::cerr << error << "\n";
    std::exit(1);
  }
  c.start = std::move(start);
  return c;
}

Case HumanoidCase(double kp, double kv, bool contact) {
  Case c;
  std::string error;
  c.m.reset(LoadWithServos(kHumanoid, kp, kv, &error));
  if (!c.m) {
    std::cerr << error << "\n";
    std::exit(1);
  }
  c.m->opt.integrator = mjINT_IMPLICIT;
  if (!contact) {
    c.m->opt.disableflags |= mjDSBL_CONTACT;
    c.disable = {"contact"};
  }
  c.xml = ReadFile(kHumanoid);
  c.edits = ServoEdits(c.m.get());
  c.start = HoldWithVelocity;
  return c;
}

// our run: stable for `steps` from the case's start; the data after it
bool OursStable(Case& c, bool flag, int steps, mjData* d) {
  SetEnable(c.m.get(), mjENBL_IMPLICITPOS, flag);
  mj_resetData(c.m.get(), d);
  c.start(c.m.get(), d);
  bool stable = StepStable(c.m.get(), d, steps);
  SetEnable(c.m.get(), mjENBL_IMPLICITPOS, false);
  return stable;
}

// the peer's job from the case's start
Json PeerJob(Case& c, const std::string& integrator, int steps) {
  DataPtr d(mj_makeData(c.m.get()));
  c.start(c.m.get(), d.get());
  Json job = StateJob(c.xml, integrator, c.m.get(), d.get());
  job["model"] = c.edits;
  job["disable"] = c.disable;
  job["steps"] = steps;
  return job;
}

std::string Kp(double kp) { return kp > 0 ? Sci(kp) : "none"; }

//---------------------------------------- 1. conformance -----------------------------------------

void Conformance(std::ostream& out) {
  std::vector<Subject> subjects = ConformanceSubjects(MJPOS_MODEL_DIR);
  std::vector<OneStep> rest = StepAll(subjects, true), moving = StepAll(subjects, false);
  struct Row {
    std::string family;
    double rest_flag = 0, off = 0, moving_flag = 0, ours_dense = 0, peer_dense = 0;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < subjects.size(); ++i) {
    const std::string& name = subjects[i].name;
    std::string family = name.substr(0, std::min(name.find(" kp="), name.find(" force=")));
    if (rows.empty() || rows.back().family != family) {
      auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) {
        return r.family == family;
      });
      if (it == rows.end()) rows.push_back(Row{family});
    }
    Row& r = *std::find_if(rows.begin(), rows.end(), [&](const Row& x) {
      return x.family == family;
    });
    r.rest_flag = std::max(r.rest_flag, RelDiff(rest[i].flag, rest[i].discrete));
    r.off = std::max({r.off, RelDiff(rest[i].off, rest[i].implicit),
                      RelDiff(moving[i].off, moving[i].implicit)});
    r.moving_flag = std::max(r.moving_flag, RelDiff(moving[i].flag, moving[i].discrete));
    r.ours_dense = std::max(r.ours_dense, RelDiff(moving[i].flag, moving[i].dense_with_bias));
    r.peer_dense = std::max(r.peer_dense,
                            RelDiff(moving[i].discrete, moving[i].dense_without_bias));
  }
  out << "## Conformance: one step from the same state\n\n"
         "Largest `max|a − b| / max|b|` of the velocity after one `mj_step` over each family's "
         "gains (`peer/conformance.h`; the tests assert 1e-12 where the two should agree). "
         "'dense' is `(M − hD + h²K)Δv/h = f − hKv` from central differences of our forces, "
         "with the bias force's velocity derivative (ours) or without it (discrete).\n\n"
         "| model | rest: flag vs discrete | flag off vs 4.0 implicit | moving: flag vs "
         "discrete | moving: flag vs dense | moving: discrete vs dense without bias term |\n"
         "|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    out << "| " << r.family << " | " << Fmt("%.1e", r.rest_flag) << " | " << Fmt("%.1e", r.off)
        << " | " << Fmt("%.1e", r.moving_flag) << " | " << Fmt("%.1e", r.ours_dense) << " | "
        << Fmt("%.1e", r.peer_dense) << " |\n";
  }
  out << "\n";
}

//---------------------------------------- 2. largest stable gain ---------------------------------

// largest kp of the decade grid up to which every gain is stable, per integrator
struct Stability {
  double stock = 0, flag = 0, implicit = 0, implicitfast = 0, discrete = 0;
};

Stability LargestStable(const std::function<Case(double)>& make, int steps) {
  Stability s;
  bool ok_stock = true, ok_flag = true;
  Json jobs = Json::array();
  std::vector<std::string> integrators = {"implicit", "implicitfast", "discrete"};
  for (int k = 0; k <= kGridTop; ++k) {
    double kp = std::pow(10.0, k);
    Case c = make(kp);
    DataPtr d(mj_makeData(c.m.get()));
    ok_stock = ok_stock && OursStable(c, false, steps, d.get());
    ok_flag = ok_flag && OursStable(c, true, steps, d.get());
    if (ok_stock) s.stock = kp;
    if (ok_flag) s.flag = kp;
    for (const std::string& integrator : integrators) jobs.push_back(PeerJob(c, integrator, steps));
  }
  Json results = Run(jobs);
  bool ok[3] = {true, true, true};
  double* largest[3] = {&s.implicit, &s.implicitfast, &s.discrete};
  for (int k = 0; k <= kGridTop; ++k) {
    for (int i = 0; i < 3; ++i) {
      const Json& r = results[3 * k + i];
      ok[i] = ok[i] && !r.contains("error") && r["stable"].get<bool>();
      if (ok[i]) *largest[i] = std::pow(10.0, k);
    }
  }
  return s;
}

void LargestStableTable(std::ostream& out) {
  const int steps = 400;  // 2 s at 5 ms
  struct Row {
    std::string name;
    std::function<Case(double)> make;
  };
  std::vector<Row> rows = {
      {"one hinge (I 0.01576, kv 1), unit step",
       [](double kp) { return XmlCase(OneHingeXml(kInertia, kp, 1, 0.005), UnitStep); }},
      {"hinge joint stiffness (damping 1)",
       [](double k) {
         return XmlCase(OneHingeSpringXml(kInertia, k, 1, 0.005), [](const mjModel* m, mjData* d) {
           d->qpos[0] = 1;
           mj_forward(m, d);
         });
       }},
      {"gear/tendon arm (kv 1)",
       [](double kp) { return XmlCase(GearTendonArmXml(kp, 1, 0.005), HoldWithVelocity); }},
      {"7-link chain (kv 1)",
       [](double kp) { return XmlCase(ChainXml(7, kp, 1, 0.005), HoldWithVelocity); }},
      {"servo humanoid (kv 0), contact off",
       [](double kp) { return HumanoidCase(kp, 0, false); }},
      {"servo humanoid (kv 0), contact on", [](double kp) { return HumanoidCase(kp, 0, true); }},
      {"finger squeeze (kv 1), contact",
       [](double kp) { return XmlCase(FingerSqueezeXml(kp, 1, 0.005), ZeroTargets); }},
      {"quadruped standing (kv 1), contact",
       [](double kp) { return XmlCase(LeggedXml(kp, 1, 0.005), HoldWithVelocity); }},
  };
  out << "## Largest stable gain\n\n"
         "h = 5 ms, 2 s (400 steps), decade grid 1e0 … 1e12: the largest kp up to which every "
         "gain of the grid stays stable (no bad-qpos/qvel/qacc warning, finite state). Ours: "
         "`implicit` with the flag off (stock) and on; 4.0: the three integrators.\n\n"
         "| model | stock implicit | implicit + flag | 4.0 implicit | 4.0 implicitfast | "
         "4.0 discrete |\n|---|---|---|---|---|---|\n";
  for (const Row& row : rows) {
    Stability s = LargestStable(row.make, steps);
    out << "| " << row.name << " | " << Kp(s.stock) << " | " << Kp(s.flag) << " | "
        << Kp(s.implicit) << " | " << Kp(s.implicitfast) << " | " << Kp(s.discrete) << " |\n";
  }
  out << "\n";
}

//---------------------------------------- 3. step-response accuracy ------------------------------

double Rms(const std::vector<double>& q, double inertia, double kp, double kv, double h) {
  double sum = 0;
  for (size_t k = 0; k < q.size(); ++k) {
    double e = q[k] - PdStepResponse(inertia, kp, kv, h * (k + 1));
    sum += e * e;
  }
  return std::sqrt(sum / q.size());
}

void AccuracyTable(std::ostream& out) {
  const double h = 0.005;
  out << "## Step-response accuracy (one dof)\n\n"
         "One hinge, I = 0.01576, kp = I·ω², kv = 2ζ·√(kp·I), unit step from rest, h = 5 ms; "
         "RMS of q − q_exact over the steps k = 1 … n, n = max(⌈20/(ω h)⌉, 50), q_exact the "
         "continuous PD response. 'unstable': the scheme diverges there.\n\n"
         "| hω | ζ | stock implicit | implicit + flag | 4.0 discrete | 4.0 implicit | "
         "implicit + flag + posweight |\n"
         "|---|---|---|---|---|---|---|\n";
  struct Point {
    double hw, zeta;
  };
  std::vector<Point> points;
  for (double zeta : {0.1, 0.5, 1.0}) {
    for (double hw : {0.5, 1.0, 2.0, 5.0}) points.push_back({hw, zeta});
  }
  Json jobs = Json::array();
  std::vector<std::vector<double>> ours_off, ours_on, ours_weighted;
  std::vector<double> kps, kvs, inertias;
  for (const Point& p : points) {
    double wn = p.hw / h, kp = kInertia * wn * wn, kv = 2 * p.zeta * std::sqrt(kp * kInertia);
    int n = std::max(static_cast<int>(std::ceil(20 / (wn * h))), 50);
    Case c = XmlCase(OneHingeXml(kInertia, kp, kv, h), UnitStep);
    DataPtr d(mj_makeData(c.m.get()));
    mj_forward(c.m.get(), d.get());
    inertias.push_back(d->qM[0]);
    kps.push_back(kp);
    kvs.push_back(kv);
    for (Scheme s : {Scheme::kStock, Scheme::kBackwardEuler, Scheme::kWeighted}) {
      std::vector<double> q;
      SetScheme(c.m.get(), s);
      mj_resetData(c.m.get(), d.get());
      UnitStep(c.m.get(), d.get());
      for (int k = 0; k < n; ++k) {
        mj_step(c.m.get(), d.get());
        q.push_back(d->qpos[0]);
      }
      SetScheme(c.m.get(), Scheme::kStock);
      (s == Scheme::kStock ? ours_off : s == Scheme::kBackwardEuler ? ours_on : ours_weighted)
          .push_back(q);
    }
    for (const char* integrator : {"discrete", "implicit"}) {
      Json job = PeerJob(c, integrator, n);
      job["trace"] = {"qpos"};
      jobs.push_back(job);
    }
  }
  Json results = Run(jobs);
  auto cell = [](double rms) { return std::isfinite(rms) && rms < 1e3 ? Fmt("%.4f", rms)
                                                                       : std::string("unstable"); };
  for (size_t i = 0; i < points.size(); ++i) {
    double I = inertias[i], kp = kps[i], kv = kvs[i];
    std::vector<double> peer[2];
    for (int k = 0; k < 2; ++k) {
      for (const Json& row : results[2 * i + k]["trace"]["qpos"]) {
        peer[k].push_back(Numbers(row)[0]);
      }
    }
    out << "| " << points[i].hw << " | " << points[i].zeta << " | "
        << cell(Rms(ours_off[i], I, kp, kv, h)) << " | " << cell(Rms(ours_on[i], I, kp, kv, h))
        << " | " << cell(Rms(peer[0], I, kp, kv, h)) << " | " << cell(Rms(peer[1], I, kp, kv, h))
        << " | " << cell(Rms(ours_weighted[i], I, kp, kv, h)) << " |\n";
  }
  out << "\n";
}

//---------------------------------------- 4. what a step reports ---------------------------------

void ReportTable(std::ostream& out) {
  const double kp = 1e5, kv = 1, h = 0.005;
  std::string xml = OneHingeXml(kInertia, kp, kv, h);
  xml.insert(xml.rfind("</mujoco>"),
             "  <sensor><jointpos joint=\"hinge\"/><jointvel joint=\"hinge\"/>"
             "<actuatorfrc actuator=\"servo\"/></sensor>\n");
  xml.replace(xml.find("<general "), 9, "<general name=\"servo\" ");
  Case c = XmlCase(xml, UnitStep);
  struct Column {
    std::string name;
    double qvel, qacc, qfrc_actuator, actuator_force, sensor[3];
    double step[3];  // actuator_force_step, qfrc_actuator_step, qfrc_smooth_step; NaN: none
  };
  const double kNone = std::nan("");
  double inertia = 0;
  std::vector<Column> cols;
  for (bool flag : {false, true}) {
    DataPtr d(mj_makeData(c.m.get()));
    SetEnable(c.m.get(), mjENBL_IMPLICITPOS, flag);
    UnitStep(c.m.get(), d.get());
    mj_step(c.m.get(), d.get());
    SetEnable(c.m.get(), mjENBL_IMPLICITPOS, false);
    inertia = d->qM[0];
    cols.push_back({flag ? "ours: implicit + flag" : "ours: implicit (stock)", d->qvel[0],
                    d->qacc[0], d->qfrc_actuator[0], d->actuator_force[0],
                    {d->sensordata[0], d->sensordata[1], d->sensordata[2]},
                    {d->actuator_force_step[0], d->qfrc_actuator_step[0],
                     d->qfrc_smooth_step[0]}});
  }
  Json jobs = Json::array();
  for (const char* integrator : {"implicit", "discrete"}) {
    Json job = PeerJob(c, integrator, 1);
    job["report"] = {"qvel", "qacc", "qfrc_actuator", "actuator_force", "sensordata"};
    jobs.push_back(job);
  }
  Json results = Run(jobs);
  for (int k = 0; k < 2; ++k) {
    const Json& r = results[k]["report"];
    std::vector<double> s = Numbers(r["sensordata"]);
    cols.push_back({k ? "4.0 discrete" : "4.0 implicit", Numbers(r["qvel"])[0],
                    Numbers(r["qacc"])[0], Numbers(r["qfrc_actuator"])[0],
                    Numbers(r["actuator_force"])[0], {s[0], s[1], s[2]},
                    {kNone, kNone, kNone}});
  }
  out << "## What one step reports\n\n"
         "One hinge servo above the stock cap (I 0.01576, kp 1e5, kv 1, h 5 ms), unit step "
         "from rest, after one `mj_step`. `(v⁺ − v)/h` is the acceleration the step applied, "
         "`I·(v⁺ − v)/h` the force. Sensors are evaluated in the step's `mj_forward`, before "
         "the update, on both sides. The `*_step` outputs are ours alone; 4.0 has "
         "none (—).\n\n"
         "| | ";
  for (const Column& col : cols) out << col.name << " | ";
  out << "\n|---|";
  for (size_t i = 0; i < cols.size(); ++i) out << "---|";
  out << "\n";
  auto row = [&](const std::string& name, std::function<double(const Column&)> get) {
    out << "| " << name << " | ";
    for (const Column& col : cols) {
      double v = get(col);
      out << (std::isnan(v) ? std::string("—") : Fmt("%.6g", v)) << " | ";
    }
    out << "\n";
  };
  row("qvel after", [](const Column& c) { return c.qvel; });
  row("(v⁺ − v)/h", [&](const Column& c) { return c.qvel / h; });
  row("I·(v⁺ − v)/h", [&](const Column& c) { return inertia * c.qvel / h; });
  row("qacc", [](const Column& c) { return c.qacc; });
  row("qfrc_actuator", [](const Column& c) { return c.qfrc_actuator; });
  row("actuator_force", [](const Column& c) { return c.actuator_force; });
  row("actuator_force_step", [](const Column& c) { return c.step[0]; });
  row("qfrc_actuator_step", [](const Column& c) { return c.step[1]; });
  row("qfrc_smooth_step", [](const Column& c) { return c.step[2]; });
  row("sensor jointpos", [](const Column& c) { return c.sensor[0]; });
  row("sensor jointvel", [](const Column& c) { return c.sensor[1]; });
  row("sensor actuatorfrc", [](const Column& c) { return c.sensor[2]; });
  out << "\n";
}

//---------------------------------------- 5. cost ------------------------------------------------

// The models of the cost table under `implicit`: part 1's of the main job (benchmark/cost.cc:
// humanoid as shipped, the servo humanoid at kp 100 kv 10, humanoid100, arm7 and chain10 at kp
// 20 kv 1, h 2 ms) and part 7's standing contact cases at kp 1e3, kv 0, h 5 ms.
std::vector<std::pair<std::string, Case>> CostCases() {
  std::vector<std::pair<std::string, Case>> cases;
  auto forward = [](const mjModel* m, mjData* d) { mj_forward(m, d); };
  cases.push_back({"humanoid", XmlCase(ReadFile(kHumanoid), forward)});
  Case servo = HumanoidCase(100, 10, true);
  servo.start = forward;
  cases.push_back({"servo humanoid", std::move(servo)});
  Case humanoid100;
  humanoid100.file = MJPOS_MODEL_DIR "/humanoid100/humanoid100.xml";
  char error[1000] = "";
  humanoid100.m.reset(mj_loadXML(humanoid100.file.c_str(), nullptr, error, sizeof(error)));
  if (!humanoid100.m) {
    std::cerr << humanoid100.file << ": " << error << "\n";
    std::exit(1);
  }
  humanoid100.start = forward;
  cases.push_back({"humanoid100", std::move(humanoid100)});
  cases.push_back({"arm7", XmlCase(ChainXml(7, 20, 1, 0.002), forward)});
  cases.push_back({"chain10", XmlCase(ChainXml(10, 20, 1, 0.002), forward)});
  for (const ContactCase& cc : StandingCases()) {
    std::string xml;
    Case c;
    c.m.reset(LoadContactCase(cc, MJPOS_MODEL_DIR, 1e3, 0, kContactH, &xml));
    c.xml = xml;
    if (cc.servos) c.edits = ServoEdits(c.m.get());
    c.start = forward;
    cases.push_back({cc.name, std::move(c)});
  }
  for (auto& [name, c] : cases) c.m->opt.integrator = mjINT_IMPLICIT;
  return cases;
}

// The case's warm state: its start and kCostWarmup steps of `implicit` with the flag (a pose
// that every scheme starts from, held where stock's gains are beyond its cap); whether stable.
bool WarmUp(Case& c, mjData* d) {
  mj_resetData(c.m.get(), d);
  c.start(c.m.get(), d);
  SetEnable(c.m.get(), mjENBL_IMPLICITPOS, true);
  bool stable = StepStable(c.m.get(), d, kCostWarmup);
  SetEnable(c.m.get(), mjENBL_IMPLICITPOS, false);
  return stable;
}

// the peer's job stepping the case from its warm state, solver warm start included
Json WarmJob(Case& c, const std::string& integrator, int steps) {
  DataPtr d(mj_makeData(c.m.get()));
  WarmUp(c, d.get());
  Json job = StateJob(c.xml, integrator, c.m.get(), d.get());
  job["qacc_warmstart"] = std::vector<double>(d->qacc_warmstart, d->qacc_warmstart + c.m->nv);
  if (!c.file.empty()) {
    job.erase("xml");
    job["file"] = c.file;
  }
  job["model"] = c.edits;
  job["disable"] = c.disable;
  job["steps"] = steps;
  return job;
}

// the --profile mode, run by CostTable under callgrind: case i from its warm state, which it
// reaches uninstrumented, kCostSteps steps with the flag on or off
int Profile(int i, bool flag) {
  auto cases = CostCases();
  if (i < 0 || i >= static_cast<int>(cases.size())) return 2;
  Case& c = cases[i].second;
  DataPtr d(mj_makeData(c.m.get()));
  if (!WarmUp(c, d.get())) return 3;
  SetEnable(c.m.get(), mjENBL_IMPLICITPOS, flag);
  CALLGRIND_START_INSTRUMENTATION;
  return StepStable(c.m.get(), d.get(), kCostSteps) ? 0 : 3;
}

void CostTable(std::ostream& out, const std::string& self, int repetitions) {
  const std::vector<std::string> integrators = {"implicitfast", "implicit", "discrete"};
  auto cases = CostCases();
  const int n = cases.size();

  // instructions: each (case, scheme) in its own process under callgrind, on every core
  std::vector<double> instr(5 * n, NAN);
  OnEveryCore(instr.size(), [&](size_t k) {
    int i = k / 5, col = k % 5;
    std::string output;
    if (col < 2) {
      instr[k] = CallgrindPerStep(
          self + " --profile=" + std::to_string(i) + ":" + std::to_string(col), "", kCostSteps,
          false);
    } else {
      Json jobs = Json::array({WarmJob(cases[i].second, integrators[col - 2], kCostSteps)});
      instr[k] = CallgrindPerStep(DriverCommand(), Json{{"jobs", jobs}}.dump(), kCostSteps, true,
                                  &output);
      // a count only where all steps were taken and stable
      Json r = output.empty() ? Json() : Json::parse(output)["results"][0];
      if (!r.is_object() || !r.value("stable", false) || r.value("steps", 0) != kCostSteps) {
        instr[k] = NAN;
      }
    }
  });

  // wall clock: per repetition and case, the three upstream integrators in one driver process,
  // then ours off and on
  std::vector<std::vector<std::vector<double>>> wall(n, std::vector<std::vector<double>>(5));
  for (int r = 0; r <= repetitions; ++r) {  // the first is a warm-up, not counted
    for (int i = 0; i < n; ++i) {
      Case& c = cases[i].second;
      Json jobs = Json::array();
      for (const std::string& integrator : integrators) {
        Json job = WarmJob(c, integrator, kCostWallSteps);
        job["timed"] = true;
        jobs.push_back(job);
      }
      Json results = Run(jobs);
      DataPtr d(mj_makeData(c.m.get()));
      double t[5];
      for (int flag = 0; flag < 2; ++flag) {
        WarmUp(c, d.get());
        SetEnable(c.m.get(), mjENBL_IMPLICITPOS, flag);
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < kCostWallSteps; ++k) mj_step(c.m.get(), d.get());
        t[flag] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        SetEnable(c.m.get(), mjENBL_IMPLICITPOS, false);
      }
      for (int k = 0; k < 3; ++k) t[2 + k] = results[k].value("seconds", NAN);
      for (int col = 0; r > 0 && col < 5; ++col) {
        wall[i][col].push_back(1e6 * t[col] / kCostWallSteps);
      }
    }
  }

  out << "## Cost, native\n\n"
         "Each model from the same warm state (its start and "
      << kCostWarmup
      << " steps of `implicit` with the flag, solver warm start included). Instructions: inside "
         "`mj_step` (valgrind --tool=callgrind --toggle-collect=mj_step), "
      << kCostSteps
      << " steps, per step; ours in this program, upstream's in its wheel's libmujoco under the "
         "peer driver. Wall clock: µs per step over "
      << kCostWallSteps << " steps, median of " << repetitions
      << " repetitions, each running upstream's three integrators and then ours off and on; "
         "it scatters by ±30 % on a shared machine, the instructions decide. 'diverges': a "
         "bad-state warning or a non-finite state within the counted steps.\n\n"
         "| model | nv | ours off | ours flag | "
      << Version() << " implicitfast | implicit | discrete | flag / off | discrete / implicitfast "
         "| discrete / implicit | wall µs: off, flag, implicitfast, implicit, discrete |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (int i = 0; i < n; ++i) {
    const double* x = &instr[5 * i];
    auto ratio = [](double a, double b) { return std::isnan(a / b) ? "—" : Fmt("%.3f", a / b); };
    out << "| " << cases[i].first << " | " << cases[i].second.m->nv;
    for (int col = 0; col < 5; ++col) {
      out << " | " << (std::isnan(x[col]) ? "diverges" : Fmt("%.0f", x[col]));
    }
    out << " | " << ratio(x[1], x[0]) << " | " << ratio(x[4], x[2]) << " | "
        << ratio(x[4], x[3]) << " |";
    for (int col = 0; col < 5; ++col) {
      out << (col ? ", " : " ")
          << (std::isnan(x[col]) ? "—" : Fmt("%.1f", Median(wall[i][col])));
    }
    out << " |\n";
  }
  out << "\n";
}

//---------------------------------------- 6. scope -----------------------------------------------

void ScopeTable(std::ostream& out) {
  const double gain = 1e6;
  const int steps = 400;
  auto start = [](const mjModel* m, mjData* d) {
    for (int i = 0; i < m->nv; ++i) d->qvel[i] = 0.5 * std::sin(1.0 + i);
    mj_forward(m, d);
    for (int u = 0; u < m->nu; ++u) d->ctrl[u] = 0.5;
  };
  std::vector<ScopeConfiguration> configs = ScopeConfigurations(gain, gain);
  // and the muscle arm relaxed at peak force 1e6: its stretched muscles hold it by their passive
  // curve, which has no damping (from rest; the controls stay 0)
  configs.push_back({"muscle_arm_relaxed", MuscleArmXml(gain, 5e-3), true});
  Json jobs = Json::array();
  std::vector<std::pair<bool, bool>> ours;
  for (const ScopeConfiguration& sc : configs) {
    Case c = sc.name == "muscle_arm_relaxed"
                 ? XmlCase(sc.xml, [](const mjModel* m, mjData* d) { mj_forward(m, d); })
                 : XmlCase(sc.xml, start);
    DataPtr d(mj_makeData(c.m.get()));
    bool stock = OursStable(c, false, steps, d.get());
    bool flag = OursStable(c, true, steps, d.get());
    ours.push_back({stock, flag});
    jobs.push_back(PeerJob(c, "discrete", steps));
  }
  Json results = Run(jobs);
  auto word = [](bool stable) { return stable ? "stable" : "diverges"; };
  out << "## Scope: the scope tests' configurations beyond the stock cap\n\n"
         "Each configuration of `support/models.h` `ScopeConfigurations` (the scope tests'), with "
         "servo gain and joint stiffness 1e6 (kv 1; far above the stock cap of these 0.01 "
         "kg·m² links at 5 ms), 2 s from a moving start. Gain-free actuators (adhesion, muscle, "
         "motor) and the non-restoring slope keep their own parameters. Last, the muscle arm "
         "(`MuscleArmXml`) at peak force 1e6, relaxed, from rest. 'in scope': the flag "
         "linearises it (`mjd_actuatorPosScope`).\n\n"
         "| configuration | in scope | stock implicit | implicit + flag | 4.0 discrete |\n"
         "|---|---|---|---|---|\n";
  for (size_t i = 0; i < configs.size(); ++i) {
    const Json& r = results[i];
    bool discrete = !r.contains("error") && r["stable"].get<bool>();
    out << "| " << configs[i].name << " | " << (configs[i].changes ? "yes" : "no") << " | "
        << word(ours[i].first) << " | " << word(ours[i].second) << " | " << word(discrete)
        << " |\n";
  }
  out << "\n";
}

//---------------------------------------- 7. contact ---------------------------------------------

// The contact cases of the main job's part 7 (support/contact.h) at h kContactH: the flag and
// `discrete` against the converged reference (2.2.2 stock), and 4.0's stock `implicit` at the
// reference's timestep, which is `discrete`'s own reference where 4.0's model semantics differ.
constexpr int kMaxPeerSteps = 500000;  // the longest 4.0 reference run

// the trace name of a body's position along axis a

// a job running the case from its initial state for `seconds` at h, tracing what the metrics
// sample every `every` steps
Json CaseJob(const ContactCase& c, double seconds, double kp, double kv, double h,
             const std::string& integrator, int every, std::vector<std::string> trace) {
  std::string xml;
  ModelPtr m(LoadContactCase(c, MJPOS_MODEL_DIR, kp, kv, h, &xml));
  DataPtr d(mj_makeData(m.get()));
  Json job = StateJob(xml, integrator, m.get(), d.get());
  if (c.servos) job["model"] = ServoEdits(m.get());
  job["timestep"] = h;
  job["steps"] = std::lround(seconds / h);
  job["every"] = every;
  int body = c.body ? mj_name2id(m.get(), mjOBJ_BODY, c.body) : -1;
  for (int a = 0; body >= 0 && a < 3; ++a) trace.push_back(Xpos(body, a));
  job["trace"] = trace;
  return job;
}


// the drop metrics of a result
DropMetrics DropOf(int body, double h, const Json& r) {
  if (r.contains("error") || !r["stable"].get<bool>()) return {};
  const Json& t = r["trace"];
  return DropMetricsOf(Numbers(t["normalforce"]), Numbers(t[Xpos(body, 2)]), h);
}

std::string StandingCell(const ContactMetrics& c, const ContactMetrics& ref, bool slip) {
  if (!c.stable) return "unstable";
  std::string cell = Fmt("%.3f", c.force / ref.force) + " / " +
                     Fmt("%.3f", c.penetration / ref.penetration) + " / " +
                     Fmt("%.2f %%", 100 * c.ripple);
  if (slip) cell += " / " + Fmt("%.2f", 1e3 * c.slip);
  return cell;
}

std::string DropCell(const DropMetrics& c, const DropMetrics& ref) {
  if (!c.stable) return "unstable";
  return Fmt("%.3f", c.peak_force / ref.peak_force) + " / " +
         Fmt("%+.2f", 1e3 * (c.lowest - ref.lowest)) + " / " +
         Fmt("%+.2f", 1e3 * (c.rebound - ref.rebound));
}

void ContactTable(std::ostream& out) {
  out << "## Contact against the converged reference\n\n"
         "The cases of the main job's part 7 (doc/contact.md) at h 5 ms, kv 0. Reference: 2.2.2 "
         "stock `implicit` at h/N, converged to 1 % (support/contact.h); 4.0's stock "
         "`implicit` run at the same timestep where it takes at most "
      << kMaxPeerSteps
      << " steps. Each cell: force and penetration as ratios to the 2.2.2 reference, ripple, "
         "slip (mm/s); `discrete` also against 4.0's own reference.\n\n"
         "| case | kp | reference: seconds, h, force, penetration | 4.0 stock at h_ref | flag | "
         "`discrete` | `discrete` / 4.0 reference |\n|---|---|---|---|---|---|---|\n";
  const std::vector<std::string> samples = {"normalforce", "depth", "ncon"};
  for (const ContactCase& c : StandingCases()) {
    for (double kp : {1e3, 1e5, 1e7}) {
      ModelPtr m(LoadContactCase(c, MJPOS_MODEL_DIR, kp, 0, kContactH));
      const int body = c.body ? mj_name2id(m.get(), mjOBJ_BODY, c.body) : -1;
      double h_ref = 0, seconds = c.seconds;
      ContactMetrics ref = ContactReference(m.get(), &seconds, kContactMaxSeconds,
                                            kContactWindow, body, kContactTol, kContactHmin,
                                            &h_ref);
      SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
      ContactMetrics flag = MeasureContact(m.get(), seconds, kContactWindow, body);
      Json jobs = Json::array(
          {CaseJob(c, seconds, kp, 0, kContactH, "discrete", ContactStride(kContactH), samples)});
      const bool peer_ref = h_ref && seconds / h_ref <= kMaxPeerSteps;
      if (peer_ref) {
        jobs.push_back(CaseJob(c, seconds, kp, 0, h_ref, "implicit",
                               ContactStride(h_ref), samples));
      }
      Json results = Run(jobs);
      ContactMetrics discrete = StandingOf(seconds, body, kContactH, results[0]);
      ContactMetrics own =
          peer_ref ? StandingOf(seconds, body, h_ref, results[1]) : ContactMetrics{};
      bool slip = body >= 0;
      out << "| " << c.name << " | " << Sci(kp) << " | "
          << (h_ref ? Fmt("%g s", seconds) + ", " + Fmt("%g s", h_ref) + ", " +
                          Fmt("%.4g N", ref.force) + ", " +
                          Fmt("%.4g mm", 1e3 * ref.penetration)
                    : std::string("not converged"))
          << " | " << (peer_ref ? StandingCell(own, ref, slip) : std::string("not run"))
          << " | " << StandingCell(flag, ref, slip) << " | " << StandingCell(discrete, ref, slip)
          << " | " << (peer_ref && own.stable ? StandingCell(discrete, own, slip) : "") << " |\n";
    }
  }

  const ContactCase drop = DropCase();
  out << "\n" << drop.name << ", kv kp/100 (with kv 0 the reference does not converge: part 7), "
      << drop.seconds
      << " s: peak force (10 ms windows) as a ratio to the reference's, lowest height and "
         "rebound of the torso as differences in mm (support/contact.h).\n\n"
         "| kp | reference: h, peak, lowest, rebound | 4.0 stock at h_ref | flag | `discrete` | "
         "`discrete` / 4.0 reference |\n|---|---|---|---|---|---|\n";
  for (double kp : {1e3, 1e5, 1e7}) {
    ModelPtr m(LoadContactCase(drop, MJPOS_MODEL_DIR, kp, kp / 100, kContactH));
    const int torso = mj_name2id(m.get(), mjOBJ_BODY, drop.body);
    double h_ref = 0;
    DropMetrics ref =
        DropReference(m.get(), drop.seconds, torso, kContactTol, kContactHmin, &h_ref);
    SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
    DropMetrics flag = MeasureDrop(m.get(), drop.seconds, torso);
    Json jobs = Json::array(
        {CaseJob(drop, drop.seconds, kp, kp / 100, kContactH, "discrete", 1, {"normalforce"})});
    const bool peer_ref = h_ref && drop.seconds / h_ref <= kMaxPeerSteps;
    if (peer_ref) {
      jobs.push_back(
          CaseJob(drop, drop.seconds, kp, kp / 100, h_ref, "implicit", 1, {"normalforce"}));
    }
    Json results = Run(jobs);
    DropMetrics discrete = DropOf(torso, kContactH, results[0]);
    DropMetrics own = peer_ref ? DropOf(torso, h_ref, results[1]) : DropMetrics{};
    out << "| " << Sci(kp) << " | "
        << (h_ref ? Fmt("%g s", h_ref) + ", " + Fmt("%.4g N", ref.peak_force) + ", " +
                        Fmt("%.2f mm", 1e3 * ref.lowest) + ", " + Fmt("%.2f mm", 1e3 * ref.rebound)
                  : std::string("not converged"))
        << " | " << (peer_ref ? DropCell(own, ref) : std::string("not run")) << " | "
        << DropCell(flag, ref) << " | " << DropCell(discrete, ref) << " | "
        << (peer_ref && own.stable ? DropCell(discrete, own) : "") << " |\n";
  }
  out << "\n";
}

// Violent motion (support/motion.h, part 8 of the main job): the humanoid on its floor and with
//---------------------------------------- 9. MuJoCo Warp ----------------------------------------

// MuJoCo Warp (driver option kWarp, float32, the CPU device) beside upstream's C build and ours:
// one step of the conformance models, and the standing contact cases at h kContactH.
void WarpTable(std::ostream& out) {
  std::string version;
  try {
    version = Version(kWarp);
  } catch (const std::exception&) {
    out << "## MuJoCo Warp\n\nNot installed (`WARP=1 tools/setup.sh` installs "
           "peer/requirements-warp.txt).\n\n";
    return;
  }
  std::vector<Subject> subjects = ConformanceSubjects(MJPOS_MODEL_DIR);
  std::vector<OneStep> c[2], warp[2];
  for (int moving = 0; moving < 2; ++moving) {
    c[moving] = StepAll(subjects, !moving);
    warp[moving] = StepAll(subjects, !moving, kWarp);
  }
  out << "## MuJoCo Warp\n\n"
      << version
      << ", from the same state as the C build (" << Version()
      << "). Largest `max|a − b| / max|b|` of the velocity after one step over each family "
         "of the conformance models (`peer/conformance.h`), from rest and moving; '—': Warp "
         "does not run the model.\n\n"
         "| model | Warp discrete vs C discrete | Warp implicit vs C implicit | Warp discrete vs "
         "flag, from rest | not run |\n|---|---|---|---|---|\n";
  struct Row {
    std::string family;
    double discrete = 0, implicit = 0, flag = 0;
    int missing = 0;
  };
  std::vector<Row> rows;
  for (size_t i = 0; i < subjects.size(); ++i) {
    const std::string& name = subjects[i].name;
    std::string family = name.substr(0, std::min(name.find(" kp="), name.find(" force=")));
    auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& x) {
      return x.family == family;
    });
    Row& r = it != rows.end() ? *it : rows.emplace_back(Row{family});
    for (int moving = 0; moving < 2; ++moving) {
      const OneStep& w = warp[moving][i];
      const OneStep& ref = c[moving][i];
      if (w.discrete.empty() || w.implicit.empty()) {
        ++r.missing;
        continue;
      }
      r.discrete = std::max(r.discrete, RelDiff(w.discrete, ref.discrete));
      r.implicit = std::max(r.implicit, RelDiff(w.implicit, ref.implicit));
      if (!moving) r.flag = std::max(r.flag, RelDiff(w.discrete, ref.flag));
    }
  }
  for (const Row& r : rows) {
    out << "| " << r.family << " | " << Fmt("%.1e", r.discrete) << " | "
        << Fmt("%.1e", r.implicit) << " | " << Fmt("%.1e", r.flag) << " | " << r.missing
        << " |\n";
  }

  out << "\nThe standing contact cases (part 7) at h " << Fmt("%g ms", 1e3 * kContactH)
      << ", kv 0, `discrete`: force / penetration (mm) / ripple over the last "
      << Fmt("%g s", kContactWindow)
      << ", C and Warp, Warp's relative difference from C in force and penetration, and ours "
         "with the flag.\n\n"
         "| case | kp | C discrete | Warp discrete | Warp vs C | flag |\n"
         "|---|---|---|---|---|---|\n";
  const std::vector<std::string> samples = {"normalforce", "depth", "ncon"};
  auto cell = [](const ContactMetrics& x) {
    if (!x.stable) return std::string("unstable");
    return Fmt("%.4g", x.force) + " / " + Fmt("%.3f", 1e3 * x.penetration) + " / " +
           Fmt("%.2f %%", 100 * x.ripple);
  };
  for (const ContactCase& cc : StandingCases()) {
    for (double kp : {1e3, 1e5}) {
      ModelPtr m(LoadContactCase(cc, MJPOS_MODEL_DIR, kp, 0, kContactH));
      const int body = cc.body ? mj_name2id(m.get(), mjOBJ_BODY, cc.body) : -1;
      Json jobs = Json::array(
          {CaseJob(cc, cc.seconds, kp, 0, kContactH, "discrete", ContactStride(kContactH),
                   samples)});
      ContactMetrics upstream = StandingOf(cc.seconds, body, kContactH, Run(jobs)[0]);
      ContactMetrics warped = StandingOf(cc.seconds, body, kContactH, Run(jobs, kWarp)[0]);
      SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
      ContactMetrics flag = MeasureContact(m.get(), cc.seconds, kContactWindow, body);
      std::string diff = "—";
      if (upstream.stable && warped.stable) {
        diff = Fmt("%.1e", std::abs(warped.force / upstream.force - 1)) + " / " +
               Fmt("%.1e", std::abs(warped.penetration / upstream.penetration - 1));
      }
      out << "| " << cc.name << " | " << Sci(kp) << " | " << cell(upstream) << " | "
          << cell(warped) << " | " << diff << " | " << cell(flag) << " |\n";
    }
  }
  out << "\n";
}

// contact off under a new random target every 40 ms across each joint's range, f_n 10 ... 1000
// Hz, zeta 0 ... 1, h 2, 5, 10 ms; 4.0 `discrete` beside stock, the flag and the weighted mode,
// each bounded or not where the 2.2.2 reference is bounded.
void MotionTable(std::ostream& out) {
  std::vector<MotionSetting> settings;
  for (bool contact : {true, false}) {
    for (double h : {0.002, 0.005, 0.010}) {
      for (double fn : {10.0, 30.0, 100.0, 300.0, 1000.0}) {
        for (double zeta : {0.0, 0.3, 0.7, 1.0}) {
          MotionSetting s;
          s.subject = "humanoid";
          s.contact = contact;
          s.fn = fn;
          s.zeta = zeta;
          s.h = h;
          settings.push_back(s);
        }
      }
    }
  }
  std::vector<MotionResult> ours(settings.size());
  OnEveryCore(settings.size(),
              [&](size_t i) { ours[i] = MeasureMotion(settings[i], MJPOS_MODEL_DIR); });
  Json jobs = Json::array();
  for (const MotionSetting& s : settings) {
    jobs.push_back(MotionJob(s, MJPOS_MODEL_DIR, "discrete", s.h));
  }
  Json results = Run(jobs);

  out << "## Violent motion\n\n"
         "MuJoCo's humanoid, its motors made servos of gear 1 tuned from their reflected inertia "
         "to one f_n (10, 30, 100, 300, 1000 Hz) and zeta (0, 0.3, 0.7, 1), a new random target "
         "every 40 ms across each joint's range, 2 s (the main job's part 8, support/motion.h). "
         "Bounded: finite, no bad-state warning, every |qvel| at most "
      << Sci(kMotionVmax)
      << ". Each cell: runs bounded of the 20 settings, and in brackets of those where the "
         "2.2.2 reference (stock at h/10, halved until h 2 pi f_n <= 0.2) is bounded.\n\n"
         "| model | h | reference | stock | flag | weighted | `discrete` |\n"
         "|---|---|---|---|---|---|---|\n";
  for (size_t i = 0; i < settings.size(); i += 20) {
    int ref = 0, n[4] = {0, 0, 0, 0}, held[4] = {0, 0, 0, 0};
    for (size_t j = i; j < i + 20; ++j) {
      const MotionResult& r = ours[j];
      const Json& p = results[j];
      bool bounded[4] = {r.stock.bounded, r.flag.bounded, r.weighted.bounded,
                         !p.contains("error") && p["stable"].get<bool>()};
      ref += r.reference_bounded;
      for (int k = 0; k < 4; ++k) {
        n[k] += bounded[k];
        held[k] += bounded[k] && r.reference_bounded;
      }
    }
    const MotionSetting& s = settings[i];
    out << "| humanoid" << (s.contact ? "" : " (contact off)") << " | " << Fmt("%g ms", 1e3 * s.h)
        << " | " << ref;
    for (int k = 0; k < 4; ++k) out << " | " << n[k] << " (" << held[k] << ")";
    out << " |\n";
  }
  out << "\n";
}

}  // namespace
}  // namespace mjpos::peer

int main(int argc, char** argv) {
  std::string out_path;
  int repetitions = 15;
  int profile_case = -1, profile_flag = 0;
  bool contact_only = false, motion_only = false, cost_only = false, warp_only = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strncmp(argv[i], "--out=", 6)) {
      out_path = argv[i] + 6;
    } else if (!std::strncmp(argv[i], "--repetitions=", 14)) {
      repetitions = std::max(1, std::atoi(argv[i] + 14));
    } else if (!std::strcmp(argv[i], "--contact_only")) {
      contact_only = true;
    } else if (!std::strcmp(argv[i], "--motion_only")) {
      motion_only = true;
    } else if (!std::strcmp(argv[i], "--cost_only")) {
      cost_only = true;
    } else if (!std::strcmp(argv[i], "--warp_only")) {
      warp_only = true;
    } else if (std::sscanf(argv[i], "--profile=%d:%d", &profile_case, &profile_flag) != 2) {
      std::cerr << "usage: " << argv[0]
                << " [--out=FILE] [--repetitions=N] [--contact_only] [--motion_only] "
                   "[--cost_only] [--warp_only]\n";
      return 2;
    }
  }
  using namespace mjpos::peer;  // NOLINT
  if (profile_case >= 0) return Profile(profile_case, profile_flag);
  std::ostringstream md;
  md << "# Side by side: MuJoCo 2.2.2 + mjENBL_IMPLICITPOS and MuJoCo " << Version()
     << " (official build)\n\n";
  const bool only = contact_only || motion_only || cost_only || warp_only;
  if (!only) {
    Conformance(md);
    LargestStableTable(md);
    AccuracyTable(md);
    ReportTable(md);
    ScopeTable(md);
  }
  if (!only || cost_only) CostTable(md, mjpos::SelfCommand(), repetitions);
  if (!only || contact_only) ContactTable(md);
  if (!only || motion_only) MotionTable(md);
  if (!only || warp_only) WarpTable(md);
  std::cout << md.str();
  if (!out_path.empty()) std::ofstream(out_path) << md.str();
  return 0;
}
