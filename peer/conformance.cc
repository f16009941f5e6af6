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

#include "peer/conformance.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <mujoco/mujoco.h>
#include "peer/peer.h"
#include "support/one_dof.h"
#include "support/models.h"

namespace mjpos::peer {
namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXd;

constexpr double kInertia = 0.01576;

std::string Sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", x);
  return buf;
}

Subject FromXml(const std::string& name, const std::string& xml) {
  std::string error;
  ModelPtr m(LoadXmlString(xml, &error));
  if (!m) throw std::runtime_error(name + ": " + error);
  return Subject{name, xml, Json::object(), {}, std::move(m)};
}

// the test state: angles and targets away from rest, qvel = 0 or not; the actuators with
// dynamics (muscles) at activation act and their controls at act, so that the activations rest
void SetOffTarget(const mjModel* m, mjData* d, bool at_rest, double act) {
  mj_resetData(m, d);
  for (int j = 0; j < m->njnt; ++j) {
    int type = m->jnt_type[j];
    if (type == mjJNT_HINGE || type == mjJNT_SLIDE) {
      d->qpos[m->jnt_qposadr[j]] += 0.2 * std::sin(1.0 + j);
    }
  }
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = at_rest ? 0 : 1.5 * std::cos(2.0 + 3 * i);
  mj_forward(m, d);
  for (int u = 0; u < m->nu; ++u) d->ctrl[u] = d->actuator_length[u] + 0.3 * std::cos(1.0 * u);
  for (int u = m->nu - m->na; u < m->nu; ++u) d->ctrl[u] = d->act[u - (m->nu - m->na)] = act;
  mj_forward(m, d);
}

std::vector<double> OurStep(mjModel* m, const mjData* start, bool flag,
                            std::vector<double>* applied = nullptr) {
  int saved = m->opt.enableflags;
  SetEnable(m, mjENBL_IMPLICITPOS, flag);
  DataPtr d(mj_makeData(m));
  mj_copyData(d.get(), m, start);
  mj_step(m, d.get());
  m->opt.enableflags = saved;
  if (applied) {
    applied->resize(m->nv);
    for (int i = 0; i < m->nv; ++i) {
      (*applied)[i] = d->qfrc_smooth_step[i] + d->qfrc_constraint[i];
    }
  }
  return std::vector<double>(d->qvel, d->qvel + m->nv);
}

// actuator + passive force, and bias force, at (qpos, qvel)
void Forces(const mjModel* m, mjData* d, Vector* smooth, Vector* bias) {
  mj_forward(m, d);
  *smooth = Vector(m->nv);
  *bias = Vector(m->nv);
  for (int i = 0; i < m->nv; ++i) {
    (*smooth)[i] = d->qfrc_actuator[i] + d->qfrc_passive[i];
    (*bias)[i] = d->qfrc_bias[i];
  }
}

// central differences of the forces in the velocities: d(smooth)/dv and d(bias)/dv. The
// in-scope forces are affine in v and the bias force is quadratic in v, so central differences
// with a large step are exact up to rounding.
void VelocityDerivatives(const mjModel* m, const mjData* start, Matrix* dv, Matrix* db) {
  int nv = m->nv;
  *dv = Matrix::Zero(nv, nv);
  *db = Matrix::Zero(nv, nv);
  DataPtr d(mj_makeData(m));
  Vector sp, bp, sm, bm;
  for (int j = 0; j < nv; ++j) {
    const double dvel = 1.0;
    for (int s : {1, -1}) {
      mj_copyData(d.get(), m, start);
      d->qvel[j] += s * dvel;
      Forces(m, d.get(), s > 0 ? &sp : &sm, s > 0 ? &bp : &bm);
    }
    dv->col(j) = (sp - sm) / (2 * dvel);
    db->col(j) = (bp - bm) / (2 * dvel);
  }
}

// backward Euler in q and v (BackwardEulerVelocity) with K by central differences (step 1e-2)
// and the given velocity derivative of the total force
std::vector<double> DenseStep(const mjModel* m, const mjData* start, const std::vector<double>& k,
                              const Matrix& dtotal) {
  int nv = m->nv;
  std::vector<double> mass(nv * nv), damping(dtotal.data(), dtotal.data() + nv * nv), force(nv);
  mj_fullM(m, mass.data(), start->qM);
  for (int i = 0; i < nv; ++i) force[i] = start->qfrc_smooth[i] + start->qfrc_constraint[i];
  return BackwardEulerVelocity(nv, m->opt.timestep, mass, damping, k, k, force.data(),
                               start->qvel);
}

}  // namespace

std::vector<Subject> ConformanceSubjects(const std::string& model_dir) {
  std::vector<Subject> s;
  for (double h : {5e-3, 2e-3}) {
    for (double kp : {1e1, 1e3, 1e5, 1e7}) {
      std::string tag = " kp=" + Sci(kp) + " h=" + Sci(1e3 * h) + "ms";
      s.push_back(FromXml("hinge servo" + tag, OneHingeXml(kInertia, kp, 1.0, h)));
      s.push_back(FromXml("hinge stiffness" + tag, OneHingeSpringXml(kInertia, kp, 1.0, h)));
    }
  }
  for (double kp : {1e2, 1e4, 1e6}) {
    s.push_back(FromXml("chain4 kp=" + Sci(kp), ChainXml(4, kp, 1.0, 5e-3)));
    s.push_back(FromXml("gear/tendon arm kp=" + Sci(kp), GearTendonArmXml(kp, 1.0, 5e-3)));
  }
  for (double k : {1e2, 1e4, 1e6}) {
    s.push_back(FromXml("ball rope k=" + Sci(k), BallRopeXml(8, k, 0.001, 5e-3)));
  }
  for (double kp : {1e2, 1e4, 1e6}) {
    for (const char* kind : {"site", "spatial", "ball"}) {
      s.push_back(FromXml(std::string(kind) + " servos kp=" + Sci(kp),
                          RowServoXml(kind, kp, 1.0, 5e-3)));
      s.back().exact = std::string(kind) == "ball";  // at its rest: the moment is constant
    }
  }
  // one tendon across two branches, kv 1: its whole velocity term and K in the flag's step, as in
  // discrete's (stock's qDeriv keeps only the velocity term's part on the pattern of M)
  for (double kp : {1e2, 1e4, 1e6}) {
    s.push_back(FromXml("two-finger hand kp=" + Sci(kp), TwoFingerHandXml(kp, 1, 5e-3)));
  }
  // muscles: the passive curve alone, and with the active force-length curve; the
  // velocity curve makes the forces of the moving muscle arm not affine in the velocity
  for (double act : {0.0, 0.5}) {
    for (double force : {1e2, 1e4, 1e6}) {
      s.push_back(FromXml(std::string(act ? "muscle arm activated" : "muscle arm relaxed") +
                              " force=" + Sci(force),
                          MuscleArmXml(force, 5e-3)));
      s.back().act = act;
      s.back().exact = false;
      s.back().disable = {"limit"};
      s.back().m->opt.disableflags |= mjDSBL_LIMIT;
    }
  }
  std::string path = model_dir + "/humanoid/humanoid.xml";
  for (double kp : {1e2, 1e4, 1e6}) {
    std::string error;
    ModelPtr m(LoadWithServos(path, kp, 1.0, &error));
    if (!m) throw std::runtime_error(path + ": " + error);
    m->opt.integrator = mjINT_IMPLICIT;  // the file's is Euler; every job names its own
    m->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_LIMIT | mjDSBL_EQUALITY;
    Json edits = ServoEdits(m.get());
    s.push_back(Subject{"servo humanoid kp=" + Sci(kp), ReadFile(path), edits,
                        {"contact", "limit", "equality"}, std::move(m)});
  }
  return s;
}

std::vector<OneStep> StepAll(const std::vector<Subject>& subjects, bool at_rest,
                             const std::string& driver_args) {
  std::vector<OneStep> out(subjects.size());
  Json jobs = Json::array();
  for (size_t i = 0; i < subjects.size(); ++i) {
    const Subject& s = subjects[i];
    mjModel* m = s.m.get();
    DataPtr d(mj_makeData(m));
    SetOffTarget(m, d.get(), at_rest, s.act);

    out[i].flag = OurStep(m, d.get(), true, &out[i].flag_applied);
    out[i].qvel.assign(d->qvel, d->qvel + m->nv);
    out[i].mass.resize(m->nv * m->nv);
    mj_fullM(m, out[i].mass.data(), d->qM);
    out[i].timestep = m->opt.timestep;
    out[i].off = OurStep(m, d.get(), false);
    std::vector<double> k = FiniteDifferenceK(m, d.get(), 1e-2);
    Matrix dv, db;
    VelocityDerivatives(m, d.get(), &dv, &db);
    out[i].dense_with_bias = DenseStep(m, d.get(), k, dv - db);
    out[i].dense_without_bias = DenseStep(m, d.get(), k, dv);

    for (const char* integrator : {"discrete", "implicit"}) {
      Json job = StateJob(s.xml, integrator, m, d.get());
      job["model"] = s.edits;
      job["disable"] = s.disable;
      job["report"] = {"qvel"};
      jobs.push_back(job);
    }
  }
  Json results = Run(jobs, driver_args);
  for (size_t i = 0; i < subjects.size(); ++i) {
    for (int k = 0; k < 2; ++k) {
      const Json& r = results[2 * i + k];
      if (r.contains("error") && driver_args == kWarp) continue;
      if (r.contains("error")) {
        throw std::runtime_error(subjects[i].name + ": " + r["error"].get<std::string>());
      }
      (k == 0 ? out[i].discrete : out[i].implicit) = Numbers(r["report"]["qvel"]);
    }
  }
  return out;
}

}  // namespace mjpos::peer
