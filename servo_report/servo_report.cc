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

#include "servo_report/servo_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <mujoco/mujoco.h>

namespace mjpos {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;

// tolerance on the pole modulus: rigid-body modes have |z| = 1 exactly (a Jordan block, whose
// computed eigenvalues are off by about sqrt(machine epsilon))
constexpr double kUnstableTol = 1e-6;

// thresholds of the "near" verdict
constexpr double kNearRatio = 0.9;     // kp within 10% of the cap
constexpr double kRingModulus = 0.98;  // or a pole with |z| > 0.98 and Re z < 0

const char* IntegratorName(int integrator) {
  switch (integrator) {
    case mjINT_EULER: return "euler";
    case mjINT_RK4: return "rk4";
    case mjINT_IMPLICIT: return "implicit";
  }
  return "?";
}

const char* ScopeName(int scope) {
  switch (scope) {
    case mjPOSSCOPE_RESTORING: return "RESTORING";
    case mjPOSSCOPE_ZERO: return "ZERO";
    case mjPOSSCOPE_NONRESTORING: return "NONRESTORING";
    case mjPOSSCOPE_CLAMPED: return "CLAMPED";
    case mjPOSSCOPE_GAINBIAS: return "GAINBIAS";
    case mjPOSSCOPE_TRANSMISSION: return "TRANSMISSION";
    case mjPOSSCOPE_DISABLED: return "DISABLED";
  }
  return "?";
}

std::string Name(const mjModel* m, int type, int id) {
  const char* name = mj_id2name(m, type, id);
  return name && *name ? name : "#" + std::to_string(id);
}

Verdict Classify(const Discrete& z, double kp, double cap) {
  if (z.modulus > 1 + kUnstableTol) return Verdict::kUnstable;
  if (std::isfinite(cap) && cap > 0 && kp >= kNearRatio * cap) return Verdict::kNear;
  if (z.modulus > kRingModulus && z.real < 0) return Verdict::kNear;
  return Verdict::kStable;
}

std::string GainName(const mjModel* m, int i) {
  static const char* gain[] = {"fixed", "affine", "muscle", "user"};
  static const char* bias[] = {"none", "affine", "muscle", "user"};
  int g = m->actuator_gaintype[i], b = m->actuator_biastype[i];
  return std::string(g >= 0 && g < 4 ? gain[g] : "?") + "/" + (b >= 0 && b < 4 ? bias[b] : "?");
}

std::string DofList(const mjModel* m, int jnt) {
  int n = m->jnt_type[jnt] == mjJNT_FREE ? 6 : m->jnt_type[jnt] == mjJNT_BALL ? 3 : 1;
  int adr = m->jnt_dofadr[jnt];
  return n == 1 ? "dof " + std::to_string(adr)
                : "dofs " + std::to_string(adr) + "-" + std::to_string(adr + n - 1);
}

const char* JointTypeName(int type) {
  switch (type) {
    case mjJNT_FREE: return "free";
    case mjJNT_BALL: return "ball";
    case mjJNT_SLIDE: return "slide";
    case mjJNT_HINGE: return "hinge";
  }
  return "?";
}

void DescribeTransmission(const mjModel* m, int i, ServoRow* row) {
  int id = m->actuator_trnid[2 * i];
  switch (m->actuator_trntype[i]) {
    case mjTRN_JOINT:
    case mjTRN_JOINTINPARENT:
      row->transmission = m->actuator_trntype[i] == mjTRN_JOINT ? "joint" : "jointinparent";
      row->target = Name(m, mjOBJ_JOINT, id) + " (" + JointTypeName(m->jnt_type[id]) + ", " +
                    DofList(m, id) + ")";
      break;
    case mjTRN_TENDON: {
      int adr = m->tendon_adr[id], num = m->tendon_num[id];
      bool fixed = num > 0 && m->wrap_type[adr] == mjWRAP_JOINT;
      row->transmission = fixed ? "tendon" : "spatial tendon";
      row->target = Name(m, mjOBJ_TENDON, id);
      if (fixed) {
        row->target += " [";
        for (int a = adr; a < adr + num; ++a) {
          row->target += (a > adr ? " " : "") + Name(m, mjOBJ_JOINT, m->wrap_objid[a]);
        }
        row->target += "]";
      }
      break;
    }
    case mjTRN_SITE:
      row->transmission = "site";
      row->target = Name(m, mjOBJ_SITE, id);
      break;
    case mjTRN_BODY:
      row->transmission = "body";
      row->target = Name(m, mjOBJ_BODY, id);
      break;
    case mjTRN_SLIDERCRANK:
      row->transmission = "slidercrank";
      row->target = Name(m, mjOBJ_SITE, id) + "/" +
                    Name(m, mjOBJ_SITE, m->actuator_trnid[2 * i + 1]);
      break;
    default:
      row->transmission = "?";
  }
}

// one-dof analysis of a row whose kp, kv, damping and inertia are set
void AnalyzeRow(int integrator, double h, ServoRow* row) {
  if (!row->slopes_known || !std::isfinite(row->inertia) || !(row->inertia > 0)) {
    row->verdict = Verdict::kUnknown;
    row->flag_verdict = Verdict::kUnknown;
    return;
  }
  double I = row->inertia, kp = row->kp, c = row->kv + row->damping;
  if (kp > 0) {
    row->omega_n = std::sqrt(kp / I);
    row->f_n = row->omega_n / (2 * kPi);
    row->zeta = c / (2 * std::sqrt(kp * I));
    row->h_omega = h * row->omega_n;
  }
  row->cap = OneDofCap(integrator, h, I, row->kv, row->damping);
  row->ratio = std::isfinite(row->cap) ? (row->cap > 0 ? kp / row->cap : kInf) : 0;
  row->stock = OneDofMap(integrator, false, h, I, kp, row->kv, row->damping);
  row->verdict = kp < 0 ? Verdict::kNonRestoring : Classify(row->stock, kp, row->cap);

  // flag: in scope is implicit in position, excluded is stock implicit
  row->flag = OneDofMap(mjINT_IMPLICIT, row->in_scope, h, I, kp, row->kv, row->damping,
                        row->theta);
  double flag_cap = row->in_scope ? kInf : OneDofCap(mjINT_IMPLICIT, h, I, row->kv, row->damping);
  row->flag_verdict = kp < 0 ? Verdict::kNonRestoring : Classify(row->flag, kp, flag_cap);

  // the force the flag's step applies per unit error from rest: inertia times its acceleration
  OneDofTerms step = OneDofStepTerms(mjINT_IMPLICIT, row->in_scope, h, I, kp, row->kv,
                                     row->damping, row->theta);
  row->flag_kp_step = I * step.stiffness / step.denominator;
}

//------------------------------ coupled system -----------------------------------------------------

using Mat = Eigen::MatrixXd;

struct Linear {
  Mat M, K, Kin, Ba, Bj;  // inertia, stiffness (all / in flag scope), explicit / joint damping
};

// spectral radius of the one-step map, position slopes scaled by s; state [q, h v]
double SystemRadius(const Linear& L, int integrator, bool flag, double h, double s) {
  int n = L.M.rows();
  Mat I = Mat::Identity(n, n);
  Mat B = L.Ba + L.Bj;
  Mat A(2 * n, 2 * n);
  if (integrator == mjINT_RK4 && !flag) {
    Eigen::PartialPivLU<Mat> lu(L.M);
    Mat F(2 * n, 2 * n);  // h * d[q, h v]/dt in the scaled state
    F << Mat::Zero(n, n), I, -h * h * lu.solve(s * L.K), -h * lu.solve(B);
    Mat term = Mat::Identity(2 * n, 2 * n);
    A = term;
    for (int k = 1; k <= 4; ++k) {
      term = term * F / k;
      A += term;
    }
  } else {
    // qacc = P q + Q v with J qacc = -K q - C v
    Mat J, C;
    if (flag) {
      J = L.M + h * B + h * h * s * L.Kin;
      C = B + h * s * L.Kin;
    } else if (integrator == mjINT_IMPLICIT) {
      J = L.M + h * B;
      C = B;
    } else {
      J = L.M + h * L.Bj;
      C = B;
    }
    Eigen::PartialPivLU<Mat> lu(J);
    Mat hhP = -h * h * lu.solve(s * L.K);
    Mat hQ = -h * lu.solve(C);
    // v+ = v + h qacc, q+ = q + h v+; in [q, h v]
    A << I + hhP, I + hQ, hhP, I + hQ;
  }
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major = A;
  return SpectralRadius(row_major.data(), 2 * n);
}

void AnalyzeSystem(const mjModel* m, const mjData* d, const std::vector<ServoRow>& rows,
                   int integrator, double h, ServoSystem* sys) {
  int nv = m->nv;
  Linear L;
  L.M = Mat::Zero(nv, nv);
  L.K = Mat::Zero(nv, nv);
  L.Kin = Mat::Zero(nv, nv);
  L.Ba = Mat::Zero(nv, nv);
  L.Bj = Mat::Zero(nv, nv);
  std::vector<mjtNum> dense(nv * nv);
  mj_fullM(m, dense.data(), d->qM);
  for (int r = 0; r < nv; ++r) {
    for (int c = 0; c < nv; ++c) L.M(r, c) = dense[r * nv + c];
  }
  bool passive = !(m->opt.disableflags & mjDSBL_PASSIVE);
  for (int k = 0; k < nv && passive; ++k) L.Bj(k, k) = m->dof_damping[k];
  for (const ServoRow& row : rows) {
    if (!row.slopes_known) continue;
    if (row.spring) {
      int j = row.id, adr = m->jnt_dofadr[j];
      int n = m->jnt_type[j] == mjJNT_FREE ? 6 : m->jnt_type[j] == mjJNT_BALL ? 3 : 1;
      for (int k = adr; k < adr + n; ++k) {
        L.K(k, k) += row.kp;
        if (row.in_scope) L.Kin(k, k) += row.theta * row.kp;
      }
      continue;
    }
    Eigen::Map<const Eigen::VectorXd> mom(d->actuator_moment + row.id * nv, nv);
    Mat mm = mom * mom.transpose();
    L.K += row.kp * mm;
    if (row.in_scope) L.Kin += row.theta * row.kp * mm;
    L.Ba += row.kv * mm;
  }
  if (integrator == mjINT_IMPLICIT) {
    L.Bj += L.Ba;  // all velocity slopes implicit
    L.Ba.setZero();
  } else if (integrator == mjINT_RK4) {
    L.Ba += L.Bj;  // all explicit
    L.Bj.setZero();
  }

  auto stable = [&](double s) {
    return SystemRadius(L, integrator, false, h, s) <= 1 + kUnstableTol;
  };
  sys->rho = SystemRadius(L, integrator, false, h, 1);
  // margin: scan factors 2^k, then bisect the first crossing
  double lo, hi, crossing = 0;
  BracketByDoubling(stable, std::ldexp(1.0, -30), 70, &lo, &hi);
  if (std::isfinite(hi) && lo > 0) crossing = Bisect(stable, 50, 0, false, &lo, &hi);
  sys->margin = std::isfinite(hi) ? crossing : kInf;
  if (sys->rho > 1 + kUnstableTol) {
    sys->verdict = Verdict::kUnstable;
  } else if (sys->margin < 1 / kNearRatio) {
    sys->verdict = Verdict::kNear;
  } else {
    sys->verdict = Verdict::kStable;
  }

  // flag: excluded parts of K stay explicit, in stock implicit
  Linear F = L;
  if (integrator != mjINT_IMPLICIT) {
    F.Bj += F.Ba;
    F.Ba.setZero();
  }
  sys->rho_flag = SystemRadius(F, mjINT_IMPLICIT, true, h, 1);
  sys->flag_verdict = sys->rho_flag > 1 + kUnstableTol ? Verdict::kUnstable : Verdict::kStable;
  sys->analysed = true;
}

//------------------------------ formatting ---------------------------------------------------------

std::string Num(double x, const char* fmt = "%.6g") {
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  if (std::isnan(x)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, x);
  return buf;
}

std::string JsonNum(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.10g", x);
  return buf;
}

std::string JsonStr(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonDiscrete(const Discrete& z) {
  return "{\"modulus\": " + JsonNum(z.modulus) + ", \"f_hz\": " + JsonNum(z.freq) +
         ", \"f_damped_hz\": " + JsonNum(z.freq_damped) + ", \"zeta\": " + JsonNum(z.zeta) + "}";
}

}  // namespace

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kStable: return "stable";
    case Verdict::kNear: return "near";
    case Verdict::kUnstable: return "UNSTABLE";
    case Verdict::kNonRestoring: return "nonrestoring";
    case Verdict::kUnknown: return "n/a";
  }
  return "?";
}

namespace {

// reflected inertia and joint damping of row along the moment row mom (x: nv of scratch)
void Reflect(const mjModel* m, mjData* d, const mjtNum* mom, mjtNum* x, ServoRow* row) {
  double mMm = InverseReflectedInertia(m, d, mom, x);
  if (!(mMm > 0)) {
    row->inertia = kInf;
    return;
  }
  row->inertia = 1 / mMm;
  // mode shape phi = M^-1 m' / (m M^-1 m'): unit length change, least kinetic energy
  bool passive = !(m->opt.disableflags & mjDSBL_PASSIVE);
  double b = 0;
  for (int k = 0; k < m->nv && passive; ++k) {
    double phi = x[k] / mMm;
    b += m->dof_damping[k] * phi * phi;
  }
  row->damping = b;
}

// the row of actuator i: its scope, slopes (the engine's),
// reflected inertia and one-dof analysis (x: nv of scratch)
ServoRow ActuatorRow(const mjModel* m, mjData* d, int i, const ServoOptions& options,
                     int integrator, double h, mjtNum* x) {
  ServoRow row;
  row.id = i;
  row.name = Name(m, mjOBJ_ACTUATOR, i);
  row.gear = m->actuator_gear[6 * i];
  row.gain = GainName(m, i);
  DescribeTransmission(m, i, &row);

  row.scope = mjd_actuatorPosScope(m, d, i, nullptr);
  row.scope_name = ScopeName(row.scope);
  row.in_scope = row.scope == mjPOSSCOPE_RESTORING;
  if (!row.in_scope) row.why = mjd_posScopeReason(row.scope);
  if (options.posweight && row.in_scope) row.theta = mjd_posWeight(m, d, mjOBJ_ACTUATOR, i);

  // position and velocity slopes from the engine (affine terms, a muscle's curves; none for a
  // user gain or bias)
  mjtNum slopes[2];
  bool closed = mjd_actuatorSlopes(m, d, i, slopes);
  bool actuation = !(m->opt.disableflags & mjDSBL_ACTUATION);
  if (!actuation) {
    row.slopes_known = true;  // no actuator forces at all
  } else if (closed) {
    row.kp = -slopes[0];
    row.kv = -slopes[1];
    row.slopes_known = true;
  }
  Reflect(m, d, d->actuator_moment + i * m->nv, x, &row);
  AnalyzeRow(integrator, h, &row);
  return row;
}

// the row of the spring of joint j (stiffness k > 0): its scope, and for a hinge or slide its
// reflected inertia and one-dof analysis (x, unit: nv of scratch)
ServoRow SpringRow(const mjModel* m, mjData* d, int j, const ServoOptions& options,
                   int integrator, double h, mjtNum* x, std::vector<mjtNum>* unit) {
  bool passive = !(m->opt.disableflags & mjDSBL_PASSIVE);
  ServoRow row;
  row.spring = true;
  row.id = j;
  row.name = Name(m, mjOBJ_JOINT, j);
  int type = m->jnt_type[j];
  row.transmission = std::string(JointTypeName(type)) + " spring";
  row.target = Name(m, mjOBJ_JOINT, j) + " (" + DofList(m, j) + ")";
  row.gain = "stiffness";
  bool scalar = type == mjJNT_HINGE || type == mjJNT_SLIDE;
  row.scope = mjd_jointPosScope(m, j);
  row.scope_name = ScopeName(row.scope);
  row.in_scope = row.scope == mjPOSSCOPE_RESTORING;
  if (!row.in_scope) row.why = mjd_posScopeReason(row.scope);
  if (options.posweight && row.in_scope) row.theta = mjd_posWeight(m, d, mjOBJ_JOINT, j);
  row.kp = passive ? m->jnt_stiffness[j] : 0;
  row.slopes_known = true;
  if (scalar) {
    std::fill(unit->begin(), unit->end(), 0);
    (*unit)[m->jnt_dofadr[j]] = 1;
    Reflect(m, d, unit->data(), x, &row);
    AnalyzeRow(integrator, h, &row);
  } else {
    row.inertia = kInf;  // one-dof analysis does not apply; part of the coupled system
  }
  return row;
}

}  // namespace

bool AnalyzeServos(const mjModel* model, const ServoOptions& options, ServoReport* report,
                   std::string* error) {
  auto fail = [&](const std::string& msg) {
    if (error) *error = msg;
    return false;
  };
  if (options.key >= model->nkey) {
    return fail("keyframe " + std::to_string(options.key) + " does not exist (nkey = " +
                std::to_string(model->nkey) + ")");
  }
  double h = options.timestep > 0 ? options.timestep : model->opt.timestep;
  int integrator = options.integrator >= 0 ? options.integrator : model->opt.integrator;
  if (integrator != mjINT_EULER && integrator != mjINT_RK4 && integrator != mjINT_IMPLICIT) {
    return fail("unknown integrator " + std::to_string(integrator));
  }

  // the model at the analysed timestep: the engine's scope (its stiffness bound) and
  // mjENBL_POSWEIGHT's weights read opt.timestep
  mjModel* m = mj_copyModel(nullptr, model);
  if (!m) return fail("could not copy the model");
  m->opt.timestep = h;

  *report = ServoReport();
  report->timestep = h;
  report->integrator = integrator;
  report->key = options.key;
  report->nv = m->nv;
  report->posweight = options.posweight;

  // state: qpos0 or keyframe; mj_forward gives qM, its factor, moments and actuator forces
  mjData* d = mj_makeData(m);
  if (!d) {
    mj_deleteModel(m);
    return fail("could not allocate mjData");
  }
  if (options.key >= 0) {
    mj_resetDataKeyframe(m, d, options.key);
  }
  mj_forward(m, d);

  // a row per actuator and per joint spring
  int nv = m->nv;
  std::vector<mjtNum> x(std::max(nv, 1)), unit(std::max(nv, 1));
  for (int i = 0; i < m->nu; ++i) {
    report->rows.push_back(ActuatorRow(m, d, i, options, integrator, h, x.data()));
  }
  for (int j = 0; j < m->njnt; ++j) {
    if (!(m->jnt_stiffness[j] > 0)) continue;
    report->rows.push_back(SpringRow(m, d, j, options, integrator, h, x.data(), &unit));
  }

  // coupled system
  if (nv == 0) {
    report->system.note = "no dofs";
  } else if (nv > options.system_max_nv) {
    report->system.note = "skipped: nv = " + std::to_string(nv) + " > " +
                          std::to_string(options.system_max_nv);
  } else {
    AnalyzeSystem(m, d, report->rows, integrator, h, &report->system);
  }

  for (const ServoRow& row : report->rows) {
    if (row.verdict == Verdict::kUnstable) report->unstable++;
  }
  if (report->system.analysed && report->system.verdict == Verdict::kUnstable) report->unstable++;
  mj_deleteData(d);
  mj_deleteModel(m);
  return true;
}

std::string FormatText(const ServoReport& r) {
  std::string out;
  char buf[512];
  std::snprintf(buf, sizeof(buf), "model: %s\nnv = %d, timestep = %s, integrator = %s, pose = %s\n",
                r.model.c_str(), r.nv, Num(r.timestep).c_str(), IntegratorName(r.integrator),
                r.key < 0 ? "qpos0" : ("keyframe " + std::to_string(r.key)).c_str());
  out += buf;
  out += "units: kp, cap per unit actuator length; kv, damp per unit length velocity; "
         "inertia = 1/(m M^-1 m')\n";
  if (r.posweight) {
    out += "flag columns: implicit + mjENBL_IMPLICITPOS + mjENBL_POSWEIGHT; w: the term's weight\n";
  }
  out += "\n";
  std::snprintf(buf, sizeof(buf),
                "%-3s %-16s %-12s %-30s %6s %10s %9s %9s %10s %8s %6s %6s %10s %7s %6s %-8s | "
                "%-12s %8s %6s %6s %10s %-8s\n",
                "#", "name", "transmission", "target", "gear", "kp", "kv", "damp", "inertia",
                "f_n[Hz]", "zeta", "h*w_n", "cap", "kp/cap", "|z|", "stock",
                "flag scope", "f[Hz]", "zeta", "|z|", "kp step", "flag");
  out += buf;
  for (const ServoRow& row : r.rows) {
    bool known = row.verdict != Verdict::kUnknown;
    std::string id = (row.spring ? "j" : "") + std::to_string(row.id);
    std::string target = row.target.size() > 30 ? row.target.substr(0, 27) + "..." : row.target;
    std::snprintf(buf, sizeof(buf),
                  "%-3s %-16.16s %-12.12s %-30s %6s %10s %9s %9s %10s %8s %6s %6s %10s %7s %6s "
                  "%-8s | %-12s %8s %6s %6s %10s %-8s\n",
                  id.c_str(), row.name.c_str(), row.transmission.c_str(), target.c_str(),
                  row.spring ? "-" : Num(row.gear, "%.3g").c_str(),
                  row.slopes_known ? Num(row.kp, "%.4g").c_str() : "?",
                  row.slopes_known ? Num(row.kv, "%.3g").c_str() : "?",
                  Num(row.damping, "%.3g").c_str(), Num(row.inertia, "%.4g").c_str(),
                  known ? Num(row.f_n, "%.4g").c_str() : "-",
                  known && row.kp > 0 ? Num(row.zeta, "%.3g").c_str() : "-",
                  known ? Num(row.h_omega, "%.3g").c_str() : "-",
                  known ? Num(row.cap, "%.4g").c_str() : "-",
                  known ? Num(row.ratio, "%.3g").c_str() : "-",
                  known ? Num(row.stock.modulus, "%.4f").c_str() : "-", VerdictName(row.verdict),
                  (r.posweight && row.in_scope ? "w=" + Num(row.theta, "%.3f") : row.scope_name)
                      .c_str(),
                  known ? Num(row.flag.freq, "%.4g").c_str() : "-",
                  known ? Num(row.flag.zeta, "%.3g").c_str() : "-",
                  known ? Num(row.flag.modulus, "%.4f").c_str() : "-",
                  known ? Num(row.flag_kp_step, "%.4g").c_str() : "-",
                  VerdictName(row.flag_verdict));
    out += buf;
  }
  if (r.rows.empty()) out += "(no actuators, no joint springs)\n";

  // excluded rows: why
  bool any = false;
  for (const ServoRow& row : r.rows) {
    if (row.in_scope) continue;
    if (!any) out += "\nnot in the scope of mjENBL_IMPLICITPOS (stock implicit applies):\n";
    any = true;
    out += "  " + std::string(row.spring ? "j" : "") + std::to_string(row.id) + " " + row.name +
           ": " + row.scope_name + " (" + row.why + ")\n";
  }

  out += "\ncoupled system (all dofs, actuators and springs; no constraints, "
         "no gravity gradient):\n";
  if (!r.system.analysed) {
    out += "  " + r.system.note + "\n";
  } else {
    std::snprintf(buf, sizeof(buf),
                  "  %s: spectral radius %.6f, position slopes can be scaled by %s before it is "
                  "unstable: %s\n  implicit + mjENBL_IMPLICITPOS%s: spectral radius %.6f: %s\n",
                  IntegratorName(r.integrator), r.system.rho, Num(r.system.margin, "%.4g").c_str(),
                  VerdictName(r.system.verdict), r.posweight ? " + mjENBL_POSWEIGHT" : "",
                  r.system.rho_flag,
                  VerdictName(r.system.flag_verdict));
    out += buf;
  }
  std::snprintf(buf, sizeof(buf), "\nunstable: %d\n", r.unstable);
  out += buf;
  return out;
}

std::string FormatJson(const ServoReport& r) {
  std::string out = "{\n";
  out += "  \"model\": " + JsonStr(r.model) + ",\n";
  out += "  \"nv\": " + std::to_string(r.nv) + ",\n";
  out += "  \"timestep\": " + JsonNum(r.timestep) + ",\n";
  out += "  \"integrator\": " + JsonStr(IntegratorName(r.integrator)) + ",\n";
  out += "  \"key\": " + (r.key < 0 ? std::string("null") : std::to_string(r.key)) + ",\n";
  out += "  \"posweight\": " + std::string(r.posweight ? "true" : "false") + ",\n";
  out += "  \"rows\": [";
  for (size_t n = 0; n < r.rows.size(); ++n) {
    const ServoRow& row = r.rows[n];
    out += n ? ",\n    {" : "\n    {";
    out += "\"kind\": " + JsonStr(row.spring ? "spring" : "actuator");
    out += ", \"id\": " + std::to_string(row.id);
    out += ", \"name\": " + JsonStr(row.name);
    out += ", \"transmission\": " + JsonStr(row.transmission);
    out += ", \"target\": " + JsonStr(row.target);
    out += ", \"gain\": " + JsonStr(row.gain);
    out += ", \"gear\": " + JsonNum(row.gear);
    out += ", \"kp\": " + (row.slopes_known ? JsonNum(row.kp) : "null");
    out += ", \"kv\": " + (row.slopes_known ? JsonNum(row.kv) : "null");
    out += ", \"damping\": " + JsonNum(row.damping);
    out += ", \"inertia\": " + JsonNum(row.inertia);
    out += ", \"f_n_hz\": " + JsonNum(row.f_n);
    out += ", \"zeta\": " + JsonNum(row.zeta);
    out += ", \"h_omega_n\": " + JsonNum(row.h_omega);
    out += ", \"cap\": " + JsonNum(row.cap);
    out += ", \"kp_over_cap\": " + JsonNum(row.ratio);
    out += ", \"stock\": " + JsonDiscrete(row.stock);
    out += ", \"verdict\": " + JsonStr(VerdictName(row.verdict));
    out += ", \"scope\": " + JsonStr(row.scope_name);
    out += ", \"in_scope\": " + std::string(row.in_scope ? "true" : "false");
    out += ", \"excluded_why\": " + JsonStr(row.why);
    if (r.posweight) out += ", \"posweight_theta\": " + JsonNum(row.theta);
    out += ", \"flag\": " + JsonDiscrete(row.flag);
    out += ", \"flag_kp_step\": " + JsonNum(row.flag_kp_step);
    out += ", \"flag_verdict\": " + JsonStr(VerdictName(row.flag_verdict)) + "}";
  }
  out += r.rows.empty() ? "],\n" : "\n  ],\n";
  out += "  \"system\": {\"analysed\": " + std::string(r.system.analysed ? "true" : "false");
  if (r.system.analysed) {
    out += ", \"spectral_radius\": " + JsonNum(r.system.rho);
    out += ", \"margin\": " + JsonNum(r.system.margin);
    out += ", \"verdict\": " + JsonStr(VerdictName(r.system.verdict));
    out += ", \"flag_spectral_radius\": " + JsonNum(r.system.rho_flag);
    out += ", \"flag_verdict\": " + JsonStr(VerdictName(r.system.flag_verdict));
  } else {
    out += ", \"note\": " + JsonStr(r.system.note);
  }
  out += "},\n";
  out += "  \"unstable\": " + std::to_string(r.unstable) + "\n}\n";
  return out;
}

}  // namespace mjpos
