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

#include "support/motion.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <mujoco/mujoco.h>
#include "support/accuracy.h"
#include "support/models.h"

namespace mjpos {
namespace {

// a servo's span: its joint's range, else kMotionSpan either side of its set point
struct Span {
  int actuator;
  double gear, lo, hi;
};

std::vector<Span> Spans(const mjModel* m, const std::vector<TunedServo>& servos) {
  std::vector<Span> spans;
  for (const TunedServo& sv : servos) {
    if (sv.dof < 0) continue;
    int jnt = m->dof_jntid[sv.dof];
    double gear = m->actuator_gear[6 * sv.actuator];
    double q0 = sv.target / gear;
    Span s{sv.actuator, gear, q0 - kMotionSpan, q0 + kMotionSpan};
    if (m->jnt_limited[jnt]) {
      s.lo = m->jnt_range[2 * jnt];
      s.hi = m->jnt_range[2 * jnt + 1];
    }
    spans.push_back(s);
  }
  return spans;
}

}  // namespace

int BadStateWarnings(const mjData* d) {
  return d->warning[mjWARN_BADQPOS].number + d->warning[mjWARN_BADQVEL].number +
         d->warning[mjWARN_BADQACC].number;
}

bool MotionDiverged(const mjModel* m, const mjData* d, int warnings) {
  if (BadStateWarnings(d) != warnings) return true;
  for (int i = 0; i < m->nq; ++i) {
    if (!std::isfinite(d->qpos[i])) return true;
  }
  for (int i = 0; i < m->nv; ++i) {
    if (!std::isfinite(d->qvel[i]) || std::abs(d->qvel[i]) > kMotionVmax) return true;
  }
  return false;
}

const char* CommandName(Command c) {
  switch (c) {
    case Command::kRandom: return "random";
    case Command::kStep: return "step";
    case Command::kTrack: return "track";
  }
  return "";
}

mjModel* LoadMotionSubject(const MotionSetting& s, const std::string& model_dir,
                           std::string* error, std::string* xml) {
  std::string text;
  if (s.subject == "humanoid") {
    std::ifstream file(model_dir + "/humanoid/humanoid.xml");
    std::stringstream buffer;
    buffer << file.rdbuf();
    text = buffer.str();
  } else if (s.subject == "arm7") {
    text = ChainXml(7, 1, 0, s.h);
  } else if (s.subject.rfind("chain", 0) == 0) {
    text = ChainSpecXml(NamedChainSpec(s.subject), s.h);
  }
  mjModel* m = nullptr;
  if (s.subject == "humanoid100") {
    m = LoadWithServos(model_dir + "/humanoid100/humanoid100.xml", 1, 0, error);
  } else if (!text.empty()) {
    m = LoadXmlString(text, error);
  }
  if (m && s.subject == "humanoid") MakeServosOfGearOne(m, 1, 0);
  if (!m) {
    if (error && error->empty()) *error = "no subject " + s.subject;
    return nullptr;
  }
  m->opt.integrator = mjINT_IMPLICIT;
  if (!s.contact) m->opt.disableflags |= mjDSBL_CONTACT;
  TuneServos(m, {s.fn}, s.zeta);
  if (xml) *xml = text;
  return m;
}

double MotionReferenceStep(double h, double fn) {
  double h_ref = h / 10;
  while (h_ref * 2 * M_PI * fn > kMotionRefResolution) h_ref /= 2;
  return h_ref;
}

std::vector<double> MotionControls(const mjModel* m, const MotionSetting& s, double h) {
  mjData* d = mj_makeData(m);
  mj_forward(m, d);
  std::vector<TunedServo> servos;
  for (int i = 0; i < m->nu; ++i) {
    int jnt = m->actuator_trnid[2 * i];
    if (m->actuator_biastype[i] != mjBIAS_AFFINE || m->actuator_trntype[i] != mjTRN_JOINT) {
      continue;
    }
    servos.push_back({i, m->jnt_dofadr[jnt], 0, d->actuator_length[i]});
  }
  mj_deleteData(d);
  std::vector<Span> spans = Spans(m, servos);

  // the targets of every period, the same for every timestep
  int periods = static_cast<int>(std::ceil(kMotionSeconds / s.period)) + 1;
  std::mt19937 rng(s.seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<double> table(periods * spans.size());
  for (double& x : table) x = unit(rng);

  int steps = static_cast<int>(std::lround(kMotionSeconds / h));
  std::vector<double> ctrl(static_cast<size_t>(steps) * m->nu);
  for (int k = 0; k < steps; ++k) {
    double t = k * h;
    int row = s.command == Command::kRandom ? static_cast<int>(std::floor(t / s.period + 1e-9)) : 0;
    for (size_t i = 0; i < spans.size(); ++i) {
      const Span& sp = spans[i];
      double q;
      if (s.command == Command::kTrack) {
        q = 0.5 * (sp.lo + sp.hi) + 0.5 * (sp.hi - sp.lo) * std::sin(2 * M_PI * t / s.period + i);
      } else {
        q = sp.lo + (sp.hi - sp.lo) * table[row * spans.size() + i];
      }
      ctrl[static_cast<size_t>(k) * m->nu + sp.actuator] = sp.gear * q;
    }
  }
  return ctrl;
}

std::string MotionSettingName(const MotionSetting& s) {
  char text[256];
  char period[32] = "";
  if (s.command != Command::kStep) std::snprintf(period, sizeof(period), " (%g s)", s.period);
  std::snprintf(text, sizeof(text), "%s%s, %s%s, f_n %g Hz, zeta %g, h %g ms", s.subject.c_str(),
                s.contact ? "" : " (contact off)", CommandName(s.command), period, s.fn, s.zeta,
                1e3 * s.h);
  return text;
}

MotionRun RunMotionFrom(const mjModel* m, mjData* d, const std::vector<double>& ctrl, int steps) {
  MotionRun run;
  const double h = m->opt.timestep;
  std::vector<int> hinges;
  for (int j = 0; j < m->njnt; ++j) {
    if (m->jnt_type[j] == mjJNT_HINGE) hinges.push_back(j);
  }
  int warnings = BadStateWarnings(d);
  int sampled = 0;
  for (int k = 0; k < steps; ++k) {
    mju_copy(d->ctrl, ctrl.data() + static_cast<size_t>(k) * m->nu, m->nu);
    int forward = d->timer[mjTIMER_FORWARD].number;
    mj_step(m, d);
    run.steps++;
    if (int extra = d->timer[mjTIMER_FORWARD].number - forward - 1; extra > 0) {
      run.substepped++;
      run.substeps += extra;
    }
    if (MotionDiverged(m, d, warnings)) {
      run.t_div = (k + 1) * h;
      return run;
    }
    for (int j : hinges) {
      run.peak_speed = std::max(run.peak_speed, std::abs(d->qvel[m->jnt_dofadr[j]]));
    }
    if (d->time >= (sampled + 1) * kMotionSample - 0.5 * h) {
      sampled++;
      for (int j : hinges) run.samples.push_back(d->qpos[m->jnt_qposadr[j]]);
    }
  }
  run.bounded = true;
  return run;
}

MotionRun RunMotion(mjModel* m, const MotionSetting& s, Scheme scheme, double h) {
  m->opt.timestep = h;
  SetScheme(m, scheme);
  std::vector<double> ctrl = MotionControls(m, s, h);
  mjData* d = mj_makeData(m);
  MotionRun run = RunMotionFrom(m, d, ctrl, static_cast<int>(std::lround(kMotionSeconds / h)));
  mj_deleteData(d);
  return run;
}

double MotionError(const MotionRun& run, const MotionRun& reference) {
  if (!run.bounded || !reference.bounded) return std::numeric_limits<double>::infinity();
  size_t n = std::min(run.samples.size(), reference.samples.size());
  if (n == 0) return std::numeric_limits<double>::infinity();
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    double e = run.samples[i] - reference.samples[i];
    sum += e * e;
  }
  return std::sqrt(sum / n);
}

MotionResult MeasureMotion(const MotionSetting& s, const std::string& model_dir) {
  MotionResult r;
  r.setting = s;
  mjModel* m = LoadMotionSubject(s, model_dir);
  if (!m) return r;
  r.loaded = true;
  r.h_ref = MotionReferenceStep(s.h, s.fn);
  r.reference = RunMotion(m, s, Scheme::kStock, r.h_ref);
  r.reference_bounded = r.reference.bounded && RunMotion(m, s, Scheme::kStock, r.h_ref / 2).bounded;
  r.stock = RunMotion(m, s, Scheme::kStock, s.h);
  r.flag = RunMotion(m, s, Scheme::kBackwardEuler, s.h);
  r.weighted = RunMotion(m, s, Scheme::kWeighted, s.h);
  mj_deleteModel(m);
  return r;
}

std::vector<MotionSetting> WeightedMotionSettings() {
  const std::pair<const char*, bool> subjects[] = {
      {"chain2", false}, {"chain4", false}, {"chain7", false},   {"chain12", false},
      {"arm7", false},   {"humanoid", true}, {"humanoid", false}};
  const std::pair<Command, double> commands[] = {{Command::kRandom, 0.02},
                                                 {Command::kRandom, 0.05},
                                                 {Command::kStep, kMotionSeconds},
                                                 {Command::kTrack, 0.5}};
  std::vector<MotionSetting> settings;
  for (auto [subject, contact] : subjects) {
    for (auto [command, period] : commands) {
      for (double fn : {10.0, 30.0, 100.0, 300.0}) {
        for (double zeta : {0.0, 0.05, 0.3, 1.0}) {
          for (double h : {0.002, 0.005, 0.010}) {
            MotionSetting s;
            s.subject = subject;
            s.contact = contact;
            s.command = command;
            s.period = period;
            s.fn = fn;
            s.zeta = zeta;
            s.h = h;
            s.seed = 1;
            settings.push_back(s);
          }
        }
      }
    }
  }
  return settings;
}

bool MotionJudged(const MotionRun& reference, const MotionRun& half, double error) {
  return MotionError(reference, half) <= kMotionResolved * error;
}

WeightedMotionResult MeasureWeightedMotion(const MotionSetting& s, const std::string& model_dir,
                                           bool accuracy) {
  WeightedMotionResult r;
  r.setting = s;
  mjModel* m = LoadMotionSubject(s, model_dir);
  if (!m) return r;
  r.loaded = true;
  r.stock = RunMotion(m, s, Scheme::kStock, s.h);
  r.flag = RunMotion(m, s, Scheme::kBackwardEuler, s.h);
  r.weighted = RunMotion(m, s, Scheme::kWeighted, s.h);
  if (accuracy && r.stock.bounded) {
    double h_ref = MotionReferenceStep(s.h, s.fn);
    MotionRun reference = RunMotion(m, s, Scheme::kStock, h_ref);
    MotionRun half = RunMotion(m, s, Scheme::kStock, h_ref / 2);
    r.stock_error = MotionError(r.stock, reference);
    r.weighted_error = MotionError(r.weighted, reference);
    r.judged = MotionJudged(reference, half, r.stock_error);
  }
  mj_deleteModel(m);
  return r;
}

}  // namespace mjpos
