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

// Guards for the corners of mjd_actuatorPosScope, mjd_implicitPos and mj_discreteAcc that the
// other tests do not reach; each kills mutants of the mutation gate (tools/mutate.sh,
// doc/testing.md): the slope's input (clamped control, bad controls, activation index), the
// gain and bias terms, the force-range clamp per actuator and at both bounds, the sign and
// finiteness of the slope, fixed tendons of one joint or over a ball joint, jointinparent
// transmissions, and the actuation outputs that mj_inverse saves and restores.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "engine/engine_derivative_pos.h"
#include "engine/engine_support.h"
#include "test/models.h"

namespace mjpos {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// hinges a and b on one chain, hinge c on a second branch; no gravity, no contact
std::string Model(const std::string& elements, const std::string& flags = "") {
  return "<mujoco>\n"
         "  <option integrator=\"implicit\" timestep=\"0.005\" gravity=\"0 0 0\">"
         "<flag contact=\"disable\" " + flags + "/></option>\n"
         "  <default><joint armature=\"0.01\" damping=\"0.1\"/>"
         "<geom type=\"capsule\" size=\".02\" fromto=\"0 0 0 .2 0 0\"/></default>\n"
         "  <worldbody>\n"
         "    <body><joint name=\"a\" axis=\"0 1 0\"/><geom/>\n"
         "      <body pos=\".2 0 0\"><joint name=\"b\" axis=\"0 0 1\"/><geom/></body>\n"
         "    </body>\n"
         "    <body pos=\"0 .5 0\"><joint name=\"c\" axis=\"0 1 0\"/><geom/></body>\n"
         "  </worldbody>\n" + elements + "</mujoco>\n";
}

// a general actuator on `target`: gain [g0 g1 0] (affine) and bias [0 b1 -1] (affine)
std::string Affine(const std::string& target, double g0, double g1, double b1,
                   const std::string& extra = "") {
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "<general %s gaintype=\"affine\" gainprm=\"%.17g %.17g 0\" biastype=\"affine\" "
                "biasprm=\"0 %.17g -1\" %s/>",
                target.c_str(), g0, g1, b1, extra.c_str());
  return buf;
}

ModelPtr Load(const std::string& xml) {
  std::string error;
  mjModel* m = LoadXmlString(xml, &error);
  EXPECT_NE(m, nullptr) << error << "\n" << xml;
  return ModelPtr(m);
}

// a state away from rest
void SetState(const mjModel* m, mjData* d) {
  mj_resetData(m, d);
  for (int i = 0; i < m->nq; ++i) d->qpos[i] = 0.2 * std::sin(1.0 + 2 * i);
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = 1.5 * std::cos(0.5 + i);
  for (int u = 0; u < m->nu; ++u) d->ctrl[u] = 0.3 + 0.1 * u;
  for (int a = 0; a < m->na; ++a) d->act[a] = 0.7 - 0.2 * a;
}

double Slope(const mjModel* m, const mjData* d, int i, int* scope = nullptr) {
  mjtNum slope = kNaN;
  int s = mjd_actuatorPosScope(m, d, i, &slope);
  if (scope) *scope = s;
  return slope;
}

// K of mjd_implicitPos, dense, and its vector output K*qvel
void EngineK(const mjModel* m, mjData* d, std::vector<double>* k, std::vector<double>* kv) {
  int nv = m->nv;
  mj_makeMSparse(m, d, d->D_rownnz, d->D_rowadr, d->D_colind);
  std::vector<mjtNum> matD(m->nD, 0.0);
  kv->assign(nv, 0.0);
  mjd_implicitPos(m, d, matD.data(), 1, kv->data(), 1);
  k->assign(nv * nv, 0.0);
  for (int r = 0; r < nv; ++r) {
    for (int j = 0; j < d->D_rownnz[r]; ++j) {
      int adr = d->D_rowadr[r] + j;
      (*k)[r * nv + d->D_colind[adr]] = matD[adr];
    }
  }
}

// K and K*qvel against a central difference of qfrc_actuator + qfrc_passive over qpos (the
// in-scope forces are affine in the positions of hinges, so only rounding remains); d is at the
// state to linearise about, after mj_forward
void ExpectKMatchesFiniteDifference(const mjModel* m, mjData* d, const std::string& what) {
  int nv = m->nv;
  std::vector<double> k, kv;
  EngineK(m, d, &k, &kv);
  const double eps = 1e-5;
  std::vector<double> fd(nv * nv), plus(nv), dir(nv);
  DataPtr p(mj_makeData(m));
  for (int j = 0; j < nv; ++j) {
    for (int s : {1, -1}) {
      mj_copyData(p.get(), m, d);
      std::fill(dir.begin(), dir.end(), 0.0);
      dir[j] = s * eps;
      mj_integratePos(m, p->qpos, dir.data(), 1);
      mj_forward(m, p.get());
      for (int i = 0; i < nv; ++i) {
        double f = p->qfrc_actuator[i] + p->qfrc_passive[i];
        if (s > 0) {
          plus[i] = f;
        } else {
          fd[i * nv + j] = -(plus[i] - f) / (2 * eps);
        }
      }
    }
  }
  std::vector<double> fdv(nv, 0.0);
  for (int r = 0; r < nv; ++r) {
    for (int c = 0; c < nv; ++c) fdv[r] += fd[r * nv + c] * d->qvel[c];
  }
  double scale = 0;
  for (double x : fd) scale = std::max(scale, std::abs(x));
  EXPECT_GT(scale, 0) << what << ": nothing to compare";
  EXPECT_LE(RelDiff(k.data(), fd.data(), nv * nv), 1e-7) << what;
  EXPECT_LE(RelDiff(kv.data(), fdv.data(), nv), 1e-7) << what;
}

// full state after n steps, flag off or on
std::vector<mjtNum> Trajectory(const mjModel* m, bool flag, int n) {
  ModelPtr mc(mj_copyModel(nullptr, m));
  if (flag) {
    mc->opt.enableflags |= mjENBL_IMPLICITPOS;
  } else {
    mc->opt.enableflags &= ~mjENBL_IMPLICITPOS;
  }
  DataPtr d(mj_makeData(mc.get()));
  SetState(mc.get(), d.get());
  for (int t = 0; t < n; ++t) mj_step(mc.get(), d.get());
  std::vector<mjtNum> out(d->qpos, d->qpos + mc->nq);
  out.insert(out.end(), d->qvel, d->qvel + mc->nv);
  return out;
}

bool BitIdentical(const std::vector<mjtNum>& a, const std::vector<mjtNum>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(mjtNum)) == 0;
}

//------------------------------ the slope's input -------------------------------------------------

// Catches: the affine gain's input not clamped to ctrlrange, clamped with another actuator's
// range or one bound, clamped for unlimited actuators, or clamped with clampctrl disabled.
TEST(ImplicitPosGuardInput, ClampedControl) {
  const double g1 = -30, b1 = -100;
  std::string actuators = "<actuator>";
  const char* range[3] = {"-0.11 0.13", "-0.17 0.19", "-0.23 0.29"};
  for (int i = 0; i < 3; ++i) {
    actuators += Affine("joint=\"a\"", 5, g1, b1,
                        std::string("ctrllimited=\"true\" ctrlrange=\"") + range[i] + "\"");
  }
  actuators += Affine("joint=\"b\"", 5, g1, b1) + "</actuator>";  // unlimited
  for (bool clamp : {true, false}) {
    ModelPtr m = Load(Model(actuators, clamp ? "" : "clampctrl=\"disable\""));
    ASSERT_NE(m, nullptr);
    DataPtr d(mj_makeData(m.get()));
    for (double ctrl : {-1.0, 1.0, 0.1}) {
      SetState(m.get(), d.get());
      for (int u = 0; u < m->nu; ++u) d->ctrl[u] = ctrl;
      mj_forward(m.get(), d.get());
      for (int u = 0; u < m->nu; ++u) {
        double input = ctrl;
        if (clamp && m->actuator_ctrllimited[u]) {
          input = std::min(std::max(ctrl, m->actuator_ctrlrange[2 * u]),
                           m->actuator_ctrlrange[2 * u + 1]);
        }
        EXPECT_EQ(Slope(m.get(), d.get(), u), b1 + g1 * input)
            << "actuator " << u << " ctrl " << ctrl << " clampctrl " << clamp;
      }
      ExpectKMatchesFiniteDifference(m.get(), d.get(), "clamped control");
    }
  }
}

// Catches: a bad control (NaN) not zeroing the input of every actuator, as mj_fwdActuation
// zeroes all controls.
TEST(ImplicitPosGuardInput, BadControlZeroesEveryInput) {
  ModelPtr m = Load(Model("<actuator>" + Affine("joint=\"a\"", 5, -30, -100) +
                          Affine("joint=\"b\"", 5, -20, -80) + "</actuator>"));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetState(m.get(), d.get());
  d->ctrl[0] = 0.5;
  d->ctrl[1] = kNaN;
  mju_user_warning = [](const char*) {};  // mj_fwdActuation warns about the bad control
  mj_forward(m.get(), d.get());
  mju_user_warning = nullptr;
  EXPECT_EQ(Slope(m.get(), d.get(), 0), -100);
  EXPECT_EQ(Slope(m.get(), d.get(), 1), -80);
  ExpectKMatchesFiniteDifference(m.get(), d.get(), "bad control");
}

// Poisons the arrays that mjd_implicitPos reads per actuator, per control and per joint: each is
// replaced by a copy one element longer, the extra element describing a stiff servo on dof 0
// (actuator nu), a bad control (ctrl[nu]) and a stiff hinge spring on dof 0 (joint njnt), so that
// a loop running one past the end changes K. The destructor puts the model's and data's own
// arrays back.
class PoisonPastTheEnd {
 public:
  PoisonPastTheEnd(mjModel* m, mjData* d) {
    int nu = m->nu, nv = m->nv, nj = m->njnt;
    Extend(&m->actuator_trntype, &trntype_, nu, 1, mjTRN_JOINT);
    Extend(&m->actuator_dyntype, &dyntype_, nu, 1, mjDYN_NONE);
    Extend(&m->actuator_gaintype, &gaintype_, nu, 1, mjGAIN_FIXED);
    Extend(&m->actuator_biastype, &biastype_, nu, 1, mjBIAS_AFFINE);
    Extend(&m->actuator_trnid, &trnid_, nu, 2, 0);
    Extend(&m->actuator_ctrllimited, &ctrllimited_, nu, 1, 0);
    Extend(&m->actuator_forcelimited, &forcelimited_, nu, 1, 0);
    Extend(&m->actuator_gainprm, &gainprm_, nu, mjNGAIN, 0.0);
    Extend(&m->actuator_biasprm, &biasprm_, nu, mjNBIAS, 0.0);
    gainprm_[mjNGAIN * nu] = 1e4;
    biasprm_[mjNBIAS * nu + 1] = -1e4;
    Extend(&d->actuator_moment, &moment_, nu, nv, 0.0);
    moment_[nu * nv] = 1;
    Extend(&d->actuator_force, &force_, nu, 1, 0.0);
    Extend(&d->ctrl, &ctrl_, nu, 1, kNaN);
    Extend(&m->jnt_type, &jnt_type_, nj, 1, mjJNT_HINGE);
    Extend(&m->jnt_dofadr, &jnt_dofadr_, nj, 1, 0);
    Extend(&m->jnt_stiffness, &jnt_stiffness_, nj, 1, 1e4);
  }
  ~PoisonPastTheEnd() {
    for (auto& restore : restore_) restore();
  }

 private:
  template <typename T, typename V>
  void Extend(T** array, std::vector<T>* copy, int n, int width, V poison) {
    copy->assign(*array, *array + n * width);
    copy->resize((n + 1) * width, static_cast<T>(poison));
    T* own = *array;
    *array = copy->data();
    restore_.push_back([array, own]() { *array = own; });
  }

  std::vector<int> trntype_, dyntype_, gaintype_, biastype_, trnid_, jnt_type_, jnt_dofadr_;
  std::vector<mjtByte> ctrllimited_, forcelimited_;
  std::vector<mjtNum> gainprm_, biasprm_, moment_, force_, ctrl_, jnt_stiffness_;
  std::vector<std::function<void()>> restore_;
};

// Catches: a loop over actuators, controls or joints running one past the end (i <= nu,
// k <= nu, j <= njnt): each reads an element that does not exist.
TEST(ImplicitPosGuardInput, ReadsNothingPastTheEnd) {
  ModelPtr m = Load(Model("<actuator>" + Affine("joint=\"a\"", 5, -30, -100) +
                          Affine("joint=\"b\"", 5, -20, -80) + "</actuator>"));
  ASSERT_NE(m, nullptr);
  m->jnt_stiffness[2] = 40;
  DataPtr d(mj_makeData(m.get()));
  SetState(m.get(), d.get());
  mj_forward(m.get(), d.get());
  std::vector<double> k, kv, k_poisoned, kv_poisoned;
  EngineK(m.get(), d.get(), &k, &kv);
  std::vector<double> slope = {Slope(m.get(), d.get(), 0), Slope(m.get(), d.get(), 1)};
  {
    PoisonPastTheEnd poison(m.get(), d.get());
    EngineK(m.get(), d.get(), &k_poisoned, &kv_poisoned);
    EXPECT_EQ(Slope(m.get(), d.get(), 0), slope[0]);
    EXPECT_EQ(Slope(m.get(), d.get(), 1), slope[1]);
  }
  EXPECT_EQ(k_poisoned, k);
  EXPECT_EQ(kv_poisoned, kv);
  ExpectKMatchesFiniteDifference(m.get(), d.get(), "unpoisoned");
}

// Catches: the activation of actuator i read at a wrong index when stateless actuators come
// first (act index i - (nu - na)).
TEST(ImplicitPosGuardInput, ActivationIndex) {
  ModelPtr m = Load(Model("<actuator>" + Affine("joint=\"a\"", 5, -30, -100) +
                          Affine("joint=\"c\"", 5, -40, -90) +
                          Affine("joint=\"b\"", 5, -20, -80,
                                 "dyntype=\"filter\" dynprm=\"0.05\"") +
                          "</actuator>"));
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->na, 1);
  DataPtr d(mj_makeData(m.get()));
  SetState(m.get(), d.get());
  d->act[0] = 0.9;
  mj_forward(m.get(), d.get());
  EXPECT_EQ(Slope(m.get(), d.get(), 0), -100 + -30 * d->ctrl[0]);
  EXPECT_EQ(Slope(m.get(), d.get(), 1), -90 + -40 * d->ctrl[1]);
  EXPECT_EQ(Slope(m.get(), d.get(), 2), -80 + -20 * 0.9);
  ExpectKMatchesFiniteDifference(m.get(), d.get(), "activation");
}

//------------------------------ gain and bias -----------------------------------------------------

// Catches: gainprm[1] added for a fixed gain (which ignores it), the affine term skipped when
// gainprm[0] is 0 or gainprm[1] is 1, and an affine gain without bias skipped as a motor.
TEST(ImplicitPosGuardSlope, GainAndBiasTerms) {
  ModelPtr m = Load(Model(
      "<actuator>"
      "<general joint=\"a\" gainprm=\"50 7 0\" biastype=\"affine\" biasprm=\"0 -50 -1\"/>" +
      Affine("joint=\"b\"", 0, 1, -50) +
      "<general joint=\"c\" gaintype=\"affine\" gainprm=\"0 -40 0\"/>"
      "</actuator>"));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetState(m.get(), d.get());
  d->ctrl[1] = d->ctrl[2] = 0.5;
  mj_forward(m.get(), d.get());
  int scope[3];
  EXPECT_EQ(Slope(m.get(), d.get(), 0, &scope[0]), -50);
  EXPECT_EQ(Slope(m.get(), d.get(), 1, &scope[1]), -50 + 0.5);
  EXPECT_EQ(Slope(m.get(), d.get(), 2, &scope[2]), -40 * 0.5);
  for (int u = 0; u < 3; ++u) EXPECT_EQ(scope[u], mjPOSSCOPE_RESTORING) << u;
  ExpectKMatchesFiniteDifference(m.get(), d.get(), "gain and bias");
}

// Catches: an actuator taken as affine when only its gain or only its bias is (user gain or
// bias: left explicit).
TEST(ImplicitPosGuardSlope, UserGainOrBiasIsExcluded) {
  const std::vector<std::string> actuators = {
      "<general joint=\"a\" gaintype=\"user\" biastype=\"affine\" biasprm=\"0 -100 -1\"/>",
      "<general joint=\"a\" gaintype=\"affine\" gainprm=\"5 -30 0\" biastype=\"user\"/>",
      "<general joint=\"a\" gainprm=\"5\" biastype=\"user\"/>",
  };
  for (const std::string& a : actuators) {
    ModelPtr m = Load(Model("<actuator>" + a + "</actuator>"));
    ASSERT_NE(m, nullptr);
    DataPtr d(mj_makeData(m.get()));
    SetState(m.get(), d.get());
    mj_forward(m.get(), d.get());
    int scope;
    EXPECT_EQ(Slope(m.get(), d.get(), 0, &scope), 0) << a;
    EXPECT_EQ(scope, mjPOSSCOPE_GAINBIAS) << a;
    EXPECT_TRUE(BitIdentical(Trajectory(m.get(), false, 20), Trajectory(m.get(), true, 20))) << a;
  }
}

// Catches: a slope that is positive but below 1, -inf, or too stiff for the factorization taken
// as restoring; a restoring one left out.
TEST(ImplicitPosGuardSlope, SignAndFiniteness) {
  ModelPtr m = Load(Model("<actuator>" + Affine("joint=\"a\"", 5, 0, -1) + "</actuator>"));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  struct Case {
    double slope;
    int scope;
  };
  for (Case c : {Case{0.5, mjPOSSCOPE_NONRESTORING}, Case{2, mjPOSSCOPE_NONRESTORING},
                 Case{kInf, mjPOSSCOPE_NONRESTORING}, Case{-kInf, mjPOSSCOPE_NONRESTORING},
                 Case{kNaN, mjPOSSCOPE_NONRESTORING}, Case{0, mjPOSSCOPE_ZERO},
                 Case{-0.5, mjPOSSCOPE_RESTORING}, Case{-0.99, mjPOSSCOPE_RESTORING},
                 Case{-1.01, mjPOSSCOPE_NONRESTORING}, Case{-1e300, mjPOSSCOPE_NONRESTORING}}) {
    // slopes of magnitude about 1 are scaled to the stiffness bound h^2 |slope| <= mjMAXVAL
    double h = m->opt.timestep;
    bool near_bound = c.slope == -0.99 || c.slope == -1.01;
    m->actuator_biasprm[1] = near_bound ? c.slope * mjMAXVAL / (h * h) : c.slope;
    SetState(m.get(), d.get());
    mj_forward(m.get(), d.get());
    EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), c.scope) << c.slope;
  }
}

//------------------------------ force range -------------------------------------------------------

// Catches: the clamp test reading another actuator's force range, or missing a force exactly on
// its lower or upper bound.
TEST(ImplicitPosGuardScope, ForceRangePerActuatorAndBounds) {
  const double range[3][2] = {{-100, 2}, {-3, 50}, {-40, 1.5}};
  std::string actuators = "<actuator>";
  for (int i = 0; i < 3; ++i) {
    char extra[96];
    std::snprintf(extra, sizeof(extra), "forcelimited=\"true\" forcerange=\"%g %g\"", range[i][0],
                  range[i][1]);
    actuators += Affine("joint=\"a\"", 5, 0, -100, extra);
  }
  ModelPtr m = Load(Model(actuators + "</actuator>"));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetState(m.get(), d.get());
  mj_forward(m.get(), d.get());
  for (int i = 0; i < 3; ++i) {
    for (double force : {-200.0, -100.0, -50.0, -40.0, -3.0, -1.0, 0.0, 1.5, 2.0, 3.0, 50.0, 60.0}) {
      d->actuator_force[i] = force;
      bool clamped = force <= range[i][0] || force >= range[i][1];
      EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), i, nullptr),
                clamped ? mjPOSSCOPE_CLAMPED : mjPOSSCOPE_RESTORING)
          << "actuator " << i << " force " << force;
    }
    d->actuator_force[i] = 0;
  }
}

//------------------------------ transmissions -----------------------------------------------------

// Catches: jointinparent transmissions left out of scope.
TEST(ImplicitPosGuardScope, JointInParentIsInScope) {
  ModelPtr m = Load(Model("<actuator><general jointinparent=\"b\" gainprm=\"300\" "
                          "biastype=\"affine\" biasprm=\"0 -300 -1\" gear=\"1.5\"/></actuator>"));
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->actuator_trntype[0], mjTRN_JOINTINPARENT);
  DataPtr d(mj_makeData(m.get()));
  SetState(m.get(), d.get());
  mj_forward(m.get(), d.get());
  EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_RESTORING);
  ExpectKMatchesFiniteDifference(m.get(), d.get(), "jointinparent");
}

// Catches: a fixed tendon of a single joint left out of scope.
TEST(ImplicitPosGuardScope, OneJointFixedTendonIsInScope) {
  ModelPtr m = Load(Model("<tendon><fixed name=\"t\"><joint joint=\"b\" coef=\"-0.7\"/></fixed>"
                          "</tendon><actuator>" + Affine("tendon=\"t\"", 5, 0, -300) +
                          "</actuator>"));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetState(m.get(), d.get());
  mj_forward(m.get(), d.get());
  EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_RESTORING);
  ExpectKMatchesFiniteDifference(m.get(), d.get(), "one-joint tendon");
}

// Catches: a joint servo run through the fixed-tendon code as well (its joint is on a tendon whose
// index equals the joint's), adding its term twice.
TEST(ImplicitPosGuardScope, JointServoBesideTendonOverItsJoint) {
  ModelPtr m = Load(Model("<tendon><fixed name=\"t\"><joint joint=\"a\" coef=\"1\"/>"
                          "<joint joint=\"b\" coef=\"0.5\"/></fixed></tendon><actuator>" +
                          Affine("joint=\"a\"", 5, 0, -300) + Affine("joint=\"b\"", 5, 0, -200) +
                          Affine("tendon=\"t\"", 5, 0, -100) + "</actuator>"));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetState(m.get(), d.get());
  mj_forward(m.get(), d.get());
  for (int u = 0; u < m->nu; ++u) {
    EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), u, nullptr), mjPOSSCOPE_RESTORING) << u;
  }
  ExpectKMatchesFiniteDifference(m.get(), d.get(), "servo beside tendon");
}

// Catches: a fixed tendon over a ball joint (the compiler accepts one) taken into scope because
// only the tendon's first joint was checked for a hinge or slide.
TEST(ImplicitPosGuardScope, FixedTendonOverBallJointIsExcluded) {
  ModelPtr m = Load(
      "<mujoco>\n"
      "  <option integrator=\"implicit\" timestep=\"0.005\" gravity=\"0 0 0\"/>\n"
      "  <default><joint armature=\"0.01\" damping=\"0.1\"/>"
      "<geom type=\"capsule\" size=\".02\" fromto=\"0 0 0 .2 0 0\"/></default>\n"
      "  <worldbody>\n"
      "    <body><joint name=\"h\" axis=\"0 1 0\"/><geom/>\n"
      "      <body pos=\".2 0 0\"><joint name=\"ball\" type=\"ball\"/><geom/></body>\n"
      "    </body>\n"
      "  </worldbody>\n"
      "  <tendon><fixed name=\"t\"><joint joint=\"h\" coef=\"1\"/><joint joint=\"ball\" "
      "coef=\"0.5\"/></fixed></tendon>\n"
      "  <actuator>" + Affine("tendon=\"t\"", 5, 0, -300) + "</actuator>\n"
      "</mujoco>\n");
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetState(m.get(), d.get());
  mj_forward(m.get(), d.get());
  EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_TRANSMISSION);
  EXPECT_TRUE(BitIdentical(Trajectory(m.get(), false, 20), Trajectory(m.get(), true, 20)));
}

//------------------------------ mj_inverse with activations ---------------------------------------

// Catches: mj_inverse (invdiscrete and implicitpos) not restoring the caller's act_dot,
// actuator_force or qfrc_actuator when actuators have activations (na > 0), e.g. a save area
// too small, which mj_fwdActuation's own scratch then overwrites.
TEST(ImplicitPosGuardInverse, ActuationOutputsRestoredWithActivations) {
  ModelPtr m = Load(Model("<actuator>" + Affine("joint=\"a\"", 5, -30, -100) +
                          Affine("joint=\"c\"", 5, -40, -90) +
                          Affine("joint=\"b\"", 5, -20, -80,
                                 "dyntype=\"filter\" dynprm=\"0.05\"") +
                          "</actuator>"));
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->na, 1);
  m->opt.enableflags |= mjENBL_INVDISCRETE | mjENBL_IMPLICITPOS;
  DataPtr d(mj_makeData(m.get()));
  SetState(m.get(), d.get());
  mj_forward(m.get(), d.get());
  for (int i = 0; i < m->nv; ++i) d->qacc[i] = 1.0 + i;
  for (int i = 0; i < m->nu; ++i) d->actuator_force[i] = -7.0 - i;
  for (int i = 0; i < m->nv; ++i) d->qfrc_actuator[i] = 11.0 + i;
  for (int i = 0; i < m->na; ++i) d->act_dot[i] = 13.0 + i;
  std::vector<mjtNum> force(d->actuator_force, d->actuator_force + m->nu);
  std::vector<mjtNum> qfrc(d->qfrc_actuator, d->qfrc_actuator + m->nv);
  std::vector<mjtNum> act_dot(d->act_dot, d->act_dot + m->na);
  mj_inverse(m.get(), d.get());
  EXPECT_EQ(std::vector<mjtNum>(d->actuator_force, d->actuator_force + m->nu), force);
  EXPECT_EQ(std::vector<mjtNum>(d->qfrc_actuator, d->qfrc_actuator + m->nv), qfrc);
  EXPECT_EQ(std::vector<mjtNum>(d->act_dot, d->act_dot + m->na), act_dot);
}

}  // namespace
}  // namespace mjpos
