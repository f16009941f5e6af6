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

// mjENBL_INVDISCRETE: mj_inverse of the discrete acceleration (v+ - v)/h of one mj_step recovers
// the applied forces (implicit with and without mjENBL_IMPLICITPOS, Euler with damping); an
// independent dense reference of the conversion, with and without the h*K*v shift; the flag off
// leaves mj_inverse bit-identical; qacc and the actuation outputs are preserved; RK4 is an error;
// the forward-inverse comparison is unaffected; the MJCF attribute.

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "engine/engine_core_smooth.h"
#include "engine/engine_inverse.h"
#include "engine/engine_sensor.h"
#include "test/fixture.h"
#include "support/models.h"

namespace mjpos {
namespace {

using ::testing::HasSubstr;

using Vec = std::vector<double>;


double NormInf(const Vec& x) {
  double n = 0;
  for (double v : x) n = std::max(n, std::abs(v));
  return n;
}

// ||x - y||_inf / ||y||_inf
Vec Copy(const mjtNum* x, int n) { return Vec(x, x + n); }

// a reproducible state away from equilibrium: velocities, servo targets off the current
// lengths, generalized applied forces
void SetOffEquilibrium(const mjModel* m, mjData* d, double scale) {
  mj_resetData(m, d);
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = scale * 0.7 * std::sin(1.3 * i + 0.4);
  for (int i = 0; i < m->nv; ++i) d->qfrc_applied[i] = scale * 0.2 * std::cos(0.9 * i + 0.1);
  mj_forward(m, d);
  for (int i = 0; i < m->nu; ++i) {
    d->ctrl[i] = d->actuator_length[i] + scale * 0.3 * std::cos(2.1 * i + 0.2);
  }
}

// copies the inputs of mj_step (state, controls, applied forces) from src to dst
void CopyInputs(const mjModel* m, const mjData* src, mjData* dst) {
  mj_resetData(m, dst);
  dst->time = src->time;
  mju_copy(dst->qpos, src->qpos, m->nq);
  mju_copy(dst->qvel, src->qvel, m->nv);
  mju_copy(dst->act, src->act, m->na);
  mju_copy(dst->ctrl, src->ctrl, m->nu);
  mju_copy(dst->qfrc_applied, src->qfrc_applied, m->nv);
  mju_copy(dst->xfrc_applied, src->xfrc_applied, 6 * m->nbody);
}

struct RoundTrip {
  Vec applied;   // qfrc_applied + qfrc_actuator of the pre-step state
  Vec inverse;   // qfrc_inverse of the discrete acceleration
  Vec qacc;      // (v+ - v)/h
  Vec qacc_after_inverse;
  int nefc;
};

// steps d0's state once with m's flags, then runs mj_inverse on the pre-step state with qacc =
// (v+ - v)/h and the given invdiscrete
RoundTrip StepAndInvert(const mjModel* m, const mjData* d0, bool invdiscrete) {
  RoundTrip r;
  int nv = m->nv;
  DataPtr d(mj_makeData(m));
  CopyInputs(m, d0, d.get());

  // forward step
  mjModel* mm = const_cast<mjModel*>(m);  // flags are restored below
  int flags = m->opt.enableflags;
  SetEnable(mm, mjENBL_INVDISCRETE, false);
  mj_step(m, d.get());
  r.applied = Copy(d->qfrc_applied, nv);
  for (int i = 0; i < nv; ++i) r.applied[i] += d->qfrc_actuator[i];
  r.nefc = d->nefc;
  r.qacc.resize(nv);
  for (int i = 0; i < nv; ++i) {
    r.qacc[i] = (d->qvel[i] - d0->qvel[i]) / m->opt.timestep;
  }

  // inverse on the pre-step state
  DataPtr di(mj_makeData(m));
  CopyInputs(m, d0, di.get());
  mju_copy(di->qacc, r.qacc.data(), nv);
  SetEnable(mm, mjENBL_INVDISCRETE, invdiscrete);
  mj_inverse(m, di.get());
  mm->opt.enableflags = flags;
  r.inverse = Copy(di->qfrc_inverse, nv);
  r.qacc_after_inverse = Copy(di->qacc, nv);
  return r;
}

struct Case {
  std::string name;
  ModelPtr model;
};

std::vector<Case> ServoModels(const std::string& integrator) {
  std::vector<Case> cases;
  cases.push_back({"one hinge", LoadModelOrFail(OneHingeXml(0.01576, 400, 1, 0.01, integrator))});
  cases.push_back({"one hinge stiff",  // h^2 kp = 1 > 4I + 2h kv: past the stock cap
                   LoadModelOrFail(OneHingeXml(0.01576, 1e4, 1, 0.01, integrator))});
  cases.push_back({"one hinge spring",
                   LoadModelOrFail(OneHingeSpringXml(0.01576, 400, 0.5, 0.01, integrator))});
  cases.push_back({"chain 3", LoadModelOrFail(ChainXml(3, 50, 2, 0.005, integrator))});
  cases.push_back({"chain 7", LoadModelOrFail(ChainXml(7, 50, 2, 0.005, integrator))});
  std::string error;
  mjModel* humanoid = LoadWithServos(MJPOS_MODEL_DIR "/humanoid/humanoid.xml", 100, 5, &error);
  EXPECT_NE(humanoid, nullptr) << error;
  if (humanoid) {
    humanoid->opt.integrator =
        integrator == "Euler" ? mjINT_EULER : (integrator == "RK4" ? mjINT_RK4 : mjINT_IMPLICIT);
    humanoid->opt.disableflags |= mjDSBL_CONTACT;
  }
  cases.push_back({"humanoid", ModelPtr(humanoid)});

  // implicit: a tendon servo whose moment is on two branches (its term of K outside MhD)
  for (const ScopeConfiguration& c : ScopeConfigurations(2e3, 0)) {
    if (integrator == "implicit" && c.name == "fixed_tendon_branches") {
      std::string xml = c.xml;  // after a servo of zero gains: the row is actuator 1
      xml.replace(xml.find("<actuator>"), 10,
                  "<actuator><general joint=\"a\" gainprm=\"0\" biastype=\"affine\"/>");
      cases.push_back({c.name, LoadModelOrFail(xml)});
    }
  }
  for (const Case& c : cases) EXPECT_NE(c.model, nullptr) << c.name;
  return cases;
}

constexpr double kRoundTripTol = 1e-10;

class InverseDiscrete : public MujocoTest {};

// 1. round trip: implicit, with mjENBL_IMPLICITPOS off and on
// Catches: mj_inverse not inverting the implicit step, flag off or on.
TEST_F(InverseDiscrete, ImplicitRoundTrip) {
  for (Case& c : ServoModels("implicit")) {
    if (!c.model) continue;
    mjModel* m = c.model.get();
    DataPtr d0(mj_makeData(m));
    for (bool pos : {false, true}) {
      SetEnable(m, mjENBL_IMPLICITPOS, pos);
      SetOffEquilibrium(m, d0.get(), 1.0);
      RoundTrip r = StepAndInvert(m, d0.get(), true);
      SCOPED_TRACE(c.name + (pos ? ", implicitpos on" : ", implicitpos off"));
      ASSERT_EQ(r.nefc, 0);
      double rel = RelDiff(r.inverse, r.applied);
      RecordProperty("round_trip_implicitpos" + std::to_string(pos) + "_" + c.name,
                     std::to_string(rel));
      EXPECT_LE(rel, kRoundTripTol);
      EXPECT_EQ(r.qacc_after_inverse, r.qacc);  // restored bitwise

      // the same discrete qacc read as continuous-time misses
      RoundTrip off = StepAndInvert(m, d0.get(), false);
      EXPECT_GT(RelDiff(off.inverse, off.applied), 1e3 * kRoundTripTol);
    }
    SetEnable(m, mjENBL_IMPLICITPOS, false);
  }
}

// 1b. round trip: Euler integrates joint damping implicitly (the servo models with damping)
// Catches: Euler's implicit joint damping missing from the discrete inverse.
TEST_F(InverseDiscrete, EulerRoundTrip) {
  for (Case& c : ServoModels("Euler")) {
    if (!c.model) continue;
    mjModel* m = c.model.get();
    bool damped = false;
    for (int i = 0; i < m->nv; ++i) damped |= m->dof_damping[i] > 0;
    DataPtr d0(mj_makeData(m));
    SetOffEquilibrium(m, d0.get(), 1.0);
    RoundTrip r = StepAndInvert(m, d0.get(), true);
    SCOPED_TRACE(c.name);
    ASSERT_EQ(r.nefc, 0);
    double rel = RelDiff(r.inverse, r.applied);
    RecordProperty("round_trip_euler_" + c.name, std::to_string(rel));
    EXPECT_LE(rel, kRoundTripTol);

    // without damping the discrete and continuous accelerations coincide; with it they don't
    RoundTrip off = StepAndInvert(m, d0.get(), false);
    if (damped) {
      EXPECT_GT(RelDiff(off.inverse, off.applied), 1e3 * kRoundTripTol);
    } else {
      EXPECT_EQ(off.inverse, r.inverse);
    }
  }
}

// 2. independent dense reference: with no constraints,
//   qfrc_inverse = (M - h D + h^2 K) a + h K v + qfrc_bias - qfrc_passive
// with M from mj_fullM, D = d(actuator + passive - bias)/dv from the gains, dof damping and a
// central difference of qfrc_bias (quadratic in v: exact up to rounding), K = kp moment'moment
// + joint stiffness
struct Dense {
  int nv;
  Vec M, D, K;
};

Dense DenseReference(const mjModel* m, const mjData* d0) {
  int nv = m->nv;
  Dense r{nv, Vec(nv * nv), Vec(nv * nv, 0.0), Vec(nv * nv, 0.0)};
  DataPtr d(mj_makeData(m));
  CopyInputs(m, d0, d.get());
  mj_forward(m, d.get());
  mj_fullM(m, r.M.data(), d->qM);

  for (int a = 0; a < m->nu; ++a) {
    EXPECT_EQ(m->actuator_biastype[a], mjBIAS_AFFINE);
    EXPECT_EQ(m->actuator_gaintype[a], mjGAIN_FIXED);
    double kp = -m->actuator_biasprm[mjNBIAS * a + 1];
    double kv = -m->actuator_biasprm[mjNBIAS * a + 2];
    const mjtNum* moment = d->actuator_moment + a * nv;
    for (int i = 0; i < nv; ++i) {
      for (int j = 0; j < nv; ++j) {
        r.K[i * nv + j] += kp * moment[i] * moment[j];
        r.D[i * nv + j] -= kv * moment[i] * moment[j];
      }
    }
  }
  for (int i = 0; i < nv; ++i) r.D[i * nv + i] -= m->dof_damping[i];
  for (int j = 0; j < m->njnt; ++j) {
    if (m->jnt_type[j] == mjJNT_HINGE || m->jnt_type[j] == mjJNT_SLIDE) {
      int dof = m->jnt_dofadr[j];
      r.K[dof * nv + dof] += m->jnt_stiffness[j];
    }
  }

  // -d qfrc_bias / d qvel by central differences
  const double eps = 1e-4;
  DataPtr dp(mj_makeData(m));
  for (int j = 0; j < nv; ++j) {
    Vec plus, minus;
    for (double s : {1.0, -1.0}) {
      CopyInputs(m, d0, dp.get());
      dp->qvel[j] += s * eps;
      mj_forward(m, dp.get());
      (s > 0 ? plus : minus) = Copy(dp->qfrc_bias, nv);
    }
    for (int i = 0; i < nv; ++i) r.D[i * nv + j] -= (plus[i] - minus[i]) / (2 * eps);
  }
  return r;
}

// Catches: a K error shared by forward and inverse (the round trip alone misses it); on a
// tendon across two branches, also the part of its velocity term outside the pattern of M (the
// flag's step applies all of it, the dense damping here is all of it; stock's qDeriv keeps only
// the part on the pattern, so that model is checked with the flag only).
TEST_F(InverseDiscrete, DenseReference) {
  for (Case& c : ServoModels("implicit")) {
    if (!c.model) continue;
    mjModel* m = c.model.get();
    int nv = m->nv;
    double h = m->opt.timestep;
    DataPtr d0(mj_makeData(m));
    for (bool pos : {false, true}) {
      if (!pos && c.name == "fixed_tendon_branches") continue;  // stock keeps a part: see above
      SetEnable(m, mjENBL_IMPLICITPOS, pos);
      SetOffEquilibrium(m, d0.get(), 1.0);
      RoundTrip r = StepAndInvert(m, d0.get(), true);
      Dense ref = DenseReference(m, d0.get());
      DataPtr d(mj_makeData(m));
      CopyInputs(m, d0.get(), d.get());
      mj_forward(m, d.get());

      Vec expect(nv), shift(nv, 0.0);
      for (int i = 0; i < nv; ++i) {
        double s = d->qfrc_bias[i] - d->qfrc_passive[i];
        for (int j = 0; j < nv; ++j) {
          double Mhat = ref.M[i * nv + j] - h * ref.D[i * nv + j];
          if (pos) {
            Mhat += h * h * ref.K[i * nv + j];
            shift[i] += h * ref.K[i * nv + j] * d0->qvel[j];
          }
          s += Mhat * r.qacc[j];
        }
        expect[i] = s + shift[i];
      }
      SCOPED_TRACE(c.name + (pos ? ", implicitpos on" : ", implicitpos off"));
      double rel = RelDiff(r.inverse, expect);
      RecordProperty("dense_reference_implicitpos" + std::to_string(pos) + "_" + c.name,
                     std::to_string(rel));
      EXPECT_LE(rel, 1e-8);

      if (pos) {
        // without the shift the reference misses by h*K*v0
        Vec noshift(nv), miss(nv);
        for (int i = 0; i < nv; ++i) {
          noshift[i] = expect[i] - shift[i];
          miss[i] = r.inverse[i] - noshift[i];
        }
        EXPECT_GT(NormInf(shift), 1e-3 * NormInf(expect));
        EXPECT_LE(RelDiff(miss, shift), 1e-6);
        EXPECT_GT(RelDiff(r.inverse, noshift), 1e3 * rel);
      }
    }
    SetEnable(m, mjENBL_IMPLICITPOS, false);
  }
}

// 3. flag off: mj_inverse does not depend on mjENBL_IMPLICITPOS, bit for bit (all of mjData's
// buffer), for continuous-time qacc; flag on, Euler without damping: identical to flag off
void InverseBuffer(const mjModel* m, const mjData* d0, const Vec& qacc, std::vector<char>* buf) {
  DataPtr d(mj_makeData(m));
  CopyInputs(m, d0, d.get());
  mju_copy(d->qacc, qacc.data(), m->nv);
  mj_inverse(m, d.get());
  const char* b = static_cast<const char*>(d->buffer);
  buf->assign(b, b + d->nbuffer);
}

// Catches: invdiscrete off changing mj_inverse.
TEST_F(InverseDiscrete, FlagOffBitIdentical) {
  for (const std::string integrator : {"implicit", "Euler"}) {
    for (Case& c : ServoModels(integrator)) {
      if (!c.model) continue;
      mjModel* m = c.model.get();
      SCOPED_TRACE(c.name + ", " + integrator);
      DataPtr d0(mj_makeData(m));
      SetOffEquilibrium(m, d0.get(), 1.0);
      Vec qacc(m->nv);
      for (int i = 0; i < m->nv; ++i) qacc[i] = 3.0 * std::sin(0.7 * i + 1.0);

      m->opt.enableflags = 0;
      std::vector<char> stock, pos, discrete;
      InverseBuffer(m, d0.get(), qacc, &stock);
      SetEnable(m, mjENBL_IMPLICITPOS, true);
      InverseBuffer(m, d0.get(), qacc, &pos);
      EXPECT_TRUE(stock == pos);

      // and the flag changes something where it must: implicit, or Euler with damping
      bool damped = false;
      for (int i = 0; i < m->nv; ++i) damped |= m->dof_damping[i] > 0;
      SetEnable(m, mjENBL_INVDISCRETE, true);
      InverseBuffer(m, d0.get(), qacc, &discrete);
      EXPECT_EQ(stock != discrete, integrator == "implicit" || damped);
      m->opt.enableflags = 0;
    }
  }

  // Euler without damping: explicit in velocity, the flag is exact and changes nothing
  ModelPtr m = LoadModelOrFail(OneHingeXml(0.01576, 400, 1, 0.01, "Euler"));
  ASSERT_NE(m, nullptr);
  DataPtr d0(mj_makeData(m.get()));
  SetOffEquilibrium(m.get(), d0.get(), 1.0);
  Vec qacc = {2.5};
  std::vector<char> off, on;
  InverseBuffer(m.get(), d0.get(), qacc, &off);
  SetEnable(m.get(), mjENBL_INVDISCRETE, true);
  InverseBuffer(m.get(), d0.get(), qacc, &on);
  EXPECT_TRUE(off == on);
}

// flag off: mj_inverse is bit for bit the body of 2.2.2's mj_inverseSkip, composed here from its
// stages (all of mjData's buffer), on models with and without constraints
void StockInverse(const mjModel* m, mjData* d) {
  mj_invPosition(m, d);
  mj_sensorPos(m, d);
  if (mjENABLED(mjENBL_ENERGY)) mj_energyPos(m, d);
  mj_invVelocity(m, d);
  mj_sensorVel(m, d);
  if (mjENABLED(mjENBL_ENERGY)) mj_energyVel(m, d);
  mj_invConstraint(m, d);
  mj_rne(m, d, 1, d->qfrc_inverse);
  mj_sensorAcc(m, d);
  for (int i = 0; i < m->nv; i++) {
    d->qfrc_inverse[i] += m->dof_armature[i] * d->qacc[i] - d->qfrc_passive[i] -
                          d->qfrc_constraint[i];
  }
}

// Catches: invdiscrete off differing from stock's mj_inverse.
TEST_F(InverseDiscrete, FlagOffIsStock) {
  std::vector<ModelPtr> models;
  std::string xml = ChainXml(3, 50, 2, 0.005);
  xml.replace(xml.find("<joint name=\"j1\""), 17,
              "<joint name=\"j1\" limited=\"true\" range=\"-0.1 0.1\"");
  models.push_back(LoadModelOrFail(xml));
  std::string error;
  models.emplace_back(LoadWithServos(MJPOS_MODEL_DIR "/humanoid/humanoid.xml", 100, 5, &error));
  if (models.back()) models.back()->opt.integrator = mjINT_IMPLICIT;
  for (ModelPtr& mp : models) {
    ASSERT_NE(mp, nullptr);
    mjModel* m = mp.get();
    m->opt.enableflags = mjENBL_IMPLICITPOS;
    DataPtr d0(mj_makeData(m));
    SetOffEquilibrium(m, d0.get(), 1.0);
    for (int j = 0; j < m->njnt; ++j) {  // first limited hinge: past its limit
      if (m->jnt_limited[j] && m->jnt_type[j] == mjJNT_HINGE) {
        d0->qpos[m->jnt_qposadr[j]] = m->jnt_range[2 * j + 1] + 0.2;
        break;
      }
    }
    Vec qacc(m->nv);
    for (int i = 0; i < m->nv; ++i) qacc[i] = 3.0 * std::sin(0.7 * i + 1.0);
    std::vector<char> patched;
    InverseBuffer(m, d0.get(), qacc, &patched);

    DataPtr d(mj_makeData(m));
    CopyInputs(m, d0.get(), d.get());
    mju_copy(d->qacc, qacc.data(), m->nv);
    StockInverse(m, d.get());
    EXPECT_GT(d->nefc, 0);
    const char* b = static_cast<const char*>(d->buffer);
    EXPECT_TRUE(patched == std::vector<char>(b, b + d->nbuffer));
  }
}

// the conversion restores qacc and leaves the caller's actuation outputs alone
// Catches: mj_inverse leaving qacc or the actuation outputs modified.
TEST_F(InverseDiscrete, PreservesCallerData) {
  ModelPtr m = LoadModelOrFail(ChainXml(3, 50, 2, 0.005));
  ASSERT_NE(m, nullptr);
  m->actuator_forcelimited[1] = 1;  // K's scope reads actuator_force
  m->actuator_forcerange[2] = -1e3;
  m->actuator_forcerange[3] = 1e3;
  SetEnable(m.get(), mjENBL_INVDISCRETE | mjENBL_IMPLICITPOS, true);
  DataPtr d(mj_makeData(m.get()));
  SetOffEquilibrium(m.get(), d.get(), 1.0);
  for (int i = 0; i < m->nv; ++i) d->qacc[i] = 1.0 + i;
  for (int i = 0; i < m->nu; ++i) d->actuator_force[i] = -7.0 - i;
  for (int i = 0; i < m->nv; ++i) d->qfrc_actuator[i] = 11.0 + i;
  Vec qacc = Copy(d->qacc, m->nv);
  Vec force = Copy(d->actuator_force, m->nu);
  Vec qfrc = Copy(d->qfrc_actuator, m->nv);
  int pstack = d->pstack;
  mj_inverse(m.get(), d.get());
  EXPECT_EQ(Copy(d->qacc, m->nv), qacc);
  EXPECT_EQ(Copy(d->actuator_force, m->nu), force);
  EXPECT_EQ(Copy(d->qfrc_actuator, m->nv), qfrc);
  EXPECT_EQ(d->pstack, pstack);
  EXPECT_GT(d->maxuse_stack, 0);
}

// RK4: an error, through mju_error
std::string* last_error = nullptr;
void RecordError(const char* msg) {
  if (last_error) *last_error = msg;
}

// Catches: RK4 inverted silently instead of an error.
TEST_F(InverseDiscrete, RK4IsAnError) {
  ModelPtr m = LoadModelOrFail(ChainXml(3, 50, 2, 0.005, "RK4"));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetOffEquilibrium(m.get(), d.get(), 1.0);
  std::string error;
  last_error = &error;
  void (*fixture_error)(const char*) = mju_user_error;
  mju_user_error = RecordError;

  mj_inverse(m.get(), d.get());
  EXPECT_EQ(error, "");
  SetEnable(m.get(), mjENBL_INVDISCRETE, true);
  mj_inverse(m.get(), d.get());
  EXPECT_THAT(error, HasSubstr("RK4"));
  EXPECT_THAT(error, HasSubstr("invdiscrete"));

  mju_user_error = fixture_error;
  last_error = nullptr;
}

// mj_step's forward-inverse comparison (fwdinv) uses continuous-time qacc whatever the flag
// Catches: fwdinv comparing against the discrete acceleration.
TEST_F(InverseDiscrete, FwdinvUnaffected) {
  std::string xml = OneHingeXml(0.01576, 400, 1, 0.01);
  xml.replace(xml.find("type=\"hinge\""), 12, "type=\"hinge\" limited=\"true\" range=\"-1 1\"");
  ModelPtr m = LoadModelOrFail(xml);
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_FWDINV | mjENBL_IMPLICITPOS, true);
  DataPtr d0(mj_makeData(m.get()));
  SetOffEquilibrium(m.get(), d0.get(), 1.0);
  d0->qpos[0] = 1.2;  // past the limit: one constraint
  mjtNum fwdinv[2][2];
  for (bool discrete : {false, true}) {
    SetEnable(m.get(), mjENBL_INVDISCRETE, discrete);
    DataPtr d(mj_makeData(m.get()));
    CopyInputs(m.get(), d0.get(), d.get());
    mj_step(m.get(), d.get());  // mj_compareFwdInv, before the integrator
    ASSERT_GT(d->nefc, 0);
    fwdinv[discrete][0] = d->solver_fwdinv[0];
    fwdinv[discrete][1] = d->solver_fwdinv[1];
  }
  EXPECT_EQ(fwdinv[1][0], fwdinv[0][0]);
  EXPECT_EQ(fwdinv[1][1], fwdinv[0][1]);
  RecordProperty("fwdinv", std::to_string(fwdinv[0][0]) + " " + std::to_string(fwdinv[0][1]));
}

// 4. MJCF: invdiscrete read, written, and a bad value rejected
std::string FlagXml(const std::string& flag) {
  return "<mujoco><option><flag " + flag +
         "/></option><worldbody><body><joint/><geom size=\"0.1\"/></body></worldbody></mujoco>";
}

// Catches: the invdiscrete flag lost when reading or writing MJCF.
TEST_F(InverseDiscrete, Xml) {
  std::string error;
  ModelPtr m(LoadXmlString(FlagXml("invdiscrete=\"enable\""), &error));
  ASSERT_NE(m, nullptr) << error;
  EXPECT_EQ(m->opt.enableflags, mjENBL_INVDISCRETE);
  std::string saved = SaveLastXml(m.get());
  EXPECT_THAT(saved, HasSubstr("invdiscrete=\"enable\""));
  ModelPtr again(LoadXmlString(saved, &error));
  ASSERT_NE(again, nullptr) << error;
  EXPECT_EQ(again->opt.enableflags, mjENBL_INVDISCRETE);

  ModelPtr both(LoadXmlString(FlagXml("implicitpos=\"enable\" invdiscrete=\"enable\""), &error));
  ASSERT_NE(both, nullptr) << error;
  EXPECT_EQ(both->opt.enableflags, mjENBL_INVDISCRETE | mjENBL_IMPLICITPOS);

  ModelPtr off(LoadXmlString(FlagXml("invdiscrete=\"disable\""), &error));
  ASSERT_NE(off, nullptr) << error;
  EXPECT_EQ(off->opt.enableflags, 0);
  EXPECT_THAT(SaveLastXml(off.get()), ::testing::Not(HasSubstr("invdiscrete")));

  ModelPtr bad(LoadXmlString(FlagXml("invdiscrete=\"maybe\""), &error));
  EXPECT_EQ(bad, nullptr);
  EXPECT_THAT(error, HasSubstr("maybe"));

  EXPECT_STREQ(mjENABLESTRING[6], "InvDiscrete");
  EXPECT_GT(mjNENABLE, 6);
}

}  // namespace
}  // namespace mjpos
