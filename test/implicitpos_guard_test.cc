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
// doc/mutation.md): the slope's input (clamped control, bad controls, activation index), the
// gain and bias terms, the force-range clamp per actuator and at both bounds, the sign and
// finiteness of the slope, fixed tendons of one joint or over a ball joint, jointinparent
// transmissions, and the actuation outputs that mj_inverse saves and restores.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "engine/engine_inverse.h"
#include "engine/engine_support.h"
#include "support/accuracy.h"
#include "test/fixture.h"
#include "support/models.h"

namespace mjpos {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

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
  return AffineActuator(target, g0, g1, b1, -1, extra);
}

// a state away from rest
void SetAwayFromRest(const mjModel* m, mjData* d) {
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

// K and K*qvel against a central difference of qfrc_actuator + qfrc_passive over qpos (the
// in-scope forces are affine in the positions of hinges, so only rounding remains); d is at the
// state to linearise about, after mj_forward
void ExpectKMatchesFiniteDifference(const mjModel* m, mjData* d, const std::string& what) {
  KError error = KAgainstFiniteDifference(m, d, 1e-5);
  EXPECT_GT(error.scale, 0) << what << ": nothing to compare";
  EXPECT_LE(error.k, 1e-7) << what;
  EXPECT_LE(error.kv, 1e-7) << what;
}

// full state after n steps, flag off or on
std::vector<mjtNum> StateAfterSteps(const mjModel* m, bool flag, int n) {
  ModelPtr mc(mj_copyModel(nullptr, m));
  SetEnable(mc.get(), mjENBL_IMPLICITPOS, flag);
  DataPtr d(mj_makeData(mc.get()));
  SetAwayFromRest(mc.get(), d.get());
  for (int t = 0; t < n; ++t) mj_step(mc.get(), d.get());
  std::vector<mjtNum> out(d->qpos, d->qpos + mc->nq);
  out.insert(out.end(), d->qvel, d->qvel + mc->nv);
  return out;
}

//------------------------------ the slope's input -------------------------------------------------

class ImplicitPosGuardInput : public MujocoTest {};

// Catches: the affine gain's input not clamped to ctrlrange, clamped with another actuator's
// range or one bound, clamped for unlimited actuators, or clamped with clampctrl disabled.
TEST_F(ImplicitPosGuardInput, ClampedControl) {
  const double g1 = -30, b1 = -100;
  std::string actuators = "<actuator>";
  const char* range[3] = {"-0.11 0.13", "-0.17 0.19", "-0.23 0.29"};
  for (int i = 0; i < 3; ++i) {
    actuators += Affine("joint=\"a\"", 5, g1, b1,
                        std::string("ctrllimited=\"true\" ctrlrange=\"") + range[i] + "\"");
  }
  actuators += Affine("joint=\"b\"", 5, g1, b1) + "</actuator>";  // unlimited
  for (bool clamp : {true, false}) {
    ModelPtr m = LoadModelOrFail(Model(actuators, clamp ? "" : "clampctrl=\"disable\""));
    ASSERT_NE(m, nullptr);
    DataPtr d(mj_makeData(m.get()));
    for (double ctrl : {-1.0, 1.0, 0.1}) {
      SetAwayFromRest(m.get(), d.get());
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
// zeroes all controls, in the slope and in the accuracy weight.
TEST_F(ImplicitPosGuardInput, BadControlZeroesEveryInput) {
  ModelPtr m = LoadModelOrFail(Model("<actuator>" + Affine("joint=\"a\"", 5, -30, -100) +
                          Affine("joint=\"b\"", 5, -20, -80) + "</actuator>"));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
  d->ctrl[0] = 0.5;
  d->ctrl[1] = kNaN;
  {
    WarningCapture warnings;
    mj_forward(m.get(), d.get());
    EXPECT_THAT(warnings.messages(),
                ElementsAre(HasSubstr("Nan, Inf or huge value in CTRL at ACTUATOR 1")));
  }
  EXPECT_EQ(Slope(m.get(), d.get(), 0), -100);
  EXPECT_EQ(Slope(m.get(), d.get(), 1), -80);
  ExpectKMatchesFiniteDifference(m.get(), d.get(), "bad control");

  // the accuracy weight reads the same zeroed input
  DataPtr zero(mj_makeData(m.get()));
  mj_copyData(zero.get(), m.get(), d.get());
  zero->ctrl[0] = zero->ctrl[1] = 0;
  mj_forward(m.get(), zero.get());
  for (int u = 0; u < 2; ++u) {
    EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, u),
              mjd_posWeight(m.get(), zero.get(), mjOBJ_ACTUATOR, u)) << u;
  }
}

// Catches: the bad-control check made before clamping, with clamping where it does not apply
// (clampctrl disabled, an unlimited actuator) or without it where it does, or skipping a control
// (the first), or clamping with another actuator's bounds: mj_fwdActuation zeroes every control
// when one is bad after clamping. 1e11 is bad (beyond mjMAXVAL) unclamped and good clamped to
// [-1, 1]; the third actuator's range [-1e12, 1e12] keeps +-1e11 bad. The same for the slopes
// mjd_actuatorSlopes reports (the servo report's).
TEST_F(ImplicitPosGuardInput, ControlCheckedAfterClamping) {
  const double g1 = -30, b1 = -100;
  std::string actuators =
      "<actuator>" +
      Affine("joint=\"a\"", 5, g1, b1, "ctrllimited=\"true\" ctrlrange=\"-1 1\"") +
      Affine("joint=\"b\"", 5, g1, b1) +
      Affine("joint=\"c\"", 5, g1, b1, "ctrllimited=\"true\" ctrlrange=\"-1e12 1e12\"") +
      "</actuator>";
  struct Case {
    double ctrl[3];
    bool clampctrl, zeroed;
  };
  for (Case c : {Case{{1e11, 0.3, 0.2}, true, false}, Case{{1e11, 0.3, 0.2}, false, true},
                 Case{{0.3, 1e11, 0.2}, true, true}, Case{{kNaN, 0.3, 0.2}, true, true},
                 Case{{0.3, 0.2, 1e11}, true, true}, Case{{0.3, 0.2, -1e11}, true, true}}) {
    ModelPtr m = LoadModelOrFail(Model(actuators, c.clampctrl ? "" : "clampctrl=\"disable\""));
    ASSERT_NE(m, nullptr);
    DataPtr d(mj_makeData(m.get()));
    SetAwayFromRest(m.get(), d.get());
    for (int u = 0; u < 3; ++u) d->ctrl[u] = c.ctrl[u];
    {
      WarningCapture warnings;
      mj_forward(m.get(), d.get());
      // mj_fwdActuation warns about the bad control it zeroes
      EXPECT_EQ(warnings.Count("Nan, Inf or huge value in CTRL"), c.zeroed ? 1 : 0)
          << "ctrl " << c.ctrl[0] << " " << c.ctrl[1] << " " << c.ctrl[2];
      EXPECT_EQ(warnings.Count(), c.zeroed ? 1 : 0);
    }
    for (int u = 0; u < 3; ++u) {
      double input = c.zeroed ? 0 : c.ctrl[u];
      if (!c.zeroed && c.clampctrl && m->actuator_ctrllimited[u]) {
        input = std::min(std::max(input, m->actuator_ctrlrange[2 * u]),
                         m->actuator_ctrlrange[2 * u + 1]);
      }
      EXPECT_EQ(Slope(m.get(), d.get(), u), b1 + g1 * input)
          << "actuator " << u << " ctrl " << c.ctrl[0] << " " << c.ctrl[1];
      EXPECT_EQ(mjd_actuatorInput(m.get(), d.get(), u), input) << "actuator " << u;
      mjtNum slopes[2];
      EXPECT_EQ(mjd_actuatorSlopes(m.get(), d.get(), u, slopes), 1);
      EXPECT_EQ(slopes[0], b1 + g1 * input) << "actuator " << u;
      EXPECT_EQ(slopes[1], -1) << "actuator " << u;  // the bias's velocity term
    }
    ExpectKMatchesFiniteDifference(m.get(), d.get(), "control checked after clamping");
  }
}

// Poisons the arrays that mjd_implicitPos reads per actuator (the model's, and the dof,
// transmission scope and diagonal address that mj_resetData found), per control and per joint:
// each is replaced by a copy one element longer, the extra element describing a stiff servo on
// dof 0 (actuator nu), a bad control (ctrl[nu]) and a stiff hinge spring on dof 0 (joint njnt),
// so that a loop running one past the end changes K. The destructor puts the model's and data's
// own arrays back.
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
    Extend(&d->actuator_posdof, &posdof_, nu, 1, 0);
    Extend(&d->actuator_postrn, &postrn_, nu, 1, mjPOSSCOPE_RESTORING);
    Extend(&d->actuator_posdiag, &posdiag_, nu, 1, 0);
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
  std::vector<int> posdof_, postrn_, posdiag_;
  std::vector<mjtByte> ctrllimited_, forcelimited_;
  std::vector<mjtNum> gainprm_, biasprm_, moment_, force_, ctrl_, jnt_stiffness_;
  std::vector<std::function<void()>> restore_;
};

// Catches: a loop over actuators, controls or joints running one past the end (i <= nu,
// k <= nu, j <= njnt), or mjd_posWeight accepting the id nu or njnt: each reads an element that
// does not exist.
TEST_F(ImplicitPosGuardInput, ReadsNothingPastTheEnd) {
  ModelPtr m = LoadModelOrFail(Model("<actuator>" + Affine("joint=\"a\"", 5, -30, -100) +
                          Affine("joint=\"b\"", 5, -20, -80) + "</actuator>"));
  ASSERT_NE(m, nullptr);
  m->jnt_stiffness[2] = 40;
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
  mj_forward(m.get(), d.get());
  // with and without the accuracy weights (their own pass gathers the terms per dof)
  for (int flags : {0, static_cast<int>(mjENBL_POSWEIGHT)}) {
    m->opt.enableflags = flags;
    std::vector<double> k, kv, k_poisoned, kv_poisoned;
    EngineK(m.get(), d.get(), &k, &kv);
    std::vector<double> slope = {Slope(m.get(), d.get(), 0), Slope(m.get(), d.get(), 1)};
    {
      PoisonPastTheEnd poison(m.get(), d.get());
      EngineK(m.get(), d.get(), &k_poisoned, &kv_poisoned);
      EXPECT_EQ(Slope(m.get(), d.get(), 0), slope[0]);
      EXPECT_EQ(Slope(m.get(), d.get(), 1), slope[1]);
      EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, m->nu), 1);
      EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, m->njnt), 1);
    }
    EXPECT_EQ(k_poisoned, k) << "flags " << flags;
    EXPECT_EQ(kv_poisoned, kv) << "flags " << flags;

    // the implicit step, whose pass over the terms also reports each one's stiffness (kact,
    // kspring) for the force it applied
    int integrator = m->opt.integrator;
    m->opt.integrator = mjINT_IMPLICIT;
    m->opt.enableflags = flags | mjENBL_IMPLICITPOS;
    std::vector<std::vector<mjtNum>> applied;
    for (bool poisoned : {false, true}) {
      DataPtr step(mj_copyData(nullptr, m.get(), d.get()));
      {
        std::unique_ptr<PoisonPastTheEnd> poison;
        if (poisoned) poison = std::make_unique<PoisonPastTheEnd>(m.get(), step.get());
        mj_step(m.get(), step.get());
        applied.emplace_back(step->qfrc_smooth_step, step->qfrc_smooth_step + m->nv);
      }
    }
    EXPECT_EQ(applied[1], applied[0]) << "step, flags " << flags;
    m->opt.integrator = integrator;
  }
  m->opt.enableflags = 0;
  ExpectKMatchesFiniteDifference(m.get(), d.get(), "unpoisoned");
}

// Catches: mj_resetData's pass over the tendons (mj_setTendonPosScope) writing one scope past
// the end of d->ten_posscope, into the next array of mjData: the array is replaced by a copy one
// element longer whose last element must survive the reset. And a tendon's chain read past its own
// wraps (tendonLeaf): tendon t, on one chain, is followed by u, whose first joint is on another
// branch, so that t would be taken for a row on several branches.
TEST_F(ImplicitPosGuardInput, TendonScopeWritesNothingPastTheEnd) {
  const std::string tendons =
      "  <tendon><fixed name=\"t\"><joint joint=\"a\" coef=\"1\"/><joint joint=\"b\" "
      "coef=\"0.5\"/></fixed><fixed name=\"u\"><joint joint=\"c\" coef=\"1\"/>"
      "<joint joint=\"a\" coef=\"1\"/></fixed></tendon>\n"
      "  <actuator><position tendon=\"t\" kp=\"100\"/><position tendon=\"u\" kp=\"100\"/>"
      "</actuator>\n";
  ModelPtr m = LoadModelOrFail(Model(tendons));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  int nten = m->ntendon;
  ASSERT_EQ(nten, 2);
  const int sentinel = -12345;
  std::vector<int> scope(nten + 1, sentinel);
  int* own = d->ten_posscope;
  d->ten_posscope = scope.data();
  mj_resetData(m.get(), d.get());
  d->ten_posscope = own;
  EXPECT_EQ(scope[nten], sentinel);
  EXPECT_THAT(std::vector<int>(scope.begin(), scope.begin() + nten),
              ElementsAre(mjPOSSCOPE_RESTORING, mjPOSSCOPE_RESTORING));
  EXPECT_EQ(mjd_actuatorBranches(m.get(), 0), 0);
  EXPECT_EQ(mjd_actuatorBranches(m.get(), 1), 1);
}

// Catches: a loop of the step-force outputs (engine_step_force.c) running one past the end of
// d->actuator_force_step (nu), qfrc_actuator_step or qfrc_smooth_step (nv), which the arena's
// next array or its end would absorb unseen. Each is replaced by a copy one element longer with a
// sentinel there, for one step under Euler (with joint damping), implicit, implicit with the flag
// and with the weights, and RK4, of two servos (one force-limited and held) and a tendon servo.
TEST_F(ImplicitPosGuardInput, StepForceWritesNothingPastTheEnd) {
  ModelPtr m = LoadModelOrFail(Model(
      "<tendon><fixed name=\"t\"><joint joint=\"a\" coef=\"1\"/><joint joint=\"b\" "
      "coef=\"0.5\"/></fixed></tendon><actuator>" + Affine("joint=\"a\"", 5, 0, -1e4) +
      Affine("joint=\"b\" forcelimited=\"true\" forcerange=\"-1 1\"", 5, 0, -1e4) +
      Affine("tendon=\"t\"", 5, 0, -100) + "</actuator>"));
  ASSERT_NE(m, nullptr);
  for (int j = 0; j < m->njnt; ++j) m->dof_damping[m->jnt_dofadr[j]] = 0.5;
  int nu = m->nu, nv = m->nv;
  const double sentinel = 12345.5;
  struct Scheme {
    int integrator, flags;
  } schemes[] = {{mjINT_EULER, 0},
                 {mjINT_IMPLICIT, 0},
                 {mjINT_IMPLICIT, mjENBL_IMPLICITPOS},
                 {mjINT_IMPLICIT, mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT},
                 {mjINT_RK4, mjENBL_IMPLICITPOS}};
  for (const Scheme& s : schemes) {
    m->opt.integrator = s.integrator;
    m->opt.enableflags = s.flags;
    DataPtr d(mj_makeData(m.get()));
    SetAwayFromRest(m.get(), d.get());
    std::vector<mjtNum> force(nu + 1, sentinel), actuator(nv + 1, sentinel),
        smooth(nv + 1, sentinel);
    mjtNum* own[3] = {d->actuator_force_step, d->qfrc_actuator_step, d->qfrc_smooth_step};
    d->actuator_force_step = force.data();
    d->qfrc_actuator_step = actuator.data();
    d->qfrc_smooth_step = smooth.data();
    mj_step(m.get(), d.get());
    d->actuator_force_step = own[0];
    d->qfrc_actuator_step = own[1];
    d->qfrc_smooth_step = own[2];
    std::string what = "integrator " + std::to_string(s.integrator) + " flags " +
                       std::to_string(s.flags);
    EXPECT_EQ(force[nu], sentinel) << what;
    EXPECT_EQ(actuator[nv], sentinel) << what;
    EXPECT_EQ(smooth[nv], sentinel) << what;
    EXPECT_NE(force[0], sentinel) << what;  // the step wrote the outputs
  }
}

// Catches: the product h*qDeriv*qacc of qfrc_smooth_step reading columns past the end of a row
// to tell whether the row's columns are consecutive (and then summing the wrong elements of qacc).
// The last row of BranchedTreeXml is {0, 2, 4}; D_colind is replaced by a copy two elements
// longer, both 2, which would make that row look consecutive ({0, 1, 2}) to a read past it. The
// step's outputs must equal those of the same step with MuJoCo's own D_colind, under implicit
// with and without the flag.
TEST_F(ImplicitPosGuardInput, StepForceReadsNoColumnPastItsRow) {
  ModelPtr m = LoadModelOrFail(BranchedTreeXml(2e3, 20, 0.005));
  ASSERT_NE(m, nullptr);
  for (int flags : {0, static_cast<int>(mjENBL_IMPLICITPOS)}) {
    m->opt.enableflags = flags;
    std::vector<mjtNum> smooth[2];
    for (int poisoned : {0, 1}) {
      DataPtr d(mj_makeData(m.get()));
      SetAwayFromRest(m.get(), d.get());
      mj_step(m.get(), d.get());  // D_colind set
      ASSERT_EQ(d->D_rownnz[m->nv - 1], 3);
      ASSERT_EQ(d->D_colind[m->nD - 2], 2);
      std::vector<int> colind(d->D_colind, d->D_colind + m->nD);
      colind.resize(m->nD + 2, 2);
      int* own = d->D_colind;
      if (poisoned) d->D_colind = colind.data();
      mj_step(m.get(), d.get());
      d->D_colind = own;
      smooth[poisoned].assign(d->qfrc_smooth_step, d->qfrc_smooth_step + m->nv);
    }
    EXPECT_EQ(smooth[0], smooth[1]) << "flags " << flags;
  }
}

// a servo on joint b, then one on a fixed tendon across two branches (joints a and c), the last
// actuator
std::string BranchServoModel() {
  return Model(
      "<tendon><fixed name=\"br\"><joint joint=\"a\" coef=\"1\"/><joint joint=\"c\" "
      "coef=\"-0.5\"/></fixed></tendon><actuator>" + Affine("joint=\"b\"", 5, 0, -100) +
      Affine("tendon=\"br\"", 5, 0, -100) + "</actuator>");
}

// Catches: the walk over a moment row on several branches (rowFirst, rowNext) starting past its
// last dof: it reads the next row of actuator_moment and past the end of qvel, and writes past
// the end of vec. The servo on a tendon across two branches is the last actuator; its moment and
// qvel are replaced by copies one row (one element) longer, the extra elements NaN, and vec is
// one element longer with a sentinel there.
TEST_F(ImplicitPosGuardInput, BranchRowWalkStaysInItsRow) {
  ModelPtr m = LoadModelOrFail(BranchServoModel());
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(mjd_actuatorBranches(m.get(), 1), 1);
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
  mj_forward(m.get(), d.get());
  int nu = m->nu, nv = m->nv;
  const double sentinel = 12345.5;
  for (int flags : {0, static_cast<int>(mjENBL_POSWEIGHT)}) {
    m->opt.enableflags = flags;
    std::vector<mjtNum> moment(d->actuator_moment, d->actuator_moment + nu * nv);
    std::vector<mjtNum> qvel(d->qvel, d->qvel + nv);
    moment.resize((nu + 1) * nv, kNaN);
    qvel.resize(nv + 2, kNaN);
    mjtNum* own_moment = d->actuator_moment;
    mjtNum* own_qvel = d->qvel;
    d->actuator_moment = moment.data();
    d->qvel = qvel.data();
    std::vector<mjtNum> vec(nv + 2, 0.0);
    vec[nv] = vec[nv + 1] = sentinel;
    mjd_implicitPos(m.get(), d.get(), nullptr, 0, vec.data(), 1);
    d->actuator_moment = own_moment;
    d->qvel = own_qvel;
    for (int i = 0; i < nv; ++i) {
      EXPECT_TRUE(std::isfinite(vec[i])) << "flags " << flags << " dof " << i;
    }
    EXPECT_EQ(vec[nv], sentinel) << "flags " << flags;
    EXPECT_EQ(vec[nv + 1], sentinel) << "flags " << flags;
  }
}

// Catches: mjd_implicitPos taking the velocity term of a row on several branches out of its
// matrix, as the step's mj_implicitMatrix does: its matrix is K on the pattern of M alone. The
// tendon servo across two branches (damping 1) adds nothing to it: the matrix equals the one with
// that servo's position gain zeroed (out of K).
TEST_F(ImplicitPosGuardInput, PublicKLeavesTheVelocityTermAlone) {
  ModelPtr m = LoadModelOrFail(BranchServoModel());
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
  mj_forward(m.get(), d.get());
  ASSERT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 1, nullptr), mjPOSSCOPE_RESTORING);
  std::vector<double> k, kv, k_out, kv_out;
  EngineK(m.get(), d.get(), &k, &kv);
  m->actuator_biasprm[mjNBIAS + 1] = 0;
  EngineK(m.get(), d.get(), &k_out, &kv_out);
  EXPECT_EQ(k, k_out);
  EXPECT_NE(kv, kv_out);  // the shift has the row's term
}

// two stateless servos, then one with an activation (a filter): actuator 2's activation is act[0]
std::string StatelessFirstModel() {
  return Model("<actuator>" + Affine("joint=\"a\"", 5, -30, -100) +
               Affine("joint=\"c\"", 5, -40, -90) +
               Affine("joint=\"b\"", 5, -20, -80, "dyntype=\"filter\" dynprm=\"0.05\"") +
               "</actuator>");
}

// Catches: the activation of actuator i read at a wrong index when stateless actuators come
// first (act index i - (nu - na)).
TEST_F(ImplicitPosGuardInput, ActivationIndex) {
  ModelPtr m = LoadModelOrFail(StatelessFirstModel());
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->na, 1);
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
  d->act[0] = 0.9;
  mj_forward(m.get(), d.get());
  EXPECT_EQ(Slope(m.get(), d.get(), 0), -100 + -30 * d->ctrl[0]);
  EXPECT_EQ(Slope(m.get(), d.get(), 1), -90 + -40 * d->ctrl[1]);
  EXPECT_EQ(Slope(m.get(), d.get(), 2), -80 + -20 * 0.9);
  EXPECT_EQ(mjd_actuatorInput(m.get(), d.get(), 2), 0.9);  // its activation
  ExpectKMatchesFiniteDifference(m.get(), d.get(), "activation");
}

//------------------------------ gain and bias -----------------------------------------------------

class ImplicitPosGuardSlope : public MujocoTest {};

// Catches: gainprm[1] added for a fixed gain (which ignores it), the affine term skipped when
// gainprm[0] is 0 or gainprm[1] is 1, and an affine gain without bias skipped as a motor.
TEST_F(ImplicitPosGuardSlope, GainAndBiasTerms) {
  ModelPtr m = LoadModelOrFail(Model(
      "<actuator>"
      "<general joint=\"a\" gainprm=\"50 7 0\" biastype=\"affine\" biasprm=\"0 -50 -1\"/>" +
      Affine("joint=\"b\"", 0, 1, -50) +
      "<general joint=\"c\" gaintype=\"affine\" gainprm=\"0 -40 0\"/>"
      "</actuator>"));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
  d->ctrl[1] = d->ctrl[2] = 0.5;
  mj_forward(m.get(), d.get());
  int scope[3];
  EXPECT_EQ(Slope(m.get(), d.get(), 0, &scope[0]), -50);
  EXPECT_EQ(Slope(m.get(), d.get(), 1, &scope[1]), -50 + 0.5);
  EXPECT_EQ(Slope(m.get(), d.get(), 2, &scope[2]), -40 * 0.5);
  for (int u = 0; u < 3; ++u) EXPECT_EQ(scope[u], mjPOSSCOPE_RESTORING) << u;
  ExpectKMatchesFiniteDifference(m.get(), d.get(), "gain and bias");
}

// Catches: the velocity slope of an affine gain (gainprm[2] times the input) read from another
// actuator's parameters, skipped where gainprm[2] is 1, or added for a fixed gain (which ignores
// gainprm[2]): mjd_actuatorSlopes' velocity slope is a central difference of actuator_force over
// the actuator's velocity (the force is affine in it). The second actuator reads its own row.
TEST_F(ImplicitPosGuardSlope, VelocitySlopeIsTheForcesDerivative) {
  ModelPtr m = LoadModelOrFail(Model(
      "<actuator>" + Affine("joint=\"a\"", 5, 0, -100) +
      "<general joint=\"b\" gaintype=\"affine\" gainprm=\"5 -3 1\" biastype=\"affine\" "
      "biasprm=\"0 -100 -2\"/>"
      "<general joint=\"c\" gainprm=\"5 0 7\" biastype=\"affine\" biasprm=\"0 -100 -2\"/>"
      "</actuator>"));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
  ASSERT_EQ(m->actuator_gaintype[2], mjGAIN_FIXED);
  const double eps = 1e-4;
  for (int i = 0; i < m->nu; ++i) {
    ASSERT_NE(d->ctrl[i], 0);
    int dof = m->jnt_dofadr[m->actuator_trnid[2 * i]];
    double qvel = d->qvel[dof], force[2];
    for (int s = 0; s < 2; ++s) {
      d->qvel[dof] = qvel + (s ? eps : -eps);
      mj_forward(m.get(), d.get());
      force[s] = d->actuator_force[i];
    }
    d->qvel[dof] = qvel;
    mj_forward(m.get(), d.get());
    mjtNum slopes[2];
    EXPECT_EQ(mjd_actuatorSlopes(m.get(), d.get(), i, slopes), 1) << i;
    EXPECT_NEAR(slopes[1], (force[1] - force[0]) / (2 * eps), 1e-8) << "actuator " << i;
  }
}

// Catches: an actuator taken as affine when only its gain or only its bias is (user gain or
// bias: left explicit), or given slopes by mjd_actuatorSlopes.
TEST_F(ImplicitPosGuardSlope, UserGainOrBiasIsExcluded) {
  const std::vector<std::string> actuators = {
      "<general joint=\"a\" gaintype=\"user\" biastype=\"affine\" biasprm=\"0 -100 -1\"/>",
      "<general joint=\"a\" gaintype=\"affine\" gainprm=\"5 -30 0\" biastype=\"user\"/>",
      "<general joint=\"a\" gainprm=\"5\" biastype=\"user\"/>",
  };
  for (const std::string& a : actuators) {
    ModelPtr m = LoadModelOrFail(Model("<actuator>" + a + "</actuator>"));
    ASSERT_NE(m, nullptr);
    DataPtr d(mj_makeData(m.get()));
    SetAwayFromRest(m.get(), d.get());
    mj_forward(m.get(), d.get());
    int scope;
    EXPECT_EQ(Slope(m.get(), d.get(), 0, &scope), 0) << a;
    EXPECT_EQ(scope, mjPOSSCOPE_GAINBIAS) << a;
    mjtNum slopes[2] = {kNaN, kNaN};
    EXPECT_EQ(mjd_actuatorSlopes(m.get(), d.get(), 0, slopes), 0) << a;
    EXPECT_THAT(slopes, ElementsAre(0, 0)) << a;
    EXPECT_TRUE(BitIdentical(StateAfterSteps(m.get(), false, 20),
                             StateAfterSteps(m.get(), true, 20))) << a;
  }
}

// Catches: a slope that is positive but below 1, -inf, or too stiff for the factorization taken
// as restoring; a restoring one left out.
TEST_F(ImplicitPosGuardSlope, SignAndFiniteness) {
  ModelPtr m =
      LoadModelOrFail(Model("<actuator>" + Affine("joint=\"a\"", 5, 0, -1) + "</actuator>"));
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
    SetAwayFromRest(m.get(), d.get());
    mj_forward(m.get(), d.get());
    EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), c.scope) << c.slope;
  }
}

// the stiffness k > 0 for which (k*h)*h is exactly mjMAXVAL, the engine's bound, if there is one
// near mjMAXVAL/h^2 (0 otherwise)
double StiffnessAtTheBound(double h) {
  double k = mjMAXVAL / (h * h);
  for (int i = 0; i < 64; ++i) {
    double p = k * h * h;
    if (p == mjMAXVAL) return k;
    k = std::nextafter(k, p < mjMAXVAL ? kInf : 0.0);
  }
  return 0;
}

// Catches: the stiffness bound h^2 |slope| <= mjMAXVAL (h^2 k for springs) made exclusive or
// dropped, or a negative spring taken into K: a servo or spring exactly on the bound is in K, also
// under mjENBL_POSWEIGHT; a spring just past it, or negative, is not.
TEST_F(ImplicitPosGuardSlope, StiffnessBoundIsInclusive) {
  ModelPtr m =
      LoadModelOrFail(Model("<actuator>" + Affine("joint=\"a\"", 5, 0, -1) + "</actuator>"));
  ASSERT_NE(m, nullptr);
  const double h = m->opt.timestep, k = StiffnessAtTheBound(h);
  ASSERT_GT(k, 0);
  m->actuator_biasprm[1] = -k;
  m->jnt_stiffness[0] = -5;                      // joint a: negative, never in K
  m->jnt_stiffness[1] = std::nextafter(k, kInf);  // joint b: just past the bound
  m->jnt_stiffness[2] = k;                       // joint c: on it
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
  mj_forward(m.get(), d.get());
  int dof = m->jnt_dofadr[2], nv = m->nv;
  m->dof_damping[dof] = 2 * std::sqrt(k / d->qLDiagInv[dof]);
  m->actuator_biasprm[2] = -2 * std::sqrt(k / d->qLDiagInv[m->jnt_dofadr[0]]);
  EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_RESTORING);
  std::vector<double> kd, kv;
  EngineK(m.get(), d.get(), &kd, &kv);
  EXPECT_EQ(kd[dof * nv + dof], k);
  int a = m->jnt_dofadr[0], b = m->jnt_dofadr[1];
  EXPECT_EQ(kd[a * nv + a], k * d->actuator_moment[a] * d->actuator_moment[a]);  // the servo
  EXPECT_EQ(kd[b * nv + b], 0);

  // the same under mjENBL_POSWEIGHT, whose weight at that stiffness is 1 (backward Euler)
  SetEnable(m.get(), mjENBL_POSWEIGHT, true);
  EngineK(m.get(), d.get(), &kd, &kv);
  EXPECT_EQ(kd[dof * nv + dof], k);
  EXPECT_EQ(kd[a * nv + a], k * d->actuator_moment[a] * d->actuator_moment[a]);
  EXPECT_EQ(kd[b * nv + b], 0);
}

// Catches: a spring scope that differs from the springs mjd_implicitPos takes into K (the servo
// report asks mjd_jointPosScope): each verdict, and K's diagonal on every dof of each joint
// (hinge, slide, ball, free), agree.
TEST_F(ImplicitPosGuardSlope, JointScopeIsTheSpringsInK) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><option timestep=\"0.005\"/><worldbody><body><joint name=\"h\"/>"
      "<geom size=\".1\"/><body pos=\".3 0 0\"><joint type=\"slide\"/><geom size=\".1\"/>"
      "<body pos=\".3 0 0\"><joint type=\"ball\"/><geom size=\".1\"/>"
      "</body></body></body><body pos=\"0 1 0\"><joint type=\"free\"/><geom size=\".1\"/>"
      "</body></worldbody></mujoco>");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->njnt, 4);
  const double h = m->opt.timestep, bound = StiffnessAtTheBound(h);
  ASSERT_GT(bound, 0);
  DataPtr d(mj_makeData(m.get()));
  mj_forward(m.get(), d.get());
  struct Case {
    double k;
    int scope;
  };
  for (Case c : {Case{40, mjPOSSCOPE_RESTORING}, Case{0, mjPOSSCOPE_ZERO},
                 Case{-3, mjPOSSCOPE_NONRESTORING}, Case{kInf, mjPOSSCOPE_NONRESTORING},
                 Case{kNaN, mjPOSSCOPE_NONRESTORING}, Case{bound, mjPOSSCOPE_RESTORING},
                 Case{std::nextafter(bound, kInf), mjPOSSCOPE_NONRESTORING}}) {
    for (int j = 0; j < m->njnt; ++j) {
      m->jnt_stiffness[j] = c.k;
      EXPECT_EQ(mjd_jointPosScope(m.get(), j), c.scope) << "joint " << j << " k " << c.k;
      std::vector<double> k, kv;
      EngineK(m.get(), d.get(), &k, &kv);
      int end = j + 1 < m->njnt ? m->jnt_dofadr[j + 1] : m->nv;
      for (int dof = 0; dof < m->nv; ++dof) {
        bool mine = dof >= m->jnt_dofadr[j] && dof < end;
        EXPECT_EQ(k[dof * m->nv + dof], mine && c.scope == mjPOSSCOPE_RESTORING ? c.k : 0)
            << "joint " << j << " dof " << dof << " k " << c.k;
      }
      m->jnt_stiffness[j] = 0;
    }
  }
  m->jnt_stiffness[0] = 40;
  m->jnt_stiffness[2] = 40;
  m->opt.disableflags |= mjDSBL_PASSIVE;
  EXPECT_EQ(mjd_jointPosScope(m.get(), 0), mjPOSSCOPE_DISABLED);
  EXPECT_EQ(mjd_jointPosScope(m.get(), 2), mjPOSSCOPE_DISABLED);
}

//------------------------------ force range -------------------------------------------------------

class ImplicitPosGuardScope : public MujocoTest {};

// Catches: the clamp test reading another actuator's force range, or missing a force exactly on
// its lower or upper bound.
TEST_F(ImplicitPosGuardScope, ForceRangePerActuatorAndBounds) {
  const double range[3][2] = {{-100, 2}, {-3, 50}, {-40, 1.5}};
  std::string actuators = "<actuator>";
  for (int i = 0; i < 3; ++i) {
    char extra[96];
    std::snprintf(extra, sizeof(extra), "forcelimited=\"true\" forcerange=\"%g %g\"", range[i][0],
                  range[i][1]);
    actuators += Affine("joint=\"a\"", 5, 0, -100, extra);
  }
  ModelPtr m = LoadModelOrFail(Model(actuators + "</actuator>"));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
  mj_forward(m.get(), d.get());
  for (int i = 0; i < 3; ++i) {
    for (double force :
         {-200.0, -100.0, -50.0, -40.0, -3.0, -1.0, 0.0, 1.5, 2.0, 3.0, 50.0, 60.0}) {
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

// the model of these elements at a state away from rest: every actuator in scope with a restoring
// slope, and K the finite difference of its forces
void ExpectAllRestoringWithExactK(const std::string& elements, const std::string& what) {
  ModelPtr m = LoadModelOrFail(Model(elements));
  ASSERT_NE(m, nullptr) << what;
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
  mj_forward(m.get(), d.get());
  for (int u = 0; u < m->nu; ++u) {
    EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), u, nullptr), mjPOSSCOPE_RESTORING)
        << what << ", actuator " << u;
  }
  ExpectKMatchesFiniteDifference(m.get(), d.get(), what);
}

// Catches: jointinparent transmissions left out of scope.
TEST_F(ImplicitPosGuardScope, JointInParentIsInScope) {
  std::string actuator = "<actuator><general jointinparent=\"b\" gainprm=\"300\" "
                         "biastype=\"affine\" biasprm=\"0 -300 -1\" gear=\"1.5\"/></actuator>";
  ModelPtr m = LoadModelOrFail(Model(actuator));
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->actuator_trntype[0], mjTRN_JOINTINPARENT);
  ExpectAllRestoringWithExactK(actuator, "jointinparent");
}

// Catches: a fixed tendon of a single joint left out of scope.
TEST_F(ImplicitPosGuardScope, OneJointFixedTendonIsInScope) {
  ExpectAllRestoringWithExactK(
      "<tendon><fixed name=\"t\"><joint joint=\"b\" coef=\"-0.7\"/></fixed></tendon><actuator>" +
          Affine("tendon=\"t\"", 5, 0, -300) + "</actuator>",
      "one-joint tendon");
}

// Catches: a joint servo run through the fixed-tendon code as well (its joint is on a tendon whose
// index equals the joint's), adding its term twice.
TEST_F(ImplicitPosGuardScope, JointServoBesideTendonOverItsJoint) {
  ExpectAllRestoringWithExactK(
      "<tendon><fixed name=\"t\"><joint joint=\"a\" coef=\"1\"/>"
      "<joint joint=\"b\" coef=\"0.5\"/></fixed></tendon><actuator>" +
          Affine("joint=\"a\"", 5, 0, -300) + Affine("joint=\"b\"", 5, 0, -200) +
          Affine("tendon=\"t\"", 5, 0, -100) + "</actuator>",
      "servo beside tendon");
}

// Catches: a fixed tendon over a ball joint (the compiler accepts one) taken into scope because
// only the tendon's first joint was checked for a hinge or slide.
TEST_F(ImplicitPosGuardScope, FixedTendonOverBallJointIsExcluded) {
  ModelPtr m = LoadModelOrFail(
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
  SetAwayFromRest(m.get(), d.get());
  mj_forward(m.get(), d.get());
  EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_TRANSMISSION);
  EXPECT_TRUE(BitIdentical(StateAfterSteps(m.get(), false, 20),
                           StateAfterSteps(m.get(), true, 20)));
}

//------------------------------ mj_inverse with activations ---------------------------------------

class ImplicitPosGuardInverse : public MujocoTest {};

// Catches: mj_inverse (invdiscrete and implicitpos) not restoring the caller's act_dot,
// actuator_force or qfrc_actuator when actuators have activations (na > 0), e.g. a save area
// too small, which mj_fwdActuation's own scratch then overwrites.
TEST_F(ImplicitPosGuardInverse, ActuationOutputsRestoredWithActivations) {
  ModelPtr m = LoadModelOrFail(StatelessFirstModel());
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->na, 1);
  SetEnable(m.get(), mjENBL_INVDISCRETE | mjENBL_IMPLICITPOS, true);
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
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

// the inverse of a copy of (m, d0) with the given enable flags and integrator; d0's qacc is the
// acceleration to invert; returns qfrc_inverse, and the stack's high-water mark in *maxuse
std::vector<mjtNum> Inverse(const mjModel* m, const mjData* d0, int enableflags, int integrator,
                            int* maxuse = nullptr) {
  ModelPtr mc(mj_copyModel(nullptr, m));
  mc->opt.enableflags = enableflags;
  mc->opt.integrator = integrator;
  DataPtr d(mj_makeData(mc.get()));
  mj_copyData(d.get(), mc.get(), d0);
  d->maxuse_stack = 0;
  mj_inverse(mc.get(), d.get());
  if (maxuse) *maxuse = d->maxuse_stack;
  return std::vector<mjtNum>(d->qfrc_inverse, d->qfrc_inverse + mc->nv);
}

// a three-link arm without joint damping, after mj_forward, with an acceleration to invert
DataPtr ArmToInvert(const mjModel* m) {
  DataPtr d(mj_makeData(m));
  SetAwayFromRest(m, d.get());
  mj_forward(m, d.get());
  for (int i = 0; i < m->nv; ++i) d->qacc[i] = 3.0 * std::sin(0.7 * i + 1.0) / 7.0;
  return d;
}

// Catches: Euler without dof damping run through the conversion anyway (M^-1 (M qacc) is qacc
// only to rounding; the documented behaviour is qacc unchanged, bit for bit).
TEST_F(ImplicitPosGuardInverse, EulerWithoutDampingIsUntouched) {
  std::string error;
  ModelPtr m(LoadWithServos(MJPOS_MODEL_DIR "/humanoid/humanoid.xml", 100, 5, &error));
  ASSERT_NE(m, nullptr) << error;
  m->opt.integrator = mjINT_EULER;
  m->opt.disableflags |= mjDSBL_CONTACT;
  for (int i = 0; i < m->nv; ++i) m->dof_damping[i] = 0;
  DataPtr d = ArmToInvert(m.get());
  EXPECT_EQ(Inverse(m.get(), d.get(), mjENBL_INVDISCRETE, mjINT_EULER),
            Inverse(m.get(), d.get(), 0, mjINT_EULER));
}

// Records the last mju_error message while in scope (the handler returns, so the engine goes on
// as it does under a user handler that returns).
class ErrorCapture {
 public:
  ErrorCapture() : previous_(mju_user_error) {
    last_ = &message;
    mju_user_error = [](const char* msg) { *last_ = msg; };
  }
  ~ErrorCapture() {
    mju_user_error = previous_;  // the fixture's
    last_ = nullptr;
  }
  std::string message;

 private:
  void (*previous_)(const char*);
  static std::string* last_;
};
std::string* ErrorCapture::last_ = nullptr;

// Catches: the conversion leaving its scratch on the MuJoCo stack (d->pstack is reset by the
// caller, but everything after it then runs higher: maxuse_stack grows) on any of its exits:
// Euler with damping, Euler without (early return), RK4 (the error exit).
TEST_F(ImplicitPosGuardInverse, ConversionFreesItsStack) {
  ModelPtr m = LoadModelOrFail(ChainXml(3, 50, 2, 0.005, "Euler"));
  ASSERT_NE(m, nullptr);
  DataPtr d = ArmToInvert(m.get());
  std::string error;
  int damped, undamped, rk4, continuous;
  {
    ErrorCapture capture;
    Inverse(m.get(), d.get(), 0, mjINT_EULER, &continuous);
    Inverse(m.get(), d.get(), mjENBL_INVDISCRETE, mjINT_EULER, &damped);
    Inverse(m.get(), d.get(), mjENBL_INVDISCRETE, mjINT_RK4, &rk4);
    for (int i = 0; i < m->nv; ++i) m->dof_damping[i] = 0;
    Inverse(m.get(), d.get(), mjENBL_INVDISCRETE, mjINT_EULER, &undamped);
    error = capture.message;
  }
  EXPECT_NE(error.find("RK4"), std::string::npos);
  EXPECT_GT(continuous, 0);
  EXPECT_EQ(undamped, damped);
  EXPECT_EQ(rk4, damped);
  // the discrete qacc is saved (nv) for the rest of mj_inverse, nothing more
  EXPECT_EQ(damped, continuous + m->nv);
}

// Catches: mj_inverse going on with the discrete conversion after the RK4 error when the error
// handler returns: qacc is then read as continuous-time, as without the flag.
TEST_F(ImplicitPosGuardInverse, Rk4ErrorFallsBackToContinuousTime) {
  ModelPtr m = LoadModelOrFail(ChainXml(3, 50, 2, 0.005, "RK4"));
  ASSERT_NE(m, nullptr);
  DataPtr d = ArmToInvert(m.get());
  std::string error;
  std::vector<mjtNum> discrete;
  {
    ErrorCapture capture;
    discrete = Inverse(m.get(), d.get(), mjENBL_INVDISCRETE, mjINT_RK4);
    error = capture.message;
  }
  EXPECT_NE(error.find("RK4"), std::string::npos);
  EXPECT_EQ(discrete, Inverse(m.get(), d.get(), 0, mjINT_RK4));
}

// Catches: the scope of K in the conversion reading the caller's actuator_force instead of the
// force of the state being inverted (a servo whose stale force sits on its forcerange clamp).
TEST_F(ImplicitPosGuardInverse, ScopeReadsTheStatesForce) {
  ModelPtr m = LoadModelOrFail(ChainXml(3, 50, 2, 0.005));
  ASSERT_NE(m, nullptr);
  for (int i = 0; i < m->nu; ++i) {
    m->actuator_forcelimited[i] = 1;
    m->actuator_forcerange[2 * i] = -1e3;
    m->actuator_forcerange[2 * i + 1] = 1e3;
  }
  DataPtr d = ArmToInvert(m.get());
  const int flags = mjENBL_INVDISCRETE | mjENBL_IMPLICITPOS;
  std::vector<mjtNum> fresh = Inverse(m.get(), d.get(), flags, mjINT_IMPLICIT);
  for (int i = 0; i < m->nu; ++i) d->actuator_force[i] = m->actuator_forcerange[2 * i];
  EXPECT_EQ(Inverse(m.get(), d.get(), flags, mjINT_IMPLICIT), fresh);
}

// Catches: mj_compareFwdInv (fwdinv) running the discrete conversion, skipping the inverse, or
// recomputing sensors: its statistics are those of the stock continuous-time inverse at the
// solution the step leaves, and the step's sensors stay as they are.
TEST_F(ImplicitPosGuardInverse, FwdinvComparesContinuousTime) {
  // two coupled joints past their limits, one PGS iteration: the forward pass's constraint
  // forces are not the inverse's
  std::string xml = ChainXml(2, 400, 1, 0.01);
  for (const char* j : {"<joint name=\"j0\"", "<joint name=\"j1\""}) {
    xml.replace(xml.find(j), std::strlen(j),
                std::string(j) + " limited=\"true\" range=\"-0.1 0.1\"");
  }
  xml.replace(xml.find("</mujoco>"), 9,
              "  <option solver=\"PGS\" iterations=\"1\"/>\n  <sensor><jointlimitfrc joint=\"j0\"/>"
              "<jointlimitfrc joint=\"j1\"/></sensor>\n</mujoco>");
  ModelPtr m = LoadModelOrFail(xml);
  ASSERT_NE(m, nullptr);
  for (int flags :
       {static_cast<int>(mjENBL_IMPLICITPOS), mjENBL_IMPLICITPOS | mjENBL_INVDISCRETE}) {
    DataPtr d0(mj_makeData(m.get()));
    SetAwayFromRest(m.get(), d0.get());
    d0->qpos[0] = 0.3;  // past the limits
    d0->qpos[1] = -0.25;

    // one step without and with fwdinv (mj_step compares after the forward pass), and the
    // forward pass alone
    m->opt.enableflags = flags;
    DataPtr s(mj_makeData(m.get())), g(mj_makeData(m.get()));
    mj_copyData(s.get(), m.get(), d0.get());
    mj_step(m.get(), s.get());
    mj_copyData(g.get(), m.get(), d0.get());
    mj_forward(m.get(), g.get());
    m->opt.enableflags = flags | mjENBL_FWDINV;
    DataPtr f(mj_makeData(m.get()));
    mj_copyData(f.get(), m.get(), d0.get());
    mj_step(m.get(), f.get());
    ASSERT_GE(g->nefc, 2);
    EXPECT_EQ(std::vector<mjtNum>(f->sensordata, f->sensordata + m->nsensordata),
              std::vector<mjtNum>(s->sensordata, s->sensordata + m->nsensordata));

    // reference: stock's comparison, the continuous-time inverse at the velocity stage of the
    // solution the step compared: the forward pass's, with the constraint force and qacc the step
    // leaves (its constraints solved in its metric)
    m->opt.enableflags = 0;
    DataPtr r(mj_makeData(m.get()));
    mj_copyData(r.get(), m.get(), g.get());
    mju_copy(r->qacc, s->qacc, m->nv);
    mju_copy(r->qfrc_constraint, s->qfrc_constraint, m->nv);
    std::vector<mjtNum> qforce(m->nv), dif(m->nv);
    mju_add(qforce.data(), r->qfrc_applied, r->qfrc_actuator, m->nv);
    std::vector<mjtNum> constraint(r->qfrc_constraint, r->qfrc_constraint + m->nv);
    mj_inverseSkip(m.get(), r.get(), mjSTAGE_VEL, 1);
    mju_sub(dif.data(), constraint.data(), r->qfrc_constraint, m->nv);
    EXPECT_EQ(f->solver_fwdinv[0], mju_norm(dif.data(), m->nv)) << flags;
    mju_sub(dif.data(), qforce.data(), r->qfrc_inverse, m->nv);
    EXPECT_EQ(f->solver_fwdinv[1], mju_norm(dif.data(), m->nv)) << flags;
  }
}

//------------------------------ sparsity ---------------------------------------------------------

// Catches: an element of K outside the D pattern dropped silently (the matrix would then lack a
// term that the shift keeps): with a pattern reduced to the diagonal, a tendon servo's
// off-diagonal element is an error; with M's own pattern there is none (and no warning).
class ImplicitPosGuardPattern : public MujocoTest {};

TEST_F(ImplicitPosGuardPattern, OffPatternElementIsAnError) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><option timestep=\"0.005\"/><worldbody><body><joint name=\"a\"/>"
      "<geom size=\".1\"/><body pos=\".3 0 0\"><joint name=\"b\"/><geom size=\".1\"/>"
      "</body></body></worldbody><tendon><fixed name=\"t\"><joint joint=\"a\" coef=\"1\"/>"
      "<joint joint=\"b\" coef=\"0.5\"/></fixed></tendon><actuator>" +
      Affine("tendon=\"t\"", 5, 0, -300) + "</actuator></mujoco>");
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  mj_forward(m.get(), d.get());
  ASSERT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_RESTORING);
  ErrorCapture capture;
  for (bool diagonal : {false, true}) {
    mj_makeMSparse(m.get(), d.get(), d->D_rownnz, d->D_rowadr, d->D_colind);
    if (diagonal) {
      for (int i = 0; i < m->nv; ++i) {
        d->D_rownnz[i] = 1;
        d->D_rowadr[i] = i;
        d->D_colind[i] = i;
      }
    }
    std::vector<mjtNum> matD(m->nD, 0.0);
    capture.message.clear();
    mjd_implicitPos(m.get(), d.get(), matD.data(), 1, nullptr, 0);
    if (diagonal) {
      EXPECT_NE(capture.message.find("outside the pattern of M"), std::string::npos)
          << capture.message;
    } else {
      EXPECT_EQ(capture.message, "");
    }
  }
}

//------------------------------ accuracy weights (mjENBL_POSWEIGHT) ------------------------------

// The engine's weight table (mjd_posWeightTable) and the weights as documented, as an
// independent reference: the table's lookup, the gate and its raise.
struct WeightTable {
  int nzeta = 0, ns = 0;
  mjtNum ds = 0, below = 0;
  const mjtNum* zeta = nullptr;
  const mjtNum* theta = nullptr;
};

WeightTable Table() {
  WeightTable t;
  mjd_posWeightTable(&t.nzeta, &t.ns, &t.ds, &t.below, &t.zeta, &t.theta);
  return t;
}

// the table's weight of a term of stiffness k, damping c and inverse inertia invweight: 1 where
// h w_n or zeta is not finite or invweight is not positive; `below` at and below stock's cap on
// the term, 2 (zeta + sqrt(zeta^2 + 1)); above it bilinear in (s = log10(h w_n / cap), zeta),
// each clamped to the table
double TableWeight(const WeightTable& t, double h, double k, double c, double invweight) {
  double hw2 = h * h * k * invweight;
  double zeta = 0.5 * c * std::sqrt(invweight / k);
  if (!std::isfinite(hw2) || !std::isfinite(zeta) || !(invweight > 0)) return 1;
  zeta = std::min(zeta, t.zeta[t.nzeta - 1]);
  double cap = 2 * (zeta + std::sqrt(zeta * zeta + 1));
  if (!(hw2 > cap * cap)) return t.below;
  double u = std::min(std::log10(std::sqrt(hw2) / cap) / t.ds, t.ns - 1.0);
  int i = std::min(static_cast<int>(u), t.ns - 2);
  double fu = u - i;
  int j = 0;
  while (j < t.nzeta - 2 && zeta >= t.zeta[j + 1]) ++j;
  double fz = (zeta - t.zeta[j]) / (t.zeta[j + 1] - t.zeta[j]);
  const mjtNum* r0 = t.theta + j * t.ns;
  const mjtNum* r1 = r0 + t.ns;
  return (1 - fz) * ((1 - fu) * r0[i] + fu * r0[i + 1]) + fz * ((1 - fu) * r1[i] + fu * r1[i + 1]);
}

// the risk of a term: h^2 k (1 - 2 theta) - 2 h c
double Risk(double h, double k, double c, double theta) {
  return h * h * k * (1 - 2 * theta) - 2 * h * c;
}

// The gate for the terms k[j] m_j m_j' (damping c[j], weight theta[j]; rows m_j of length nv) at
// the mass matrix of d: 4 (1 - margin) M - sum_{risk > 0} risk m_j m_j' positive definite, by
// Eigen's LLT of the dense matrix. A term with bound[j] > 0 (empty: none) enters by the bound
// bound[j] diag(m_j)^2 instead of m_j m_j' (Cauchy-Schwarz, m m' <= n diag(m)^2 for a row of n
// nonzeros: doc/scope.md, the gate's bound of a row on several branches).
bool DenseGate(const mjModel* m, const mjData* d, double margin,
               const std::vector<std::vector<double>>& rows, const std::vector<double>& k,
               const std::vector<double>& c, const std::vector<double>& theta,
               const std::vector<int>& bound = {}) {
  int nv = m->nv;
  std::vector<mjtNum> full(nv * nv);
  mj_fullM(m, full.data(), d->qM);
  Eigen::MatrixXd s(nv, nv);
  for (int r = 0; r < nv; ++r) {
    for (int q = 0; q < nv; ++q) s(r, q) = 4 * (1 - margin) * full[r * nv + q];
  }
  for (size_t j = 0; j < rows.size(); ++j) {
    double risk = Risk(m->opt.timestep, k[j], c[j], theta[j]);
    if (risk <= 0) continue;
    Eigen::Map<const Eigen::VectorXd> mj(rows[j].data(), nv);
    if (j < bound.size() && bound[j] > 0) {
      for (int r = 0; r < nv; ++r) s(r, r) -= risk * bound[j] * mj(r) * mj(r);
    } else {
      s -= risk * mj * mj.transpose();
    }
  }
  return s.llt().info() == Eigen::Success;
}

// The weights as documented for those terms: the table's at each term's inverse weight at qpos0
// (invweight0[j]); where the gate with margin 1e-3 fails, the terms at risk raised by the least
// a on a grid of 1/64 that passes it with margin 1/2: theta + a (1 - theta). bound: as DenseGate's.
std::vector<double> DocumentedWeights(const mjModel* m, const mjData* d,
                                      const std::vector<std::vector<double>>& rows,
                                      const std::vector<double>& k, const std::vector<double>& c,
                                      const std::vector<double>& invweight0,
                                      const std::vector<int>& bound = {}) {
  WeightTable t = Table();
  double h = m->opt.timestep;
  std::vector<double> theta;
  for (size_t j = 0; j < rows.size(); ++j) {
    theta.push_back(TableWeight(t, h, k[j], c[j], invweight0[j]));
  }
  if (DenseGate(m, d, 1e-3, rows, k, c, theta, bound)) return theta;
  for (int a = 1; a <= 64; ++a) {
    std::vector<double> raised(theta);
    for (size_t j = 0; j < rows.size(); ++j) {
      if (Risk(h, k[j], c[j], theta[j]) > 0) raised[j] += a / 64.0 * (1 - theta[j]);
    }
    if (a == 64 || DenseGate(m, d, 0.5, rows, k, c, raised, bound)) return raised;
  }
  return theta;
}

// the weight of a term alone on a one-dof model of inverse inertia invweight (at qpos0 and now)
double OneTermWeight(const mjModel* m, const mjData* d, double k, double c, double invweight) {
  return DocumentedWeights(m, d, {{1.0}}, {k}, {c}, {invweight})[0];
}

// makes the model's inverse weights at qpos0 stale: masses, inertias and armatures divided by
// scale after compilation (no mj_setConst), so that every current inverse inertia is scale times
// the model's
void Lighten(mjModel* m, double scale) {
  for (int b = 0; b < m->nbody; ++b) {
    m->body_mass[b] /= scale;
    for (int i = 0; i < 3; ++i) m->body_inertia[3 * b + i] /= scale;
  }
  for (int i = 0; i < m->nv; ++i) m->dof_armature[i] /= scale;
}

class ImplicitPosGuardWeight : public MujocoTest {};

// Catches: a change to the weight lookup (the cap, the grid, clamps, row search, interpolation,
// the non-finite guard) or to the gate and its raise for one term: joint springs over h w_n
// 0.01 ... 1e4 and zeta 0 ... 5, at and beside the cap, nodes, both ends and beyond.
TEST_F(ImplicitPosGuardWeight, SpringWeightIsTheDocumentedWeight) {
  WeightTable t = Table();
  ASSERT_GE(t.nzeta, 3);
  ASSERT_GE(t.ns, 3);
  ModelPtr m = LoadModelOrFail(OneHingeSpringXml(0.01576, 1, 0, 0.005));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  mj_forward(m.get(), d.get());
  const double h = m->opt.timestep, inertia = d->qM[0];
  int checked = 0, table = 0, raised = 0;
  for (double hw : {1e-4, 0.01, 0.5, 1.0, 1.99, 2.0, 2.01, 2.06, 2.1, 2.2, 2.5, 3.0, 3.7, 6.3, 10.0,
                    19.0, 21.0, 100.0, 1e4}) {
    for (double zeta : {0.0, 0.02, 0.05, 0.07, 0.1, 0.15, 0.3, 0.5, 0.7, 0.85, 1.0, 1.5, 2.0, 3.0,
                        5.0}) {
      double k = inertia * (hw / h) * (hw / h);
      m->jnt_stiffness[0] = k;
      m->dof_damping[0] = 2 * zeta * std::sqrt(k * inertia);
      double theta = mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, 0);
      double ref = k * h * h > mjMAXVAL ? 1 : OneTermWeight(m.get(), d.get(), k, m->dof_damping[0],
                                                            1 / inertia);
      EXPECT_NEAR(theta, ref, 1e-12) << "h w_n " << hw << " zeta " << zeta;
      double looked_up = TableWeight(t, h, k, m->dof_damping[0], 1 / inertia);
      table += looked_up != t.below && looked_up != 1;
      raised += ref != looked_up;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 19 * 15);
  EXPECT_GT(table, 10);  // the table's inner entries are read
  RecordProperty("raised", std::to_string(raised));

  // degenerate terms: damping not finite, stiffness past the bound h^2 k <= mjMAXVAL (and just
  // inside it), stiffness so small that zeta is not finite
  struct Degenerate {
    double k, c;
  };
  for (Degenerate g : {Degenerate{100, kInf}, Degenerate{1e300, 0}, Degenerate{1e300, 1e300},
                       Degenerate{0.99 * mjMAXVAL / (h * h), 1e9},
                       Degenerate{1.01 * mjMAXVAL / (h * h), 1e9}, Degenerate{1e-320, 0}}) {
    m->jnt_stiffness[0] = g.k;
    m->dof_damping[0] = g.c;
    double ref =
        g.k * h * h > mjMAXVAL ? 1 : OneTermWeight(m.get(), d.get(), g.k, g.c, 1 / inertia);
    EXPECT_NEAR(mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, 0), ref, 1e-12)
        << "k " << g.k << " c " << g.c;
  }
}

// The one-hinge spring model on a hinge of inertia 1e300 (the armature; the body's inertia
// zeroed), with the model's constants (dof_invweight0) computed again
ModelPtr HeavyHinge() {
  ModelPtr m = LoadModelOrFail(OneHingeSpringXml(1, 1, 0, 0.005));
  if (!m) return m;
  m->dof_armature[0] = 1e300;
  m->body_inertia[3] = m->body_inertia[4] = m->body_inertia[5] = 0;
  DataPtr d(mj_makeData(m.get()));
  mj_setConst(m.get(), d.get());
  return m;
}

// Catches: the non-finite and underflow guards of the weight, at extreme inverse inertias: h w_n
// overflowing while zeta stays finite (an actuator geared by 1e150), and h w_n underflowing to 0
// (a spring on a hinge of inertia 1e300): weight 1, and the table's weight below the cap.
TEST_F(ImplicitPosGuardWeight, ExtremeInverseInertia) {
  WeightTable t = Table();
  for (double zeta : {1.0, 3.0}) {
    ModelPtr m = LoadModelOrFail(OneHingeXml(1, 1, 0, 0.005));
    ASSERT_NE(m, nullptr);
    const double h = m->opt.timestep, gear = 1e150, k = 3e14;  // h^2 k within mjMAXVAL
    m->actuator_gear[0] = gear;
    m->actuator_biasprm[1] = -k;
    DataPtr d(mj_makeData(m.get()));
    mj_forward(m.get(), d.get());
    double invweight = gear * gear * d->qLDiagInv[0];
    ASSERT_TRUE(std::isfinite(invweight));
    ASSERT_FALSE(std::isfinite(h * h * k * invweight));
    m->actuator_biasprm[2] = -2 * zeta * std::sqrt(k / invweight);
    EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, 0), 1) << "zeta " << zeta;
  }
  for (double zeta : {0.0, 0.4}) {
    ModelPtr m = HeavyHinge();
    ASSERT_NE(m, nullptr);
    DataPtr d(mj_makeData(m.get()));
    mj_forward(m.get(), d.get());
    const double h = m->opt.timestep, k = 1e-20, invweight = d->qLDiagInv[0];
    ASSERT_EQ(h * h * k * invweight, 0);
    m->jnt_stiffness[0] = k;
    m->dof_damping[0] = 2 * zeta * std::sqrt(k / invweight);
    EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, 0), t.below) << "zeta " << zeta;
  }
}

// The terms of K of m at the state of d, as the documentation defines them: one per dof with a
// joint servo or a spring in scope (stiffness sum -slope gear^2 + stiffness, damping sum of the
// servos' velocity slopes times gear^2 and the joint's damping, clamped at 0; unit row), and one
// per fixed-tendon servo in scope (its own stiffness and damping, its moment row); with the
// inverse weight at qpos0 of each.
struct Terms {
  std::vector<std::vector<double>> rows;
  std::vector<double> k, c, invweight0;
  std::vector<int> dof;       // the term's dof, -1 for a tendon servo
  std::vector<int> actuator;  // the tendon servo, -1 for a dof's term
};

Terms DocumentedTerms(const mjModel* m, const mjData* d) {
  int nv = m->nv;
  std::vector<double> kdof(nv, 0.0), cdof(nv, 0.0);
  Terms t;
  for (int i = 0; i < m->nu; ++i) {
    mjtNum slopes[2];
    int scope = mjd_actuatorPosScope(m, d, i, nullptr);
    mjd_actuatorSlopes(m, d, i, slopes);
    if (scope != mjPOSSCOPE_RESTORING) continue;
    if (m->actuator_trntype[i] == mjTRN_TENDON) {
      double gear = m->actuator_gear[6 * i];
      t.rows.emplace_back(d->actuator_moment + i * nv, d->actuator_moment + (i + 1) * nv);
      t.k.push_back(-slopes[0]);
      t.c.push_back(std::max(-slopes[1], 0.0));
      t.invweight0.push_back(gear * gear * m->tendon_invweight0[m->actuator_trnid[2 * i]]);
      t.dof.push_back(-1);
      t.actuator.push_back(i);
      continue;
    }
    int dof = m->jnt_dofadr[m->actuator_trnid[2 * i]];
    double gear = d->actuator_moment[i * nv + dof];
    kdof[dof] -= slopes[0] * gear * gear;
    cdof[dof] -= slopes[1] * gear * gear;
  }
  for (int j = 0; j < m->njnt; ++j) {
    if (m->jnt_type[j] != mjJNT_HINGE && m->jnt_type[j] != mjJNT_SLIDE) continue;
    int dof = m->jnt_dofadr[j];
    cdof[dof] += m->dof_damping[dof];
    if (mjd_jointPosScope(m, j) == mjPOSSCOPE_RESTORING) kdof[dof] += m->jnt_stiffness[j];
  }
  for (int dof = 0; dof < nv; ++dof) {
    if (!(kdof[dof] > 0)) continue;
    std::vector<double> row(nv, 0.0);
    row[dof] = 1;
    t.rows.push_back(row);
    t.k.push_back(kdof[dof]);
    t.c.push_back(std::max(cdof[dof], 0.0));
    t.invweight0.push_back(m->dof_invweight0[dof]);
    t.dof.push_back(dof);
    t.actuator.push_back(-1);
  }
  return t;
}

// Catches: a wrong term (a dof's servos and spring not gathered, a wrong damping: bias and
// affine-gain velocity terms, the latter ignored for a fixed gain, through gear^2, the joint
// damping), a wrong inverse weight (dof_invweight0, tendon_invweight0 through the gear), a
// weight applied to K other than per term, or the gate's matrix wrong (a term's risk, a tendon's
// block on M's sparsity, the armature bound taken for the factorization, an actuator's term left
// out of the gate's raise): on random chains with gears, slides and geared tendon servos (first or
// last of the actuators), tuned per joint near the coupled cap, the weight of every term
// (mjd_posWeight) is the documented one, the gate's outcome that of a dense Cholesky factorization,
// and the weighted K is the sum of the weighted terms. Both outcomes of the gate occur.
TEST_F(ImplicitPosGuardWeight, WeightsAreTheDocumentedOnes) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  WarningCapture warnings;
  int passed = 0, failed = 0;
  for (int c = 0; c < 60; ++c) {
    ChainSpec spec = RandomChainSpec(&rng);
    spec.tendon_first = c % 2;  // a tendon servo first and last: every actuator's term is read
    spec.tendon_gear = 0.5 + 0.75 * (c % 4);  // its inverse weight through the gear
    double h = std::pow(10.0, -3 + unit(rng)), hw = 0.4 + 2 * unit(rng);
    ModelPtr m = LoadModelOrFail(ChainSpecXml(spec, h));
    ASSERT_NE(m, nullptr);
    TuneServos(m.get(), {hw / h / (2 * M_PI)}, 0.3 * unit(rng));
    for (int j = 0; j < m->njnt; ++j) {  // springs and damping on some joints
      if (unit(rng) < 0.3) m->jnt_stiffness[j] = 0.5 / (h * h * m->dof_invweight0[j]);
      if (unit(rng) < 0.3) m->dof_damping[j] = 0.1 / (h * m->dof_invweight0[j]);
    }
    if (unit(rng) < 0.5) Lighten(m.get(), 3);  // the current inertias differ from qpos0's
    SetEnable(m.get(), mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT, true);
    DataPtr d(mj_makeData(m.get()));
    for (int i = 0; i < m->nq; ++i) d->qpos[i] = 0.3 * std::sin(1.0 + i);
    HoldPose(m.get(), d.get());
    Terms t = DocumentedTerms(m.get(), d.get());
    std::vector<double> theta = DocumentedWeights(m.get(), d.get(), t.rows, t.k, t.c, t.invweight0);
    std::vector<double> table;
    WeightTable tab = Table();
    for (size_t j = 0; j < t.k.size(); ++j) {
      table.push_back(TableWeight(tab, h, t.k[j], t.c[j], t.invweight0[j]));
    }
    (theta == table ? passed : failed)++;

    // each term's weight, and K as the sum of the weighted terms
    std::vector<double> expected(m->nv * m->nv, 0.0);
    for (size_t j = 0; j < t.k.size(); ++j) {
      double w = t.dof[j] >= 0
                     ? mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, m->dof_jntid[t.dof[j]])
                     : mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, t.actuator[j]);
      EXPECT_NEAR(w, theta[j], 1e-12) << "chain " << c << " term " << j;
      for (int r = 0; r < m->nv; ++r) {
        for (int q = 0; q < m->nv; ++q) {
          expected[r * m->nv + q] += theta[j] * t.k[j] * t.rows[j][r] * t.rows[j][q];
        }
      }
    }
    std::vector<double> k, kv;
    EngineK(m.get(), d.get(), &k, &kv);
    EXPECT_LE(RelDiff(k, expected), 1e-12) << "chain " << c;
  }
  EXPECT_GT(passed, 10);
  EXPECT_GT(failed, 10);
  RecordProperty("gate_passed", std::to_string(passed));
  RecordProperty("gate_failed", std::to_string(failed));
}

// A chain of spec whose servos share h w_n 2, undamped (the gate fails on many such chains), but
// its fixed-tendon servo t: h w_n 0.5, with `scale` times the damping that makes its risk
// h^2 k (1 - 2 theta) - 2 h c exactly 0 at the table's weight (h a power of 2); weighted mode on,
// holding its pose.
struct RiskChain {
  ModelPtr m;
  DataPtr d;
  int t = -1;
  double k = 0, damping = 0, invweight = 0;
};
// the spec of risk chain c: a random chain with a fixed-tendon servo, first on odd c
ChainSpec RiskChainSpec(std::mt19937* rng, int c) {
  ChainSpec spec = RandomChainSpec(rng);
  if (spec.tendon < 0) spec.tendon = 0;
  spec.tendon_first = c % 2;
  return spec;
}
RiskChain MakeRiskChain(const ChainSpec& spec, double h, const WeightTable& tab, double scale) {
  RiskChain rc;
  rc.m = LoadModelOrFail(ChainSpecXml(spec, h));
  if (!rc.m) return rc;
  mjModel* m = rc.m.get();
  TuneServos(m, {2.0 / h / (2 * M_PI)}, 0);
  rc.t = spec.tendon_first ? 0 : m->nu - 1;
  double gear = m->actuator_gear[6 * rc.t];
  rc.invweight = gear * gear * m->tendon_invweight0[m->actuator_trnid[2 * rc.t]];
  rc.k = 0.25 / (h * h * rc.invweight);
  rc.damping = scale * h * h * rc.k * (1 - 2 * tab.below) / (2 * h);
  m->actuator_gainprm[mjNGAIN * rc.t] = rc.k;
  m->actuator_biasprm[mjNBIAS * rc.t + 1] = -rc.k;
  m->actuator_biasprm[mjNBIAS * rc.t + 2] = -rc.damping;
  SetEnable(m, mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT, true);
  rc.d.reset(mj_makeData(m));
  HoldPose(m, rc.d.get());
  return rc;
}

// the weights of a risk chain's joint servos; *raised: whether the gate failed, so that one of
// them is above the table's
std::vector<double> JointServoWeights(const RiskChain& rc, double h, const WeightTable& tab,
                                      bool* raised) {
  const mjModel* m = rc.m.get();
  std::vector<double> weights;
  *raised = false;
  for (int i = 0; i < m->nu; ++i) {
    if (i == rc.t) continue;
    int j = m->actuator_trnid[2 * i];
    double g = m->actuator_gear[6 * i];
    double w = mjd_posWeight(m, rc.d.get(), mjOBJ_JOINT, j);
    double kj = g * g * m->actuator_gainprm[mjNGAIN * i];
    *raised |= w > TableWeight(tab, h, kj, 0, m->dof_invweight0[m->jnt_dofadr[j]]);
    weights.push_back(w);
  }
  return weights;
}

// Catches: the gate's raise reaching a term that is not at risk (risk >= 0 instead of > 0): on
// risk chains whose gate fails, the tendon servo of risk exactly 0 keeps the table's weight while
// the terms at risk are raised.
TEST_F(ImplicitPosGuardWeight, RaiseLeavesATermWithoutRisk) {
  const WeightTable tab = Table();
  const double h = 1.0 / 256;
  std::mt19937 rng(11);
  WarningCapture warnings;
  int failed = 0;
  for (int c = 0; c < 40; ++c) {
    ChainSpec spec = RiskChainSpec(&rng, c);
    RiskChain rc = MakeRiskChain(spec, h, tab, 1);
    ASSERT_NE(rc.m, nullptr);
    ASSERT_EQ(rc.m->actuator_trntype[rc.t], mjTRN_TENDON);
    ASSERT_EQ(h * h * rc.k * (1 - 2 * tab.below) - 2 * h * rc.damping, 0);
    ASSERT_EQ(TableWeight(tab, h, rc.k, rc.damping, rc.invweight), tab.below);
    bool raised;
    JointServoWeights(rc, h, tab, &raised);
    failed += raised;
    EXPECT_EQ(mjd_posWeight(rc.m.get(), rc.d.get(), mjOBJ_ACTUATOR, rc.t), tab.below)
        << "chain " << c;
  }
  EXPECT_GT(failed, 5);
  RecordProperty("gate_failed", std::to_string(failed));
}

// Catches: a tendon servo without risk counted in the gate (its bound or its matrix): a negative
// risk, from heavy damping, would then offset the risk of the others. The joint servos' weights
// are the same with the tendon servo's risk exactly 0 and far below 0, on chains whose gate fails.
TEST_F(ImplicitPosGuardWeight, NegativeRiskOffsetsNoOtherTerm) {
  const WeightTable tab = Table();
  const double h = 1.0 / 256;
  std::mt19937 rng(11);
  WarningCapture warnings;
  int failed = 0;
  for (int c = 0; c < 40; ++c) {
    ChainSpec spec = RiskChainSpec(&rng, c);
    std::vector<double> weights[2];
    for (int negative : {0, 1}) {
      RiskChain rc = MakeRiskChain(spec, h, tab, negative ? 1e3 : 1);
      ASSERT_NE(rc.m, nullptr);
      ASSERT_EQ(rc.m->actuator_trntype[rc.t], mjTRN_TENDON);
      bool raised;
      weights[negative] = JointServoWeights(rc, h, tab, &raised);
      failed += raised && !negative;
    }
    EXPECT_EQ(weights[0], weights[1]) << "chain " << c;
  }
  EXPECT_GT(failed, 5);
}

// Catches: the armature bound that lets the gate pass without a factorization taken wrongly (a
// term's bound without its moment, without the armature, or compared the wrong way): where every
// term's bound is within the gate the weights are the table's, and where the armature bounds a
// risk just above it, the factorization decides (here: it fails, so the weights are raised).
TEST_F(ImplicitPosGuardWeight, ArmatureBoundDecidesOnlyWhereItHolds) {
  const double h = 0.005;
  for (double armature : {0.02, 0.0}) {
    ChainSpec spec;
    spec.n = 4;
    spec.armature = armature;
    ModelPtr m = LoadModelOrFail(ChainSpecXml(spec, h));
    ASSERT_NE(m, nullptr);
    mju_zero3(m->opt.gravity);
    TuneServos(m.get(), {1.6 / h / (2 * M_PI)}, 0);  // undamped, each below its cap
    DataPtr d(mj_makeData(m.get()));
    HoldPose(m.get(), d.get());
    Terms t = DocumentedTerms(m.get(), d.get());
    ASSERT_EQ(t.k.size(), 4u);
    std::vector<double> theta = DocumentedWeights(m.get(), d.get(), t.rows, t.k, t.c, t.invweight0);
    for (size_t j = 0; j < t.k.size(); ++j) {
      EXPECT_NEAR(mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, m->dof_jntid[t.dof[j]]), theta[j],
                  1e-12) << "armature " << armature << " term " << j;
      EXPECT_GT(theta[j], Table().below) << "the coupled terms fail the gate";
    }
  }
}

// Runs call() with the MuJoCo stack poisoned around it: a block just below the free space and
// the free space itself; call() must write only inside what it reserves (maxuse_stack).
void ExpectStaysInItsStack(mjData* d, const std::function<void()>& call, const std::string& what) {
  const mjtNum below = 1234.5, above = 4321.5;
  int base = d->pstack;
  mjtNum* guard = mj_stackAlloc(d, 8);
  std::fill(guard, guard + 8, below);
  int top0 = d->pstack;
  std::fill(d->stack + top0, d->stack + d->nstack, above);
  d->maxuse_stack = 0;
  call();
  int top = std::max(top0, d->maxuse_stack);
  EXPECT_EQ(d->pstack, top0) << what;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(guard[i], below) << what << ": below, " << i;
  int touched = 0;
  for (int i = top; i < d->nstack; ++i) touched += d->stack[i] != above;
  EXPECT_EQ(touched, 0) << what << ": above what it reserved";
  d->pstack = base;
}

// Catches: the weights' scratch (inverse inertias, their cache) not reserved on the MuJoCo
// stack, written outside what is reserved (before it, or one past its end), or read before it
// is written (the cache not cleared): each call gives the same result on a stack full of junk
// (4321.5, which a stale cache would take for an inverse inertia) as on a cleared one (-1). The
// model's inverse weights are made stale (Lighten) so that the current inertias decide.
TEST_F(ImplicitPosGuardWeight, ScratchStaysOnItsStack) {
  ModelPtr m = LoadModelOrFail(GearTendonArmXml(300, 1, 0.005));
  ASSERT_NE(m, nullptr);
  Lighten(m.get(), 30);
  SetEnable(m.get(), mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT, true);
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
  mj_forward(m.get(), d.get());
  mj_makeMSparse(m.get(), d.get(), d->D_rownnz, d->D_rowadr, d->D_colind);
  auto cleared = [&](const std::function<void()>& call) {
    std::fill(d->stack + d->pstack, d->stack + d->nstack, -1.0);
    call();
  };
  for (int i = 0; i < m->nu; ++i) {
    mjtNum clean, junk;
    cleared([&]() { clean = mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, i); });
    ExpectStaysInItsStack(
        d.get(), [&]() { junk = mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, i); },
        "actuator");
    EXPECT_EQ(junk, clean) << "actuator " << i;
  }
  for (int j = 0; j < m->njnt; ++j) {
    mjtNum clean, junk;
    cleared([&]() { clean = mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, j); });
    ExpectStaysInItsStack(
        d.get(), [&]() { junk = mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, j); }, "joint");
    EXPECT_EQ(junk, clean) << "joint " << j;
  }
  std::vector<mjtNum> matD(m->nD, 0.0), vec(m->nv, 0.0), matD_junk(m->nD, 0.0),
      vec_junk(m->nv, 0.0);
  cleared([&]() { mjd_implicitPos(m.get(), d.get(), matD.data(), 1, vec.data(), 1); });
  ExpectStaysInItsStack(
      d.get(),
      [&]() { mjd_implicitPos(m.get(), d.get(), matD_junk.data(), 1, vec_junk.data(), 1); },
      "mjd_implicitPos");
  EXPECT_EQ(matD_junk, matD);
  EXPECT_EQ(vec_junk, vec);
}

// Catches: the dampings of the terms on each dof left as the stack held them where passive forces
// are disabled (no joint damping to start them from): an undamped servo on a damped slide, (h w_n)^2
// 5, whose weight at zeta 0 is not the weight below the cap that a large damping gives; K is the
// documented weight at zeta 0 on a stack cleared to -1 and on one full of junk (4321.5).
TEST_F(ImplicitPosGuardWeight, DampingWithoutPassiveForcesIsTheServos) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><option timestep=\"0.0078125\" gravity=\"0 0 0\"/><worldbody><body>"
      "<joint name=\"s\" type=\"slide\" axis=\"1 0 0\" damping=\"50\"/>"
      "<inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1\"/></body></worldbody>"
      "<actuator><position joint=\"s\" kp=\"81920\"/></actuator></mujoco>");
  ASSERT_NE(m, nullptr);
  m->opt.disableflags |= mjDSBL_PASSIVE;
  SetEnable(m.get(), mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT, true);
  DataPtr d(mj_makeData(m.get()));
  mj_forward(m.get(), d.get());
  const double h = m->opt.timestep, kp = m->actuator_gainprm[0];
  ASSERT_EQ(m->dof_invweight0[0], 1);
  ASSERT_EQ(h * h * kp, 5);
  double theta = OneTermWeight(m.get(), d.get(), kp, 0, 1);
  ASSERT_GT(theta, Table().below);
  for (double junk : {-1.0, 4321.5}) {
    std::fill(d->stack + d->pstack, d->stack + d->nstack, junk);
    std::vector<double> kk, kv;
    EngineK(m.get(), d.get(), &kk, &kv);
    EXPECT_NEAR(kk[0], theta * kp, 1e-12 * kp) << "junk " << junk;
  }
}

// Catches: the weighted pass reading the slopes as the stack held them where actuation is
// disabled: the tendon servos of the gear arm, on a stack full of junk that reads as restoring
// slopes and weights (-1), add nothing to K (its springs alone), as on a cleared stack (0).
TEST_F(ImplicitPosGuardWeight, DisabledActuationAddsNoWeightedTerm) {
  ModelPtr m = LoadModelOrFail(GearTendonArmXml(300, 1, 0.005));
  ASSERT_NE(m, nullptr);
  m->opt.disableflags |= mjDSBL_ACTUATION;
  SetEnable(m.get(), mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT, true);
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
  mj_forward(m.get(), d.get());
  std::vector<double> k[2], kv[2];
  for (int junk : {0, 1}) {
    std::fill(d->stack + d->pstack, d->stack + d->nstack, -1.0 * junk);
    EngineK(m.get(), d.get(), &k[junk], &kv[junk]);
  }
  EXPECT_EQ(k[1], k[0]);
  EXPECT_EQ(kv[1], kv[0]);
}

// Catches: a servo out of scope (on its force clamp) visited by the weights' pass with its zero
// slope, so that its damping enters its dof's damping ratio: a clamped, damped servo beside an
// undamped one in scope on a unit slide, (h w_n)^2 5; K is the documented weight of the servo in
// scope alone at zeta 0 (with the clamped servo's damping the term would be below the cap).
TEST_F(ImplicitPosGuardWeight, ClampedServoAddsNoDamping) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><option timestep=\"0.0078125\" gravity=\"0 0 0\"/><worldbody><body>"
      "<joint name=\"s\" type=\"slide\" axis=\"1 0 0\"/>"
      "<inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1\"/></body></worldbody>"
      "<actuator><position joint=\"s\" kp=\"81920\"/>"
      "<general joint=\"s\" gaintype=\"fixed\" biastype=\"affine\" gainprm=\"100\" "
      "biasprm=\"0 -100 -1000\" forcelimited=\"true\" forcerange=\"-1e-3 1e-3\"/>"
      "</actuator></mujoco>");
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT, true);
  DataPtr d(mj_makeData(m.get()));
  d->qpos[0] = 0.1;
  mj_forward(m.get(), d.get());
  ASSERT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_RESTORING);
  ASSERT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 1, nullptr), mjPOSSCOPE_CLAMPED);
  const double h = m->opt.timestep, kp = m->actuator_gainprm[0];
  ASSERT_EQ(m->dof_invweight0[0], 1);
  ASSERT_EQ(h * h * kp, 5);
  double theta = OneTermWeight(m.get(), d.get(), kp, 0, 1);
  ASSERT_GT(theta, Table().below);
  std::vector<double> kk, kv;
  EngineK(m.get(), d.get(), &kk, &kv);
  EXPECT_NEAR(kk[0], theta * kp, 1e-12 * kp);
}

// Catches: the weighted pass keeping the slope of an actuator that is out of scope for another
// reason than its slope (a servo on its force clamp, a servo on a tendon that lists a joint twice;
// their restoring slopes are found first), or visiting it with its zero slope, so that its term
// enters K or its dof's weight; an in-scope tendon servo on b makes the weighted pass visit the
// tendon servos. And a dof without terms gets weight 1, not what the stack held (junk).
TEST_F(ImplicitPosGuardWeight, OutOfScopeServoStaysOutOfK) {
  ModelPtr m = LoadModelOrFail(Model(
      "<tendon><fixed name=\"br\"><joint joint=\"a\" coef=\"1\"/><joint joint=\"c\" "
      "coef=\"1\"/><joint joint=\"a\" coef=\"0.5\"/></fixed>"
      "<fixed name=\"tb\"><joint joint=\"b\" coef=\"1\"/></fixed>"
      "</tendon><actuator>" +
      Affine("joint=\"a\"", 5, 0, -100, "forcelimited=\"true\" forcerange=\"-1e-3 1e-3\"") +
      Affine("joint=\"b\"", 5, 0, -100) + Affine("tendon=\"br\"", 5, 0, -100) +
      Affine("tendon=\"tb\"", 5, 0, -100) + "</actuator>"));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetAwayFromRest(m.get(), d.get());
  mj_forward(m.get(), d.get());
  ASSERT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_CLAMPED);
  ASSERT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 1, nullptr), mjPOSSCOPE_RESTORING);
  ASSERT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 2, nullptr), mjPOSSCOPE_TRANSMISSION);
  ASSERT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 3, nullptr), mjPOSSCOPE_RESTORING);
  for (int flags : {0, static_cast<int>(mjENBL_POSWEIGHT)}) {
    SetEnable(m.get(), mjENBL_POSWEIGHT, flags != 0);
    std::vector<double> k, kv;
    EngineK(m.get(), d.get(), &k, &kv);
    int a = m->jnt_dofadr[0], b = m->jnt_dofadr[1], c = m->jnt_dofadr[2];
    for (int dof : {a, c}) {
      EXPECT_EQ(k[dof * m->nv + dof], 0) << "flags " << flags << " dof " << dof;
      EXPECT_EQ(kv[dof], 0) << "flags " << flags << " dof " << dof;
    }
    EXPECT_GT(k[b * m->nv + b], 0) << "flags " << flags;
  }
  std::fill(d->stack + d->pstack, d->stack + d->nstack, 4321.5);
  EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, 0), 1);
}

// Catches: the damping of an out-of-scope servo (on its force clamp: its force, and so its
// velocity slope, is saturated) counted into the damping of its dof's weight.
TEST_F(ImplicitPosGuardWeight, OutOfScopeServoAddsNoDamping) {
  const std::string clamped =
      Affine("joint=\"a\"", 5, 0, -100, "forcelimited=\"true\" forcerange=\"-1e-3 1e-3\"");
  const std::string servo = Affine("joint=\"b\"", 5, 0, -100);
  ModelPtr m = LoadModelOrFail(Model("<actuator>" + clamped + servo + "</actuator>"));
  ModelPtr m0 = LoadModelOrFail(Model("<actuator>" + servo + "</actuator>"));
  ASSERT_NE(m, nullptr);
  ASSERT_NE(m0, nullptr);
  // a spring on the clamped servo's dof, just above its cap (h w_n 2.3), where the table's weight
  // depends on the damping
  const double h = m->opt.timestep;
  m->jnt_stiffness[0] = m0->jnt_stiffness[0] = 2.3 * 2.3 / (h * h * m->dof_invweight0[0]);
  DataPtr d(mj_makeData(m.get())), d0(mj_makeData(m0.get()));
  SetAwayFromRest(m.get(), d.get());
  SetAwayFromRest(m0.get(), d0.get());
  mj_forward(m.get(), d.get());
  mj_forward(m0.get(), d0.get());
  ASSERT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_CLAMPED);
  double w = mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, 0);
  EXPECT_LT(w, 1);
  EXPECT_GT(w, Table().below);
  EXPECT_EQ(w, mjd_posWeight(m0.get(), d0.get(), mjOBJ_JOINT, 0));
}

// Catches: weights given to terms outside the scope of K (out-of-range ids, ball joints, a
// motor, an unknown object type) or to a tendon servo that sees no inertia (gear 0, inverse
// weight 0): 1; a joint servo of gear 0 has its joint's weight.
TEST_F(ImplicitPosGuardWeight, OutOfScopeIsOne) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><option timestep=\"0.005\"/><worldbody><body><joint name=\"h\" stiffness=\"50\"/>"
      "<geom size=\".1\"/><body pos=\".3 0 0\"><joint name=\"ball\" type=\"ball\" "
      "stiffness=\"50\"/><geom size=\".1\"/></body></body></worldbody>"
      "<tendon><fixed name=\"t\"><joint joint=\"h\" coef=\"1\"/></fixed></tendon>"
      "<actuator><motor joint=\"h\"/><position joint=\"h\" kp=\"100\"/>"
      "<position joint=\"h\" kp=\"100\" gear=\"0 0 0 0 0 0\"/>"
      "<position tendon=\"t\" kp=\"100\" gear=\"0 0 0 0 0 0\"/></actuator></mujoco>");
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  mj_forward(m.get(), d.get());
  EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, 0), 1);
  EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, -1), 1);
  // gear 0: a term of zero stiffness on joint h's dof, whose weight it has
  EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, 2),
            mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, 1));
  // a tendon servo of gear 0 sees no inertia (inverse weight 0)
  EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, 3), 1);
  EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, 4), 1);
  EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, 1), 1);
  EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, -1), 1);
  EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, 2), 1);
  EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_BODY, 0), 1);
  EXPECT_LT(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, 1), 1);
  EXPECT_LT(mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, 0), 1);
}

// Catches: the cache's hit test taking the zeroed entry of a fresh mjData for a term: a spring
// whose (h w_n)^2 underflows to 0, undamped (zeta 0), on a hinge of inertia 1e300. mjd_implicitPos
// adds the weight below the cap times the stiffness to K, not 0.
TEST_F(ImplicitPosGuardWeight, FreshCacheHoldsNoTerm) {
  WeightTable t = Table();
  ModelPtr m = HeavyHinge();
  ASSERT_NE(m, nullptr);
  const double h = m->opt.timestep, k = 1e-20;
  m->jnt_stiffness[0] = k;
  ASSERT_EQ(m->dof_damping[0], 0);
  ASSERT_EQ(h * h * k * m->dof_invweight0[0], 0);
  SetEnable(m.get(), mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT, true);
  DataPtr d(mj_makeData(m.get()));
  mj_forward(m.get(), d.get());
  std::vector<double> kk, kv;
  EngineK(m.get(), d.get(), &kk, &kv);
  EXPECT_NEAR(kk[0], t.below * k, 1e-12 * t.below * k);
}

// a slide joint on a body of mass 1 (M = 1, no armature), a spring, timestep 2^-7: the terms'
// (h w_n)^2 and zeta are exact for stiffnesses and dampings of powers of two
const char kUnitSlide[] =
    "<mujoco><option timestep=\"0.0078125\" gravity=\"0 0 0\"/><worldbody><body>"
    "<joint type=\"slide\" axis=\"1 0 0\" stiffness=\"1\"/>"
    "<inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"1 1 1\"/></body></worldbody></mujoco>";

// one step of a one-dof model at its term (stiffness k, damping c, inverse weight invweight),
// which fills the weights' cache; then K against the documented weight times the stiffness and
// against a fresh mjData's at the same state; returns the weight
double StepCachedTerm(const mjModel* m, mjData* d, double k, double c, double invweight,
                      const std::string& where) {
  mj_step(m, d);
  mj_forward(m, d);
  DataPtr fresh(mj_makeData(m));
  fresh->qpos[0] = d->qpos[0];
  fresh->qvel[0] = d->qvel[0];
  mj_forward(m, fresh.get());
  double theta = OneTermWeight(m, d, k, c, invweight);
  std::vector<double> kk, kv, kk_fresh, kv_fresh;
  EngineK(m, d, &kk, &kv);
  EngineK(m, fresh.get(), &kk_fresh, &kv_fresh);
  EXPECT_NEAR(kk[0], theta * k, 1e-12 * k) << where;
  EXPECT_EQ(kk[0], kk_fresh[0]) << where;
  return theta;
}

// Catches: the per-dof cache of the table's lookup (d->dof_posweightcache) hit on a key that is
// not the term's, or filled with a wrong key: the spring's (h w_n)^2 and zeta are changed between
// steps so that one of the two stays (or the new hw2 equals the old zeta, or both are equal), and
// after each step K is the documented weight times the stiffness, as for a fresh mjData.
TEST_F(ImplicitPosGuardWeight, CachedWeightFollowsTheTerm) {
  ModelPtr m = LoadModelOrFail(kUnitSlide);
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT, true);
  DataPtr d(mj_makeData(m.get()));
  const double h = m->opt.timestep, invweight = m->dof_invweight0[0];
  ASSERT_EQ(invweight, 1);
  struct Term {
    double hw2, zeta;
  };
  int steps = 0;
  for (Term term : {Term{16, 0}, Term{16, 16}, Term{16, 0}, Term{16, 1}, Term{16384, 16},
                    Term{16, 16}, Term{16384, 8}, Term{8, 0}}) {
    double k = term.hw2 / (h * h), c = 2 * term.zeta * std::sqrt(k);
    ASSERT_EQ(h * h * k * invweight, term.hw2);
    ASSERT_EQ(0.5 * c * std::sqrt(invweight / k), term.zeta);
    m->jnt_stiffness[0] = k;
    m->dof_damping[0] = c;
    StepCachedTerm(m.get(), d.get(), k, c, invweight,
                   "hw2 " + std::to_string(term.hw2) + " zeta " + std::to_string(term.zeta));
    ++steps;
  }
  EXPECT_EQ(steps, 8);
}

// Catches: the per-dof cache's key (d->dof_posweightcache) read from the wrong numbers: the
// timestep, the stiffness, the damping and the dof's inverse weight are changed between steps so
// that each next term has the same key as the last under one wrong formula and a different
// weight: the key without the timestep (h / h), with k or invweight divided instead of
// multiplied, and zeta from 1 / c, from a divided or a multiplied square root; after each step K
// is the documented weight times the stiffness, as for a fresh mjData.
TEST_F(ImplicitPosGuardWeight, CachedWeightFollowsTheTimestepAndInertia) {
  ModelPtr m = LoadModelOrFail(kUnitSlide);
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT, true);
  DataPtr d(mj_makeData(m.get()));
  const double h = m->opt.timestep, k = 16 / (h * h);
  ASSERT_EQ(m->dof_invweight0[0], 1);
  struct Term {
    double h, k, c, invweight;
  };
  const Term terms[] = {
      {h, k, 0, 1},              // (h w_n)^2 16
      {h / 2, k, 0, 1},          // 4, on the cap: the key without h is k invweight
      {h / 4, k, 0, 1},          // 1
      {h / 2, 4 * k, 0, 1},      // 16: the key h^2 / k invweight
      {h / 2, k, 0, 1},          // 4
      {h / 2, 4 * k, 0, 4},      // 64: the key h^2 k / invweight
      {h, 9 / (h * h), 1.5 / h, 1},             // 9, zeta 1/4
      {h / 2, 36 / (h * h), 0.75 / h, 1},       // 9, zeta 1/16: zeta's three wrong keys
  };
  double last = -1;
  int changed = 0;
  for (const Term& term : terms) {
    m->opt.timestep = term.h;
    m->jnt_stiffness[0] = term.k;
    m->dof_damping[0] = term.c;
    m->dof_invweight0[0] = term.invweight;
    double theta = StepCachedTerm(m.get(), d.get(), term.k, term.c, term.invweight,
                                  "h " + std::to_string(term.h) + " k " + std::to_string(term.k));
    changed += theta != last;
    last = theta;
  }
  EXPECT_EQ(changed, 8);  // each term's weight differs from the last's
}

// Catches: a pivot of exactly 0 taken as positive by the gate's factorization: a spring whose
// risk is exactly the gate's level 4 (1 - 1e-3) M (no armature: no bound) makes the gate's matrix
// singular, which is not positive definite: the weight is raised, as a dense Cholesky says.
TEST_F(ImplicitPosGuardWeight, SingularGateFails) {
  ModelPtr m = LoadModelOrFail(kUnitSlide);
  ASSERT_NE(m, nullptr);
  m->dof_damping[0] = 0;
  m->dof_armature[0] = 0;
  DataPtr d(mj_makeData(m.get()));
  mj_forward(m.get(), d.get());
  WeightTable t = Table();
  const double h = m->opt.timestep, level = d->qM[0] * (4 * (1 - 1e-3));
  double k = level / (h * h * (1 - 2 * t.below));
  for (int n = 0; n < 64 && Risk(h, k, 0, t.below) != level; ++n) {
    k = std::nextafter(k, Risk(h, k, 0, t.below) < level ? kInf : 0.0);
  }
  ASSERT_EQ(Risk(h, k, 0, t.below), level);
  ASSERT_EQ(TableWeight(t, h, k, 0, m->dof_invweight0[0]), t.below);  // below the cap
  m->jnt_stiffness[0] = k;
  double theta = OneTermWeight(m.get(), d.get(), k, 0, m->dof_invweight0[0]);
  EXPECT_GT(theta, t.below);
  EXPECT_NEAR(mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, 0), theta, 1e-12);
}

// Catches: a fixed-tendon servo's armature bound taken without its moment (mom / mom instead of
// mom^2), or its risk left out of the bound where it is at most 1: a spring (risk ~3 M) and a
// servo on a fixed tendon over the same hinge, geared by 10 (risk ~0.03 M, ~3 M through the
// moment), each below its cap, fail the gate together; the bound without the moment (or without
// the servo) would pass them. Their weights are raised as a dense Cholesky says. A motor on a
// hinge of its own comes first, so that the servo's moment is not actuator 0's row.
TEST_F(ImplicitPosGuardWeight, TendonMomentCountsInTheArmatureBound) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><option timestep=\"0.005\" gravity=\"0 0 0\"/><worldbody><body>"
      "<joint name=\"h\" axis=\"0 1 0\" armature=\"1\"/>"
      "<geom type=\"sphere\" size=\".01\" mass=\"1e-6\"/></body>"
      "<body pos=\"0 1 0\"><joint name=\"o\" axis=\"0 1 0\"/><geom size=\".1\"/></body>"
      "</worldbody><tendon><fixed name=\"t\"><joint joint=\"h\" coef=\"1\"/></fixed></tendon>"
      "<actuator><motor joint=\"o\"/><position tendon=\"t\" kp=\"1\" gear=\"10\"/>"
      "</actuator></mujoco>");
  ASSERT_NE(m, nullptr);
  const double h = m->opt.timestep;
  const double spring = 3 / (h * h * m->dof_invweight0[0]);
  const double servo = 3 / (h * h * 100 * m->tendon_invweight0[0]);
  m->jnt_stiffness[0] = spring;
  m->actuator_gainprm[mjNGAIN] = servo;
  m->actuator_biasprm[mjNBIAS + 1] = -servo;
  DataPtr d(mj_makeData(m.get()));
  mj_forward(m.get(), d.get());
  ASSERT_EQ(d->actuator_moment[m->nv], 10);
  Terms t = DocumentedTerms(m.get(), d.get());
  ASSERT_EQ(t.k.size(), 2u);
  WeightTable tab = Table();
  double level = 4 * (1 - 1e-3), unit_bound = 0;
  for (size_t j = 0; j < t.k.size(); ++j) {
    double risk = Risk(h, t.k[j], t.c[j], tab.below);
    ASSERT_GT(risk, 0);
    unit_bound += risk / m->dof_armature[0];
    if (t.dof[j] < 0) ASSERT_LE(risk, 1);
  }
  ASSERT_LT(unit_bound, level);  // the bound with unit moments passes
  std::vector<double> theta = DocumentedWeights(m.get(), d.get(), t.rows, t.k, t.c, t.invweight0);
  EXPECT_GT(theta[0], tab.below);
  EXPECT_GT(theta[1], tab.below);
  for (size_t j = 0; j < t.k.size(); ++j) {
    double w = t.dof[j] >= 0 ? mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, 0)
                             : mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, 1);
    EXPECT_NEAR(w, theta[j], 1e-12) << "term " << j;
  }
}

// Catches: the inverse inertia of a servo's moment row (rowInvweight) other than the documented
// one: a tendon's tendon_invweight0 through its gear; for any other row m' M^-1 m at the current
// configuration, not MuJoCo's averages at qpos0 (a ball joint's dof_invweight0 over its three
// axes, a body's body_invweight0 over translation and rotation), a row of another actuator, or a
// gear left out. The rows: a ball joint's, its gear in the joint's frame and in its parent's
// (jointinparent); a site with its refsite (site 0), through translational and rotational gears;
// a geared spatial tendon. Each servo, the only one with a gain, is tuned to h w_n 3 at the
// documented inverse inertia, above stock's cap, where its weight depends on it, away from qpos0
// (where the averages were taken). A motor comes first, so that no servo is actuator 0. A ball
// joint's servo has weight 1 whatever its inverse inertia: its two rows check that.
// Ids chosen so that a ball servo is told by its own transmission: a site before "tip" makes the
// site servo's trnid (tip, 2) a hinge's joint id, and a fixed tendon before "t" makes the tendon
// servo's trnid (1) the ball joint's id.
TEST_F(ImplicitPosGuardWeight, RowInverseWeightIsTheDocumentedOne) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><option timestep=\"0.005\"/><default><geom type=\"capsule\" size=\".03\" "
      "fromto=\"0 0 0 .25 0 0\"/></default><worldbody>"
      "<body><joint name=\"a\" axis=\"0 1 0\"/><geom/><site name=\"ref\" pos=\".1 0 .05\"/>"
      "<body pos=\".25 0 0\"><joint name=\"b\" type=\"ball\"/><geom/>"
      "<site name=\"mid\" pos=\".1 0 0\"/><site name=\"tip\" pos=\".25 0 0\"/>"
      "<body pos=\".25 0 0\"><joint name=\"c\" axis=\"0 0 1\"/><geom mass=\"3\"/></body>"
      "</body></body></worldbody>"
      "<tendon><fixed name=\"t0\"><joint joint=\"a\" coef=\"1\"/></fixed>"
      "<spatial name=\"t\"><site site=\"ref\"/><site site=\"tip\"/></spatial></tendon>"
      "<actuator><motor joint=\"a\"/>"
      "<general site=\"tip\" refsite=\"ref\" gear=\"1 0.5 0 0 0.3 0\" biastype=\"affine\"/>"
      "<general joint=\"b\" gear=\"1 0.5 2 0.7 0 0\" biastype=\"affine\"/>"
      "<general tendon=\"t\" gear=\"1.7\" biastype=\"affine\"/>"
      "<general jointinparent=\"b\" gear=\"0.6 1.2 0.4 0 0 0\" biastype=\"affine\"/>"
      "</actuator></mujoco>");
  ASSERT_NE(m, nullptr);
  const double h = m->opt.timestep;
  const mjtNum* bw = m->body_invweight0;
  auto body = [&](int site) { return m->site_bodyid[site]; };
  auto g = [&](int i, int k) { return m->actuator_gear[6 * i + k]; };

  // MuJoCo's inverse weights at qpos0 through the gears: averages, which the weight must not take,
  // but for the tendon
  double averaged[5] = {0, 0, 0, 0, 0};
  for (int site : {m->actuator_trnid[2], m->actuator_trnid[3]}) {
    for (int k = 0; k < 3; ++k) {
      averaged[1] += g(1, k) * g(1, k) * bw[2 * body(site)] +
                     g(1, k + 3) * g(1, k + 3) * bw[2 * body(site) + 1];
    }
  }
  for (int i : {2, 4}) {
    const mjtNum* dw = m->dof_invweight0 + m->jnt_dofadr[m->actuator_trnid[2 * i]];
    for (int k = 0; k < 3; ++k) averaged[i] += g(i, k) * g(i, k) * dw[k];
  }
  averaged[3] = g(3, 0) * g(3, 0) * m->tendon_invweight0[m->actuator_trnid[6]];
  ASSERT_NE(body(m->actuator_trnid[2]), body(m->actuator_trnid[3]));
  ASSERT_EQ(m->actuator_trnid[3], 0);

  SetEnable(m.get(), mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT, true);
  DataPtr d(mj_makeData(m.get()));
  std::vector<mjtNum> x(m->nv);
  for (int i = 1; i < 5; ++i) {
    // away from qpos0: the arm bent, the ball joint turned
    mj_resetData(m.get(), d.get());
    d->qpos[0] = 0.4;
    const mjtNum quat[4] = {0.9, 0.2, -0.3, 0.25};
    mju_copy4(d->qpos + 1, quat);
    mju_normalize4(d->qpos + 1);
    d->qpos[5] = -0.6;
    mj_forward(m.get(), d.get());
    double invweight = i == 3 ? averaged[3]
                              : InverseReflectedInertia(m.get(), d.get(),
                                                        d->actuator_moment + i * m->nv, x.data());
    ASSERT_GT(invweight, 0);
    const double k = 9 / (h * h * invweight);
    for (int j = 1; j < 5; ++j) {
      m->actuator_gainprm[mjNGAIN * j] = j == i ? k : 0;
      m->actuator_biasprm[mjNBIAS * j + 1] = j == i ? -k : 0;
    }
    mj_forward(m.get(), d.get());
    ASSERT_EQ(mjd_actuatorPosScope(m.get(), d.get(), i, nullptr), mjPOSSCOPE_RESTORING) << i;
    std::vector<std::vector<double>> row = {
        std::vector<double>(d->actuator_moment + i * m->nv, d->actuator_moment + (i + 1) * m->nv)};
    double expected = DocumentedWeights(m.get(), d.get(), row, {k}, {0}, {invweight})[0];
    double other = DocumentedWeights(m.get(), d.get(), row, {k}, {0}, {1.1 * invweight})[0];
    double average = DocumentedWeights(m.get(), d.get(), row, {k}, {0}, {averaged[i]})[0];
    if (i == 2 || i == 4) {
      // a ball joint's servo: backward Euler, whatever its inverse inertia
      EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, i), 1) << "actuator " << i;
      continue;
    }
    ASSERT_GT(std::abs(other - expected), 1e-3) << "actuator " << i;  // the weight sees it
    double current = DocumentedWeights(
        m.get(), d.get(), row, {k}, {0},
        {InverseReflectedInertia(m.get(), d.get(), d->actuator_moment + i * m->nv, x.data())})[0];
    ASSERT_GT(std::abs((i == 3 ? current : average) - expected), 1e-3) << "actuator " << i;
    EXPECT_NEAR(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, i), expected, 1e-12)
        << "actuator " << i;
  }
}

// Catches: the gate's bound of a row on several branches other than the documented one,
// n diag(m)^2 with n its nonzeros (doc/scope.md): n miscounted (started at 1, without dof 0,
// counting the zeros, or one element past the row, where the next actuator's row starts), a
// dof's diagonal left out, or the bound added to a row on one chain that ends at dof 0. A fixed
// tendon over hinges a, b (one chain) and c (the other branch), coefficients 1, 0.5, -0.7
// (n = 3), then a tendon over a alone (geared 1.5: its row is on dof 0 only, and the element
// past the first row); no armature, so that the armature bound is infinite and the factorization
// decides; the two servos undamped, each tuned from h w_n 0.5 to 3. Each weight is the documented
// one, the gate's by a dense Cholesky with the row's bound, and the cases include ones where the
// exact m m', the bound with n - 1 or n + 1, or the one-chain row counted twice would give other
// weights.
TEST_F(ImplicitPosGuardWeight, RowOnSeveralBranchesEntersTheGateByItsBound) {
  ModelPtr m = LoadModelOrFail(Model(
      "<tendon><fixed name=\"x\"><joint joint=\"a\" coef=\"1\"/><joint joint=\"b\" "
      "coef=\"0.5\"/><joint joint=\"c\" coef=\"-0.7\"/></fixed>"
      "<fixed name=\"t0\"><joint joint=\"a\" coef=\"1\"/></fixed></tendon>"
      "<actuator><motor joint=\"c\"/><position tendon=\"x\" kp=\"1\"/>"
      "<position tendon=\"t0\" kp=\"1\" gear=\"1.5\"/></actuator>"));
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(mjd_actuatorBranches(m.get(), 1), 1);
  ASSERT_EQ(mjd_actuatorBranches(m.get(), 2), 0);
  ASSERT_EQ(m->jnt_dofadr[m->actuator_trnid[0]], 2);  // c: a and b are dofs 0 and 1
  for (int i = 0; i < m->nv; ++i) m->dof_armature[i] = 0;
  SetEnable(m.get(), mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT, true);
  DataPtr d(mj_makeData(m.get()));
  const double h = m->opt.timestep;
  const WeightTable tab = Table();
  int exact = 0, fewer = 0, more = 0, chain = 0, raised = 0, passed = 0;
  for (double hw_row : {0.5, 1.0, 1.5, 2.0, 3.0}) {
    for (double hw_chain : {0.5, 1.0, 1.5, 2.0, 3.0}) {
      for (int i : {1, 2}) {
        double gear = m->actuator_gear[6 * i], hw = i == 1 ? hw_row : hw_chain;
        double invweight = gear * gear * m->tendon_invweight0[m->actuator_trnid[2 * i]];
        double kp = hw * hw / (h * h * invweight);
        m->actuator_gainprm[mjNGAIN * i] = kp;
        m->actuator_biasprm[mjNBIAS * i + 1] = -kp;
        m->actuator_biasprm[mjNBIAS * i + 2] = 0;
      }
      HoldPose(m.get(), d.get());
      Terms t = DocumentedTerms(m.get(), d.get());
      ASSERT_EQ(t.k.size(), 2u);
      ASSERT_EQ(t.actuator[0], 1);
      ASSERT_EQ(t.actuator[1], 2);
      int n = 0;
      for (double x : t.rows[0]) n += x != 0;
      ASSERT_EQ(n, 3);
      ASSERT_EQ(t.rows[1][0], 1.5);
      auto weights = [&](std::vector<int> bound) {
        return DocumentedWeights(m.get(), d.get(), t.rows, t.k, t.c, t.invweight0, bound);
      };
      std::vector<double> theta = weights({n, 0});
      std::string what = "h w_n " + std::to_string(hw_row) + ", " + std::to_string(hw_chain);
      for (size_t j = 0; j < 2; ++j) {
        EXPECT_NEAR(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, t.actuator[j]), theta[j],
                    1e-12) << what << " term " << j;
      }
      exact += weights({}) != theta;
      fewer += weights({n - 1, 0}) != theta;
      more += weights({n + 1, 0}) != theta;
      chain += weights({n, 2}) != theta;  // m m' + diag(m)^2 = 2 diag(m)^2 on one dof
      (theta[0] > TableWeight(tab, h, t.k[0], t.c[0], t.invweight0[0]) ? raised : passed)++;
    }
  }
  EXPECT_GT(exact, 0);
  EXPECT_GT(fewer, 0);
  EXPECT_GT(more, 0);
  EXPECT_GT(chain, 0);
  EXPECT_GT(raised, 0);
  EXPECT_GT(passed, 0);
  RecordProperty("cases_bound_decides", std::to_string(exact));
}

}  // namespace
}  // namespace mjpos
