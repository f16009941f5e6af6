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

// mjpos_real_table: every real model (real/README.md) made servos at f_n 10, 30 and 100 Hz,
// zeta 0 and 0.7, h 2, 5 and 10 ms (18 settings), random targets every 40 ms for kMotionSeconds
// from its start state, contact on: how many settings are bounded under stock `implicit`, the
// flag, the weighted mode and (built with the peer) upstream 4.0's `discrete` and `implicit`, and
// the settings where the flag or the weighted mode diverges while stock or discrete is bounded.
// Then the contact table: each model made servos at f_n 30 and 100 Hz, zeta 0, held from qpos0
// with every control 0 at h 5 ms, against its converged reference (support/contact.h), for the
// models whose reference comes to rest in contact (they stand, lie or hold something).
// Then the accuracy table: the random-target runs at kAccuracySettings, where stock is bounded,
// against the converged reference (support/motion.h's MotionReferenceStep and MotionError).
// Markdown, to stdout or --out=FILE. --loads: instead, the models as 2.2.2 loads them (sizes,
// actuators, keyframes, Menagerie's conversions), the load table of real/README.md.
//
//   mjpos_real_table [--out=FILE] [--loads]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include "real/models.h"
#include "support/callgrind.h"
#include "support/contact.h"
#include "support/models.h"
#include "support/motion.h"
#include "support/one_dof.h"
// Callgrind's client requests (from Debian's valgrind package)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#endif
#ifdef MJPOS_REAL_PEER
#include "peer/peer.h"
#include "real/real_peer.h"
#endif

namespace mjpos::real {
namespace {

const std::string kDir = MJPOS_REAL_MODELS;
constexpr double kFns[] = {10, 30, 100};
constexpr double kZetas[] = {0, 0.7};
constexpr double kSteps[] = {0.002, 0.005, 0.010};
constexpr int kSettings = 18;

// setting k: f_n kFns[k / 6], zeta kZetas[k / 3 % 2], h kSteps[k % 3]
double Fn(int k) { return kFns[k / 6]; }
double Zeta(int k) { return kZetas[k / 3 % 2]; }
double Step(int k) { return kSteps[k % 3]; }
std::string SettingName(int k) {
  char text[64];
  std::snprintf(text, sizeof(text), "%g Hz/%g/%g ms", Fn(k), Zeta(k), 1e3 * Step(k));
  return text;
}

// the schemes of a row: ours, then upstream's discrete and, as the check that the peer runs the
// same servos, commands and start, upstream's implicit (stock's counterpart)
enum { kStock, kFlag, kWeighted, kDiscrete, kPeerImplicit, kSchemes };
const char* const kSchemeNames[] = {"stock", "flag", "weighted", "discrete", "4.0 implicit"};
const char* const kPeerIntegrators[] = {"discrete", "implicit"};

struct Row {
  RealModel model;
  std::string error;
  int nu = 0, converted = 0;
  bool ran = false;
  bool bounded[kSettings][kSchemes] = {};
  double instr[2] = {NAN, NAN};  // instructions per step inside mj_step, flag off and on
};

// The instruction counts: servos at kCostFn Hz, kCostZeta, h kCostH, random targets; kCostSteps
// steps counted after kCostSteps steps with the flag from the start state.
constexpr double kCostFn = 30, kCostZeta = 0.7, kCostH = 0.005;
constexpr int kCostSteps = 50;

// the --profile mode, run under callgrind: model i of RealModels, counted with the flag or not;
// exits non-zero if the run diverges
int Profile(int i, bool flag) {
  std::vector<RealModel> models = RealModels(kDir);
  if (i < 0 || i >= static_cast<int>(models.size())) return 2;
  ModelPtr m(LoadReal(kDir, models[i]));
  if (!m || !m->nu) return 2;
  MakeRealServos(m.get(), kCostFn, kCostZeta);
  m->opt.integrator = mjINT_IMPLICIT;
  m->opt.timestep = kCostH;
  MotionSetting s;
  std::vector<double> ctrl = MotionControls(m.get(), s, kCostH);
  DataPtr d(mj_makeData(m.get()));
  ResetToStart(m.get(), d.get());
  const int warnings = BadStateWarnings(d.get());
  for (int k = 0; k < 2 * kCostSteps; ++k) {
    if (k == kCostSteps) CALLGRIND_START_INSTRUMENTATION;
    SetScheme(m.get(), k < kCostSteps || flag ? Scheme::kBackwardEuler : Scheme::kStock);
    mju_copy(d->ctrl, ctrl.data() + static_cast<size_t>(k) * m->nu, m->nu);
    mj_step(m.get(), d.get());
    if (MotionDiverged(m.get(), d.get(), warnings)) return 3;
  }
  return 0;
}

void Quiet(const char*) {}  // divergence warns; the runs count the warnings in mjData

// The contact table's f_n (its other settings: real/models.h, kRealContact*)
constexpr double kContactFns[] = {30, 100};
#ifdef MJPOS_REAL_PEER
constexpr bool kPeerBuilt = true;
#else
constexpr bool kPeerBuilt = false;
#endif

// one model at one f_n: the reference (h_ref 0: none), stock, the flag, the weighted mode and
// upstream's discrete (built with the peer: its job)
struct ContactRow {
  std::string model;
  double fn = 0, h_ref = 0, seconds = 2;
  ContactMetrics reference, scheme[4];
#ifdef MJPOS_REAL_PEER
  peer::Json job;
#endif
};

// each model with servos made at each f_n of kContactFns; the rows whose reference converged in
// contact with a positive force
std::vector<ContactRow> ContactTable(const std::vector<RealModel>& models) {
  const int nfn = sizeof(kContactFns) / sizeof(kContactFns[0]);
  std::vector<ContactRow> rows(models.size() * nfn);
  OnEveryCore(rows.size(), [&](size_t k) {
    ContactRow& row = rows[k];
    row.model = models[k / nfn].Id();
    row.fn = kContactFns[k % nfn];
    ModelPtr m(LoadReal(kDir, models[k / nfn]));
    if (!m || MakeRealServos(m.get(), row.fn, kRealContactZeta).empty()) return;
    m->opt.integrator = mjINT_IMPLICIT;
    m->opt.timestep = kRealContactH;
    SetScheme(m.get(), Scheme::kStock);
    row.reference = ContactReference(m.get(), &row.seconds, kRealContactRefSeconds, kContactWindow,
                                     -1, kContactTol, kRealContactRefHmin, &row.h_ref);
    if (!row.h_ref || !row.reference.stable || !(row.reference.force > 0)) {
      row.h_ref = 0;
      return;
    }
    const Scheme schemes[3] = {Scheme::kStock, Scheme::kBackwardEuler, Scheme::kWeighted};
    for (int i = 0; i < 3; ++i) {
      SetScheme(m.get(), schemes[i]);
      row.scheme[i] = MeasureContact(m.get(), row.seconds, kContactWindow, -1);
    }
#ifdef MJPOS_REAL_PEER
    SetScheme(m.get(), Scheme::kStock);
    row.job = {{"file", kDir + "/" + models[k / nfn].path},
               {"integrator", "discrete"},
               {"timestep", kRealContactH},
               {"model", peer::ServoEdits(m.get())},
               {"steps", std::lround(row.seconds / kRealContactH)},
               {"every", ContactStride(kRealContactH)},
               {"trace", {"normalforce", "depth", "ncon"}}};
#endif
  });
  std::vector<ContactRow> kept;
  for (const ContactRow& row : rows) {
    if (row.h_ref) kept.push_back(row);
  }
#ifdef MJPOS_REAL_PEER
  peer::Json jobs = peer::Json::array();
  for (const ContactRow& row : kept) jobs.push_back(row.job);
  try {
    peer::Json results = peer::Run(jobs);
    for (size_t i = 0; i < kept.size(); ++i) {
      kept[i].scheme[3] = peer::StandingOf(kept[i].seconds, -1, kRealContactH, results[i]);
    }
  } catch (const std::exception& e) {
    std::cerr << "mjpos_real_table: peer: " << e.what() << "\n";
  }
#endif
  return kept;
}

// force / penetration / ripple, or "diverges"; with ref, force and penetration as ratios to it
std::string ContactCell(const ContactMetrics& c, const ContactMetrics* ref = nullptr) {
  if (!c.stable) return "diverges";
  char text[96];
  if (ref) {
    std::snprintf(text, sizeof(text), "%.4f / %.3f / %.2g", c.force / ref->force,
                  c.penetration / ref->penetration, c.ripple);
  } else {
    std::snprintf(text, sizeof(text), "%.4g / %.3g / %.2g", c.force, c.penetration, c.ripple);
  }
  return text;
}

// m's actuators in words: how many of each kind, the motors this slice makes servos first
std::string ActuatorKinds(const mjModel* m) {
  int motors = 0, tendon = 0, servos = 0, servos_dyn = 0, dyn = 0, other = 0;
  for (int i = 0; i < m->nu; ++i) {
    bool motor = m->actuator_gaintype[i] == mjGAIN_FIXED && m->actuator_biastype[i] == mjBIAS_NONE;
    if (IsConvertibleMotor(m, i)) {
      motors++;
    } else if (m->actuator_dyntype[i] != mjDYN_NONE) {
      (m->actuator_biastype[i] == mjBIAS_AFFINE ? servos_dyn : dyn)++;
    } else if (motor) {
      tendon++;
    } else if (m->actuator_biastype[i] == mjBIAS_AFFINE) {
      servos++;
    } else {
      other++;
    }
  }
  std::string text;
  auto add = [&](int n, const char* what) {
    if (n) text += (text.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(motors, "motors on joints (made servos)");
  add(tendon, "motors on tendons (kept)");
  add(servos, "own position servos (kept)");
  add(servos_dyn, "own position servos with activation dynamics (kept)");
  add(dyn, "motors with activation dynamics (kept)");
  add(other, "other (kept)");
  return text.empty() ? "none" : text;
}

// The accuracy table's settings, where stock is bounded on most models: f_n, zeta, h
struct AccuracySetting {
  double fn, zeta, h;
};
constexpr AccuracySetting kAccuracySettings[] = {{30, 0.7, 0.005}, {10, 0, 0.010}};
constexpr int kAccuracySettingCount = std::size(kAccuracySettings);

// One model at one accuracy setting: where stock is bounded, the reference (stock at
// MotionReferenceStep, support/motion.h) and at half its step, judged for stock's error
// (MotionJudged, as the weighted mode's motion suite judges), and the hinge-position errors
// (MotionError) of stock, the flag and the weighted mode against it
struct AccuracyRow {
  bool ran = false, stock_bounded = false, reference_bounded = false, hinges = false;
  bool judged = false;
  double h_ref = 0;
  double error[3] = {NAN, NAN, NAN};
};

AccuracyRow MeasureAccuracy(const mjModel* file, const AccuracySetting& a) {
  AccuracyRow row;
  ModelPtr m(mj_copyModel(nullptr, file));
  MakeRealServos(m.get(), a.fn, a.zeta);
  MotionSetting s;  // random targets every 40 ms, seed 0
  MotionRun stock = RunReal(m.get(), s, Scheme::kStock, a.h);
  row.ran = true;
  row.stock_bounded = stock.bounded;
  if (!stock.bounded) return row;
  row.h_ref = MotionReferenceStep(a.h, a.fn);
  MotionRun reference = RunReal(m.get(), s, Scheme::kStock, row.h_ref);
  MotionRun half = RunReal(m.get(), s, Scheme::kStock, row.h_ref / 2);
  row.reference_bounded = reference.bounded && half.bounded;
  row.hinges = !stock.samples.empty();
  row.error[0] = MotionError(stock, reference);
  row.error[1] = MotionError(RunReal(m.get(), s, Scheme::kBackwardEuler, a.h), reference);
  row.error[2] = MotionError(RunReal(m.get(), s, Scheme::kWeighted, a.h), reference);
  row.judged = std::isfinite(row.error[0]) && MotionJudged(reference, half, row.error[0]);
  return row;
}

// the load table: every model as 2.2.2 loads it
std::string LoadTable() {
  std::ostringstream md;
  md << "| model | source | loads | nq | nv | nu | actuators | keyframe | converted |\n";
  md << "|---|---|---|---|---|---|---|---|---|\n";
  for (const RealModel& r : RealModels(kDir)) {
    std::string error;
    ModelPtr m(LoadReal(kDir, r, &error));
    md << "| " << r.name << " | " << r.source << " | ";
    if (!m) {
      md << error << " | | | | | | " << r.converted << " |\n";
      continue;
    }
    md << "yes | " << m->nq << " | " << m->nv << " | " << m->nu << " | " << ActuatorKinds(m.get())
       << " | " << (m->nkey ? "yes (" + std::to_string(m->nkey) + ")" : std::string("no"))
       << " | " << r.converted << " |\n";
  }
  return md.str();
}

}  // namespace
}  // namespace mjpos::real

int main(int argc, char** argv) {
  using namespace mjpos;        // NOLINT
  using namespace mjpos::real;  // NOLINT
  std::string out;
  bool loads = false;
  int profile_model = -1, profile_flag = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--out=", 0) == 0) {
      out = a.substr(6);
    } else if (a == "--loads") {
      loads = true;
    } else if (std::sscanf(a.c_str(), "--profile=%d:%d", &profile_model, &profile_flag) != 2) {
      std::cerr << "usage: mjpos_real_table [--out=FILE] [--loads]\n";
      return 2;
    }
  }
  if (profile_model >= 0) return Profile(profile_model, profile_flag);
  if (loads) {
    std::string md = LoadTable();
    if (out.empty()) {
      std::cout << md;
    } else {
      std::ofstream(out) << md;
    }
    return 0;
  }
  auto start = std::chrono::steady_clock::now();
  mju_user_warning = Quiet;

  // the models, loaded once; their servos made per f_n and zeta
  std::vector<Row> rows;
  std::vector<ModelPtr> files;
  for (const RealModel& r : RealModels(kDir)) {
    Row row;
    row.model = r;
    files.emplace_back(LoadReal(kDir, r, &row.error));
    if (files.back()) {
      row.nu = files.back()->nu;
      ModelPtr m(mj_copyModel(nullptr, files.back().get()));
      row.converted = static_cast<int>(MakeRealServos(m.get(), 10, 0).size());
      row.ran = row.nu > 0;
    }
    rows.push_back(row);
  }

  // ours: one task per model, f_n and zeta (three timesteps, three schemes)
  const int tunings = kSettings / 3;
  MotionSetting s;  // random targets every 40 ms, seed 0
#ifdef MJPOS_REAL_PEER
  std::vector<peer::Json> jobs(rows.size() * kSettings * 2);
#endif
  OnEveryCore(rows.size() * tunings, [&](size_t task) {
    Row& row = rows[task / tunings];
    if (!row.ran) return;
    int first = static_cast<int>(task % tunings) * 3;
    ModelPtr m(mj_copyModel(nullptr, files[task / tunings].get()));
    MakeRealServos(m.get(), Fn(first), Zeta(first));
    for (int k = first; k < first + 3; ++k) {
      row.bounded[k][kStock] = RunReal(m.get(), s, Scheme::kStock, Step(k)).bounded;
      row.bounded[k][kFlag] = RunReal(m.get(), s, Scheme::kBackwardEuler, Step(k)).bounded;
      row.bounded[k][kWeighted] = RunReal(m.get(), s, Scheme::kWeighted, Step(k)).bounded;
#ifdef MJPOS_REAL_PEER
      SetScheme(m.get(), Scheme::kStock);
      for (int p = 0; p < 2; ++p) {
        jobs[((task / tunings) * kSettings + k) * 2 + p] =
            RealJob(kDir, row.model, m.get(), s, kPeerIntegrators[p], Step(k));
      }
#endif
    }
  });
  double ours = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // upstream's discrete and implicit: the jobs in a few driver processes, one per core at a time
  std::string peer_version = "not built";
  double peer_seconds = 0;
#ifdef MJPOS_REAL_PEER
  peer_version = peer::Version();
  std::vector<size_t> index;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i].is_null()) index.push_back(i);
  }
  const size_t chunks = 8;
  std::vector<std::string> failures(chunks);
  OnEveryCore(chunks, [&](size_t c) {
    peer::Json batch = peer::Json::array();
    std::vector<size_t> mine;
    for (size_t i = c; i < index.size(); i += chunks) {
      batch.push_back(jobs[index[i]]);
      mine.push_back(index[i]);
    }
    if (mine.empty()) return;
    try {
      peer::Json results = peer::Run(batch);
      for (size_t j = 0; j < mine.size(); ++j) {
        int steps = batch[j]["steps"].get<int>();
        size_t job = mine[j] / 2;
        rows[job / kSettings].bounded[job % kSettings][kDiscrete + mine[j] % 2] =
            PeerBounded(results[j], steps);
        if (results[j].contains("error")) failures[c] = results[j]["error"].get<std::string>();
      }
    } catch (const std::exception& e) {
      failures[c] = e.what();
    }
  });
  for (const std::string& f : failures) {
    if (!f.empty()) std::cerr << "mjpos_real_table: peer: " << f << "\n";
  }
  peer_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - ours;
#endif

  // the flag's cost: each model off and on in its own process under callgrind, on every core
  OnEveryCore(2 * rows.size(), [&](size_t k) {
    Row& row = rows[k / 2];
    if (!row.ran) return;
    row.instr[k % 2] = CallgrindPerStep(
        SelfCommand() + " --profile=" + std::to_string(k / 2) + ":" + std::to_string(k % 2), "",
        kCostSteps, false);
  });

  // the table
  std::ostringstream md;
  md << "Real models made servos (real/README.md): f_n 10/30/100 Hz x zeta 0/0.7 x h 2/5/10 ms, "
        "random targets every "
     << 1e3 * s.period << " ms for " << kMotionSeconds
     << " s from the start state, contact on; bounded: finite, no bad-state warning, "
        "|qvel| <= "
     << kMotionVmax << ". Peer: upstream MuJoCo " << peer_version
     << " (`discrete`; its `implicit` checks that it runs the same servos, commands and start "
        "as stock here). Instructions: inside `mj_step` (callgrind), "
     << kCostSteps << " steps at f_n " << kCostFn << " Hz, zeta " << kCostZeta << ", h "
     << 1e3 * kCostH << " ms after " << kCostSteps
     << " with the flag from the start state ('diverges': stock does there).\n\n";
  md << "| model | source | nu (servos made) | stock | flag | weighted | discrete | 4.0 implicit "
        "| flag or weighted diverges, stock or discrete bounded (f_n/zeta/h) | instructions "
        "flag / off |\n";
  md << "|---|---|---|---|---|---|---|---|---|---|\n";
  int total[kSchemes] = {}, runs = 0, worse = 0;
  for (const Row& row : rows) {
    md << "| " << row.model.name << " | " << row.model.source << " | ";
    if (!row.error.empty()) {
      md << "does not load: " << row.error << " | | | | | | | |\n";
      continue;
    }
    if (!row.ran) {
      md << "0 | no actuators | | | | | | |\n";
      continue;
    }
    md << row.nu << " (" << row.converted << ")";
    runs++;
    for (int sc = 0; sc < kSchemes; ++sc) {
      int n = 0;
      for (int k = 0; k < kSettings; ++k) n += row.bounded[k][sc];
      total[sc] += n;
#ifdef MJPOS_REAL_PEER
      md << " | " << n;
#else
      md << " | " << (sc >= kDiscrete ? std::string("-") : std::to_string(n));
#endif
    }
    md << " | ";
    std::string list;
    for (int k = 0; k < kSettings; ++k) {
      const bool* b = row.bounded[k];
      bool other = b[kStock] || b[kDiscrete];
      if (other && (!b[kFlag] || !b[kWeighted])) {
        list += (list.empty() ? "" : ", ") + SettingName(k) +
                (!b[kFlag] && !b[kWeighted] ? " (both)" : !b[kFlag] ? " (flag)" : " (weighted)");
        worse++;
      }
    }
    char ratio[32] = "diverges";
    if (!std::isnan(row.instr[1] / row.instr[0])) {
      std::snprintf(ratio, sizeof(ratio), "%.3f", row.instr[1] / row.instr[0]);
    }
    md << (list.empty() ? "none" : list) << " | " << ratio << " |\n";
  }
  md << "\nTotals over " << runs << " models x " << kSettings << " settings:";
  for (int sc = 0; sc < kSchemes; ++sc) md << " " << kSchemeNames[sc] << " " << total[sc] << ";";
  md << " settings where the flag or the weighted mode diverges and stock or discrete does not: "
     << worse << ".\n";
  char timing[160];
  std::snprintf(timing, sizeof(timing),
                "\nWall time: %.1f s (this library %.1f s, the peer %.1f s).\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                ours, peer_seconds);
  md << timing;

  // the contact table
  auto contact_start = std::chrono::steady_clock::now();
  std::vector<ContactRow> contact = ContactTable(RealModels(kDir));
  md << "\n### In contact\n\nEach model made servos at f_n 30 and 100 Hz, zeta " << kRealContactZeta
     << " (kv 0), held from qpos0 with every control 0, h " << 1e3 * kRealContactH
     << " ms; discrete: upstream's; the reference: stock at h/N, N doubled until force and "
        "penetration agree to "
     << 100 * kContactTol << " % over three halvings (h/N at least " << kRealContactRefHmin
     << " s) and at rest (the run doubled up to " << kRealContactRefSeconds
     << " s); the rows whose reference converged in contact, with a positive force. The "
        "reference: the summed normal force (N) / mean penetration (m) / ripple over the last "
     << kContactWindow
     << " s; each scheme: its force and penetration over the reference's / its ripple.\n\n";
  md << "| model | f_n | h_ref | reference | stock | flag | weighted | discrete |\n"
        "|---|---|---|---|---|---|---|---|\n";
  int within[4] = {}, stable[4] = {}, pen_within[4] = {};
  for (const ContactRow& row : contact) {
    char head[96];
    std::snprintf(head, sizeof(head), "| %s | %g Hz | %.3g ms | ", row.model.c_str(), row.fn,
                  1e3 * row.h_ref);
    md << head << ContactCell(row.reference);
    for (int i = 0; i < 4; ++i) {
      md << " | "
         << (i < 3 || kPeerBuilt ? ContactCell(row.scheme[i], &row.reference) : "not built");
      if (!row.scheme[i].stable) continue;
      stable[i]++;
      within[i] += RelDiff(row.scheme[i].force, row.reference.force) <= kContactTol;
      pen_within[i] += RelDiff(row.scheme[i].penetration, row.reference.penetration) <= kContactTol;
    }
    md << " |\n";
  }
  const char* names[4] = {"stock", "the flag", "the weighted mode", "4.0 discrete"};
  md << "\nIn contact: " << contact.size() << " rows.";
  for (int i = 0; i < 4; ++i) {
    md << " " << names[i] << ": stable in " << stable[i] << ", force within "
       << 100 * kContactTol << " % of the reference's in " << within[i] << ", penetration in "
       << pen_within[i] << ";";
  }
  std::snprintf(timing, sizeof(timing), " %.1f s.\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - contact_start)
                    .count());
  md << timing;

  // the accuracy table
  auto accuracy_start = std::chrono::steady_clock::now();
  std::vector<AccuracyRow> accuracy(rows.size() * kAccuracySettingCount);
  OnEveryCore(accuracy.size(), [&](size_t k) {
    if (rows[k / kAccuracySettingCount].ran) {
      accuracy[k] = MeasureAccuracy(files[k / kAccuracySettingCount].get(),
                                    kAccuracySettings[k % kAccuracySettingCount]);
    }
  });
  md << "\n### Accuracy\n\nThe same random targets, against the converged reference: stock at "
        "h_ref = h / (10 * 2^k), the first with h_ref * 2 pi f_n <= "
     << kMotionRefResolution
     << ", where stock is bounded at h; each cell the RMS over 10 ms samples and hinges of the "
        "run's hinge positions against the reference's (rad). Judged: the reference at half its "
        "step moves by at most "
     << kMotionResolved
     << " of stock's error (else the run is chaotic: any change of step sends it elsewhere).\n\n";
  md << "| model | f_n / zeta / h | h_ref | judged | stock | flag | weighted | flag / stock | "
        "weighted / stock |\n|---|---|---|---|---|---|---|---|---|\n";
  std::vector<double> ratios[2];
  int judged = 0, at_most[2] = {}, stock_bounded = 0;
  for (size_t k = 0; k < accuracy.size(); ++k) {
    const AccuracyRow& a = accuracy[k];
    const AccuracySetting& as = kAccuracySettings[k % kAccuracySettingCount];
    if (!a.ran) continue;
    char head[160];
    std::snprintf(head, sizeof(head), "| %s | %g Hz / %g / %g ms | ",
                  rows[k / kAccuracySettingCount].model.Id().c_str(), as.fn, as.zeta, 1e3 * as.h);
    md << head;
    if (!a.stock_bounded) {
      md << "stock diverges | | | | | | |\n";
      continue;
    }
    stock_bounded++;
    if (!a.hinges || !a.reference_bounded) {
      md << (a.hinges ? "the reference diverges" : "no hinges") << " | | | | | | |\n";
      continue;
    }
    char cells[200];
    std::snprintf(cells, sizeof(cells), "%.3g ms | %s | %.3g | %.3g | %.3g | %.3f | %.3f |\n",
                  1e3 * a.h_ref, a.judged ? "yes" : "no (chaotic)", a.error[0], a.error[1],
                  a.error[2], a.error[1] / a.error[0], a.error[2] / a.error[0]);
    md << cells;
    if (!a.judged) continue;
    judged++;
    for (int i = 0; i < 2; ++i) {
      ratios[i].push_back(a.error[i + 1] / a.error[0]);
      at_most[i] += WithinStock(a.error[i + 1], a.error[0]);
    }
  }
  md << "\nAccuracy: " << stock_bounded << " runs where stock is bounded, " << judged
     << " judged.";
  const char* modes[2] = {"the flag", "the weighted mode"};
  for (int i = 0; i < 2; ++i) {
    std::vector<double>& r = ratios[i];
    if (r.empty()) continue;
    std::sort(r.begin(), r.end());
    char text[200];
    std::snprintf(text, sizeof(text),
                  " %s: error over stock's median %.3f, largest %.3f, within 1.05x in %d;",
                  modes[i], r[r.size() / 2], r.back(), at_most[i]);
    md << text;
  }
  std::snprintf(timing, sizeof(timing), " %.1f s.\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - accuracy_start)
                    .count());
  md << timing;

  if (out.empty()) {
    std::cout << md.str();
  } else {
    std::ofstream(out) << md.str();
    std::cerr << "mjpos_real_table: wrote " << out << timing;
  }
  return 0;
}
