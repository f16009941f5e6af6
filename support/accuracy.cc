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

#include "support/accuracy.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <unsupported/Eigen/MatrixFunctions>
#include <mujoco/mujoco.h>
#include "support/models.h"
#include "support/one_dof.h"

namespace mjpos {

//------------------------------ models tuned per joint --------------------------------------------

std::string ChainSpecXml(const ChainSpec& spec, double h) {
  auto at = [](const std::vector<double>& v, int i, double dflt) {
    return i < static_cast<int>(v.size()) ? v[i] : dflt;
  };
  std::ostringstream xml;
  xml.precision(10);
  xml << "<mujoco>\n  <option timestep=\"" << h << "\" integrator=\"implicit\">"
      << "<flag contact=\"disable\"/></option>\n  <default><joint armature=\"" << spec.armature
      << "\"/></default>\n  <worldbody>\n";
  double prev = 0;
  for (int i = 0; i < spec.n; ++i) {
    bool slide = i < static_cast<int>(spec.slide.size()) && spec.slide[i];
    double len = at(spec.length, i, 0.2);
    const char* joint = slide ? "slide\" axis=\"1 0 0" : i % 2 ? "hinge\" axis=\"0 0 1"
                                                               : "hinge\" axis=\"0 1 0";
    xml << "<body pos=\"" << prev << " 0 0\"><joint name=\"j" << i << "\" type=\"" << joint
        << "\"/><geom type=\"capsule\" size=\"0.02\" fromto=\"0 0 0 " << len << " 0 0\" mass=\""
        << at(spec.mass, i, 0.5) << "\"/>\n";
    prev = len;
  }
  for (int i = 0; i < spec.n; ++i) xml << "</body>";
  xml << "\n  </worldbody>\n";
  if (spec.tendon >= 0) {
    xml << "  <tendon><fixed name=\"t\"><joint joint=\"j" << spec.tendon << "\" coef=\"1\"/>"
        << "<joint joint=\"j" << spec.tendon + 1 << "\" coef=\"-0.5\"/></fixed></tendon>\n";
  }
  std::ostringstream servo;
  servo.precision(10);
  servo << "    <general tendon=\"t\" gear=\"" << spec.tendon_gear
        << "\" gainprm=\"1\" biastype=\"affine\" biasprm=\"0 -1 0\"/>\n";
  const std::string tendon_servo = servo.str();
  xml << "  <actuator>\n";
  if (spec.tendon >= 0 && spec.tendon_first) xml << tendon_servo;
  for (int i = 0; i < spec.n; ++i) {
    xml << "    <general joint=\"j" << i << "\" gear=\"" << at(spec.gear, i, 1)
        << "\" gainprm=\"1\" biastype=\"affine\" biasprm=\"0 -1 0\"/>\n";
  }
  if (spec.tendon >= 0 && !spec.tendon_first) xml << tendon_servo;
  xml << "  </actuator>\n</mujoco>\n";
  return xml.str();
}

ChainSpec NamedChainSpec(const std::string& name) {
  ChainSpec spec;
  if (name == "chain5 mixed") {
    spec.n = 5;
    spec.slide = {false, true, false, false, true};
    spec.gear = {1, 2, 0.5, 1.5, 3};
    spec.length = {0.3, 0.1, 0.25, 0.15, 0.2};
    spec.mass = {2, 0.3, 1, 0.2, 0.1};
    spec.tendon = 1;
  } else if (name == "chain8 mixed") {
    spec.n = 8;
    spec.slide = {true, false, false, true, false, false, false, true};
    spec.gear = {2, 1, 0.7, 1, 3, 1, 0.5, 1};
    spec.length = {0.1, 0.4, 0.3, 0.1, 0.2, 0.2, 0.05, 0.1};
    spec.mass = {1, 1, 0.5, 0.5, 0.3, 0.3, 0.1, 0.05};
    spec.tendon = 5;
    spec.armature = 1e-3;
  } else {
    spec.n = std::stoi(name.substr(5));  // "chainN"
  }
  return spec;
}

ChainSpec RandomChainSpec(std::mt19937* rng) {
  std::uniform_real_distribution<double> unit(0, 1);
  auto logu = [&](double lo, double hi) { return std::pow(10.0, lo + (hi - lo) * unit(*rng)); };
  ChainSpec spec;
  spec.n = 2 + static_cast<int>(unit(*rng) * 11);
  for (int i = 0; i < spec.n; ++i) {
    spec.slide.push_back(unit(*rng) < 0.2);
    spec.gear.push_back(0.5 + 2.5 * unit(*rng));
    spec.length.push_back(0.05 + 0.35 * unit(*rng));
    spec.mass.push_back(logu(std::log10(0.05), std::log10(2.0)));
  }
  spec.tendon = unit(*rng) < 0.5 ? static_cast<int>(unit(*rng) * (spec.n - 1)) : -1;
  spec.armature = unit(*rng) < 0.5 ? 0 : logu(-4, -2);
  return spec;
}

std::vector<TunedServo> TuneServos(mjModel* m, const std::vector<double>& fn, double zeta) {
  mjData* d = mj_makeData(m);
  mj_forward(m, d);
  std::vector<TunedServo> servos;
  std::vector<mjtNum> x(m->nv);
  for (int i = 0; i < m->nu; ++i) {
    if (m->actuator_biastype[i] != mjBIAS_AFFINE) continue;
    const mjtNum* moment = d->actuator_moment + i * m->nv;
    double invweight = InverseReflectedInertia(m, d, moment, x.data());
    double w = 2 * M_PI * fn[std::min<size_t>(i, fn.size() - 1)];
    double inertia = 1 / invweight;
    TunedServo sv;
    sv.actuator = i;
    int trn = m->actuator_trntype[i], id = m->actuator_trnid[2 * i];
    bool one_dof = (trn == mjTRN_JOINT || trn == mjTRN_JOINTINPARENT) &&
                   (m->jnt_type[id] == mjJNT_HINGE || m->jnt_type[id] == mjJNT_SLIDE);
    sv.dof = one_dof ? m->jnt_dofadr[id] : -1;
    sv.inertia = inertia;
    sv.target = d->actuator_length[i];
    servos.push_back(sv);
    double kp = inertia * w * w, kv = 2 * zeta * inertia * w;
    m->actuator_gaintype[i] = mjGAIN_FIXED;
    m->actuator_gainprm[mjNGAIN * i] = kp;
    m->actuator_biasprm[mjNBIAS * i] = 0;
    m->actuator_biasprm[mjNBIAS * i + 1] = -kp;
    m->actuator_biasprm[mjNBIAS * i + 2] = -kv;
  }
  mj_deleteData(d);
  return servos;
}

//------------------------------ classes of input --------------------------------------------------

const char* InputName(Input c) {
  switch (c) {
    case Input::kStep: return "step";
    case Input::kDecay: return "decay";
    case Input::kTrack002: return "track 0.02";
    case Input::kTrack01: return "track 0.1";
    case Input::kTrack03: return "track 0.3";
    case Input::kTrack1: return "track 1";
    case Input::kLoad: return "load";
  }
  return "";
}

double TrackingRatio(Input c) {
  switch (c) {
    case Input::kTrack002: return 0.02;
    case Input::kTrack01: return 0.1;
    case Input::kTrack03: return 0.3;
    case Input::kTrack1: return 1;
    default: return 0;
  }
}

namespace {

int BadWarnings(const mjData* d) {
  return d->warning[mjWARN_BADQPOS].number + d->warning[mjWARN_BADQVEL].number +
         d->warning[mjWARN_BADQACC].number;
}

}  // namespace

double InputWindow(Input c, double wn, double max_window) {
  double ratio = TrackingRatio(c);
  double window = 20 / wn;
  if (ratio > 0) window = std::max(window, 2 * M_PI / (ratio * wn));
  return std::min(window, max_window);
}

std::vector<double> Response(mjModel* m, const std::vector<TunedServo>& servos, double wn,
                             Input c, Scheme s, double h, int steps, int hold,
                             bool gravity_load) {
  double timestep = m->opt.timestep;
  int enable = m->opt.enableflags;
  mjtNum gravity[3] = {m->opt.gravity[0], m->opt.gravity[1], m->opt.gravity[2]};
  m->opt.timestep = h;
  SetScheme(m, s);
  if (!(c == Input::kLoad && gravity_load)) mju_zero3(m->opt.gravity);
  mjData* d = mj_makeData(m);

  // initial state: rest at the set points, or the decay's velocities; the load
  double ratio = TrackingRatio(c);
  for (size_t i = 0; i < servos.size(); ++i) {
    const TunedServo& sv = servos[i];
    double sign = i % 2 ? -1 : 1;
    d->ctrl[sv.actuator] = sv.target;
    if (sv.dof < 0) continue;
    if (c == Input::kDecay) d->qvel[sv.dof] = sign * kAmplitude * wn;
    if (c == Input::kLoad && !gravity_load) {
      double gear = m->actuator_gear[6 * sv.actuator];
      d->qfrc_applied[sv.dof] = sign * kAmplitude * sv.inertia * wn * wn * gear * gear;
    }
  }

  std::vector<double> out;
  int bad = BadWarnings(d);
  for (int k = 0; k < steps * hold; ++k) {
    // targets, held over each `hold` steps
    if (k % hold == 0) {
      double t = k * h;
      for (size_t i = 0; i < servos.size(); ++i) {
        double sign = i % 2 ? -1 : 1, offset = 0;
        if (c == Input::kStep) offset = sign * kAmplitude;
        if (ratio > 0) offset = kAmplitude * (std::sin(ratio * wn * t + i) - std::sin(i));
        d->ctrl[servos[i].actuator] = servos[i].target + offset;
      }
    }
    mj_step(m, d);
    if (BadWarnings(d) != bad) {
      out.clear();
      break;
    }
    if ((k + 1) % hold) continue;
    bool finite = true;
    for (const TunedServo& sv : servos) {
      if (sv.dof < 0) continue;
      int jnt = m->dof_jntid[sv.dof];
      double q = d->qpos[m->jnt_qposadr[jnt]] - m->qpos0[m->jnt_qposadr[jnt]];
      finite &= std::isfinite(q) && std::abs(q) < 1e6 * kAmplitude;
      out.push_back(q / kAmplitude);
    }
    if (!finite) {
      out.clear();
      break;
    }
  }

  mj_deleteData(d);
  m->opt.timestep = timestep;
  m->opt.enableflags = enable;
  mju_copy3(m->opt.gravity, gravity);
  return out;
}

bool ReleasedStable(mjModel* m, Scheme s, double release, double wn, double seconds) {
  SetScheme(m, s);
  mjData* d = mj_makeData(m);
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = (i % 2 ? -release : release) * wn;
  bool stable = StepStable(m, d, static_cast<int>(std::ceil(seconds / m->opt.timestep)));
  mj_deleteData(d);
  return stable;
}

double ResponseError(const std::vector<double>& response, const std::vector<double>& reference) {
  if (response.empty() || response.size() != reference.size()) return INFINITY;
  double sum = 0;
  for (size_t i = 0; i < response.size(); ++i) {
    double e = response[i] - reference[i];
    sum += e * e;
  }
  return std::sqrt(sum / response.size());
}

SchemeErrors CompareSchemes(mjModel* m, const std::vector<TunedServo>& servos, double wn,
                            Input c, double h, bool gravity_load, double max_window) {
  int steps = std::max(1, static_cast<int>(std::ceil(InputWindow(c, wn, max_window) / h)));
  std::vector<double> ref =
      Response(m, servos, wn, c, Scheme::kStock, h / 100, steps, 100, gravity_load);
  auto error = [&](Scheme s) {
    return ResponseError(Response(m, servos, wn, c, s, h, steps, 1, gravity_load), ref);
  };
  return {error(Scheme::kStock), error(Scheme::kBackwardEuler), error(Scheme::kWeighted)};
}

std::vector<double> ExactOneDofResponse(double wn, double zeta, Input c, double h, int steps) {
  // q'' = wn^2 (r + load - q) - 2 zeta wn q', held input u = r + load: [q, v, u]' = A [q, v, u]
  Eigen::Matrix3d a;
  a << 0, 1, 0, -wn * wn, -2 * zeta * wn, wn * wn, 0, 0, 0;
  Eigen::Matrix3d step = (a * h).exp();
  double ratio = TrackingRatio(c);
  Eigen::Vector3d x(0, c == Input::kDecay ? kAmplitude * wn : 0, 0);
  std::vector<double> out;
  for (int k = 0; k < steps; ++k) {
    double u = 0;
    if (c == Input::kStep || c == Input::kLoad) u = kAmplitude;
    if (ratio > 0) u = kAmplitude * std::sin(ratio * wn * k * h);
    x[2] = u;
    x = step * x;
    out.push_back(x[0] / kAmplitude);
  }
  return out;
}

double RatioToBaseline(const SchemeErrors& e) {
  return e.weighted / (std::isfinite(e.stock) ? e.stock : e.backward_euler);
}

}  // namespace mjpos
