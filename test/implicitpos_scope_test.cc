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

// Scope of mjENBL_IMPLICITPOS: every excluded configuration, and the Euler and RK4 integrators,
// give a trajectory bit-identical to flag off; in-scope ones do not.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mjxmacro.h>
#include <mujoco/mujoco.h>
#include "test/fixture.h"
#include "support/models.h"

namespace mjpos {
namespace {

// full state after n steps from a perturbed start, with slowly varying controls
std::vector<mjtNum> StateAfterTracking(const mjModel* m, bool flag, int n) {
  mjModel* mc = mj_copyModel(nullptr, m);
  SetEnable(mc, mjENBL_IMPLICITPOS, flag);
  mjData* d = mj_makeData(mc);
  for (int i = 0; i < mc->nv; ++i) d->qvel[i] = 0.5 * std::sin(1.0 + i);
  std::vector<mjtNum> out;
  for (int t = 0; t < n; ++t) {
    for (int u = 0; u < mc->nu; ++u) d->ctrl[u] = 0.5 * std::sin(0.01 * t + u);
    mj_step(mc, d);
  }
  out.insert(out.end(), d->qpos, d->qpos + mc->nq);
  out.insert(out.end(), d->qvel, d->qvel + mc->nv);
  out.insert(out.end(), d->act, d->act + mc->na);
  out.insert(out.end(), d->qacc, d->qacc + mc->nv);
  out.insert(out.end(), d->actuator_force, d->actuator_force + mc->nu);
  out.push_back(d->time);
  mj_deleteData(d);
  mj_deleteModel(mc);
  return out;
}

// Trajectory with the flag off ([0]) and on ([1]), and the MuJoCo warnings each run raised
struct OffOn {
  std::vector<mjtNum> state[2];
  std::vector<std::string> warnings[2];
};

OffOn TrajectoriesOffOn(const mjModel* m, int n) {
  OffOn r;
  for (bool on : {false, true}) {
    WarningCapture capture;
    r.state[on] = StateAfterTracking(m, on, n);
    r.warnings[on] = capture.messages();
  }
  return r;
}

// a configuration of support/models.h and the classifier's expected verdict on its actuator 0
struct ScopeCase {
  ScopeConfiguration config;
  int scope;  // expected mjd_actuatorPosScope of actuator 0; -1: no actuator
};

std::vector<ScopeCase> Cases() {
  const std::map<std::string, int> scope = {
      {"joint_servo", mjPOSSCOPE_RESTORING},
      {"fixed_tendon_chain", mjPOSSCOPE_RESTORING},
      {"fixed_tendon_branches", mjPOSSCOPE_RESTORING},
      {"spatial_tendon", mjPOSSCOPE_RESTORING},
      {"spatial_tendon_branches", mjPOSSCOPE_RESTORING},
      {"site_transmission", mjPOSSCOPE_TRANSMISSION},
      {"site_refsite", mjPOSSCOPE_RESTORING},
      {"body_transmission", mjPOSSCOPE_TRANSMISSION},
      {"ball_joint", mjPOSSCOPE_RESTORING},
      {"free_joint", mjPOSSCOPE_TRANSMISSION},
      {"muscle", mjPOSSCOPE_ZERO},  // inactive and short of its optimal length: no slope
      {"clamped_forcerange", mjPOSSCOPE_CLAMPED},
      {"non_restoring", mjPOSSCOPE_NONRESTORING},
      {"motor", mjPOSSCOPE_ZERO},
      {"ball_joint_stiffness", -1},
      {"free_joint_stiffness", -1},
      {"hinge_stiffness", -1},
  };
  std::vector<ScopeCase> cases;
  for (ScopeConfiguration& c : ScopeConfigurations(2e4, 1e3)) {
    int expected = scope.at(c.name);
    cases.push_back({std::move(c), expected});
  }
  return cases;
}

// fails on a MuJoCo warning outside a WarningCapture
class ScopeTest : public MujocoTest, public ::testing::WithParamInterface<ScopeCase> {};

// Catches: a wrong scope verdict, an excluded configuration the flag changes, or an in-scope one
// it leaves alone.
TEST_P(ScopeTest, ExcludedIsBitIdenticalIncludedIsNot) {
  const ScopeCase& c = GetParam();
  ModelPtr m = LoadModelOrFail(c.config.xml);
  ASSERT_NE(m, nullptr);

  // the classifier's verdict on actuator 0, after the forward pass of the first step
  if (c.scope >= 0) {
    ASSERT_GE(m->nu, 1);
    mjData* d = mj_makeData(m.get());
    for (int i = 0; i < m->nv; ++i) d->qvel[i] = 0.5 * std::sin(1.0 + i);
    for (int i = 0; i < m->nq && m->jnt_type[0] == mjJNT_HINGE; ++i) d->qpos[i] = 0.3;
    if (c.config.name == "clamped_forcerange") d->ctrl[0] = 1;
    mj_forward(m.get(), d);
    EXPECT_EQ(mjd_actuatorPosScope(m.get(), d, 0, nullptr), c.scope) << c.config.name;
    mj_deleteData(d);
  }

  // trajectories: excluded configurations identical to flag off, warnings included, included
  // ones not; the stiff servos make stock diverge, and the flag too where it leaves them out
  OffOn r = TrajectoriesOffOn(m.get(), 300);
  EXPECT_EQ(BitIdentical(r.state[0], r.state[1]), !c.config.changes) << c.config.name;
  for (mjtNum x : r.state[1]) EXPECT_TRUE(std::isfinite(x)) << c.config.name;
  if (c.config.changes) {
    EXPECT_THAT(r.warnings[1], ::testing::IsEmpty()) << c.config.name;
  } else {
    EXPECT_EQ(r.warnings[1], r.warnings[0]) << c.config.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Configurations, ScopeTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<ScopeCase>& info) {
                           return info.param.config.name;
                         });

// Catches: the flag acting under Euler or RK4 on a scope configuration or a stiff chain (the
// shipped models under Euler and RK4 are bitidentity_test's), in the state or in the warnings
// (the stiff servos make both integrators diverge).
class ImplicitPosIntegrators : public MujocoTest {};

TEST_F(ImplicitPosIntegrators, EulerAndRk4IgnoreFlag) {
  std::vector<std::string> xmls;
  for (const ScopeCase& c : Cases()) xmls.push_back(c.config.xml);
  xmls.push_back(ChainXml(5, 1e5, 1, 0.005));
  int checked = 0;
  for (const std::string& xml : xmls) {
    ModelPtr m = LoadModelOrFail(xml);
    ASSERT_NE(m, nullptr);
    for (int integrator : {mjINT_EULER, mjINT_RK4}) {
      m->opt.integrator = integrator;
      OffOn r = TrajectoriesOffOn(m.get(), 200);
      EXPECT_TRUE(BitIdentical(r.state[0], r.state[1])) << xml << " integrator " << integrator;
      EXPECT_EQ(r.warnings[1], r.warnings[0]) << xml << " integrator " << integrator;
      ++checked;
    }
  }

  EXPECT_EQ(checked, 2 * static_cast<int>(xmls.size()));
}

class ImplicitPosDisable : public MujocoTest {};

// Catches: stiffness added although actuation or passive forces are disabled.
TEST_F(ImplicitPosDisable, DisabledForcesAddNoStiffness) {
  ModelPtr m = LoadModelOrFail(ChainXml(3, 1e5, 1, 0.005));
  ASSERT_NE(m, nullptr);
  m->opt.disableflags |= mjDSBL_ACTUATION;
  EXPECT_TRUE(BitIdentical(StateAfterTracking(m.get(), false, 100),
                           StateAfterTracking(m.get(), true, 100)));

  m = LoadModelOrFail(
      "<mujoco><option integrator=\"implicit\"><flag passive=\"disable\"/></option>"
      "<worldbody><body><joint axis=\"0 1 0\" stiffness=\"1e4\"/>"
      "<geom size=\".1\"/></body></worldbody></mujoco>");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(BitIdentical(StateAfterTracking(m.get(), false, 100),
                           StateAfterTracking(m.get(), true, 100)));
  m->opt.disableflags &= ~mjDSBL_PASSIVE;
  EXPECT_FALSE(BitIdentical(StateAfterTracking(m.get(), false, 100),
                            StateAfterTracking(m.get(), true, 100)));
}

class ImplicitPosTendonScope : public MujocoTest {};

// Catches: a tendon's scope, model structure kept in mjData, not found again by mj_resetData
// after the model's tendon is edited: a joint on another branch (in K too), a joint listed twice,
// the chain again; and an emptied tendon (the compiler makes none) taken into K.
TEST_F(ImplicitPosTendonScope, FoundAgainByResetData) {
  std::vector<ScopeConfiguration> configs = ScopeConfigurations(2e4, 1e3);
  auto chain = std::find_if(configs.begin(), configs.end(), [](const ScopeConfiguration& c) {
    return c.name == "fixed_tendon_chain";
  });
  ASSERT_NE(chain, configs.end());
  ModelPtr m = LoadModelOrFail(chain->xml);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->actuator_trntype[0], mjTRN_TENDON);
  int t = m->actuator_trnid[0], wrap = m->tendon_adr[t] + 1;
  int b = m->wrap_objid[wrap], c = mj_name2id(m.get(), mjOBJ_JOINT, "c");
  ASSERT_GE(c, 0);
  DataPtr d(mj_makeData(m.get()));

  const struct {
    int joint;
    int scope;
  } edits[] = {
      {b, mjPOSSCOPE_RESTORING},
      {c, mjPOSSCOPE_RESTORING},
      {m->wrap_objid[wrap - 1], mjPOSSCOPE_TRANSMISSION},
      {b, mjPOSSCOPE_RESTORING},
  };
  for (const auto& edit : edits) {
    m->wrap_objid[wrap] = edit.joint;
    mj_resetData(m.get(), d.get());
    mj_forward(m.get(), d.get());
    EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), edit.scope)
        << "second joint " << edit.joint;
  }

  int num = m->tendon_num[t];
  m->tendon_num[t] = 0;
  mj_resetData(m.get(), d.get());
  mj_forward(m.get(), d.get());
  EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_TRANSMISSION);
  m->tendon_num[t] = num;
}

// Catches: an actuator's dof and structure scope, model structure kept in mjData
// (actuator_posdof, actuator_postrn), not found again by mj_resetData after the model's actuator
// is moved: from hinge a (as compiled) to hinge b (its term of K on b's dof, none on a's), to the
// free joint (no length: out of K), back to b; or after its gain or bias type is made a user
// term (GAINBIAS, out of K: the affine bias's slope would put kp gear^2 in K, and a fixed gain's
// zero slope would report ZERO), on the free joint the transmission's code first; the address
// of a position servo's diagonal element (actuator_posdiag) not that of its dof in the D-sparse
// layout (rows of each dof's ancestors, itself and descendants, found here from dof_parentid),
// or kept for an actuator that is no longer one (-1); and mj_resetData writing any of the three
// arrays one past its end (each is replaced by a copy one element longer whose last element must
// survive).
TEST_F(ImplicitPosTendonScope, ActuatorStructureFoundAgainByResetData) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><option integrator=\"implicit\"/><worldbody>"
      "<body><joint name=\"a\" axis=\"0 1 0\"/><geom size=\".1\"/>"
      "<body pos=\"0 0 -.3\"><joint name=\"b\" axis=\"0 1 0\"/><geom size=\".1\"/></body></body>"
      "<body pos=\"1 0 0\"><freejoint name=\"f\"/><geom size=\".1\"/></body></worldbody>"
      "<actuator><position joint=\"a\" kp=\"100\" gear=\"2\"/></actuator></mujoco>");
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  int a = mj_name2id(m.get(), mjOBJ_JOINT, "a"), b = mj_name2id(m.get(), mjOBJ_JOINT, "b");
  int f = mj_name2id(m.get(), mjOBJ_JOINT, "f"), nv = m->nv, nu = m->nu;
  ASSERT_EQ(nu, 1);
  const int sentinel = -12345;
  std::vector<int> posdof(nu + 1, sentinel), postrn(nu + 1, sentinel);
  std::vector<int> posdiag(nu + 1, sentinel);
  int *own_dof = d->actuator_posdof, *own_trn = d->actuator_postrn;
  int* own_diag = d->actuator_posdiag;

  // the D-sparse address of each dof's diagonal element: its row after the rows before it, and
  // after its ancestors within its row
  std::vector<int> diag(nv);
  for (int r = 0, adr = 0; r < nv; ++r) {
    int ancestors = 0, descendants = 0;
    for (int p = m->dof_parentid[r]; p >= 0; p = m->dof_parentid[p]) ++ancestors;
    for (int c = r + 1; c < nv; ++c) {
      for (int p = m->dof_parentid[c]; p >= 0; p = m->dof_parentid[p]) descendants += p == r;
    }
    diag[r] = adr + ancestors;
    adr += ancestors + 1 + descendants;
  }
  m->opt.enableflags |= mjENBL_IMPLICITPOS;

  const int fixed = mjGAIN_FIXED, user = mjGAIN_USER, affine = mjBIAS_AFFINE;
  const struct {
    int joint;
    int gaintype;
    int biastype;
    int scope;
  } edits[] = {{a, fixed, affine, mjPOSSCOPE_RESTORING},
               {b, fixed, affine, mjPOSSCOPE_RESTORING},
               {f, fixed, affine, mjPOSSCOPE_TRANSMISSION},
               {b, user, affine, mjPOSSCOPE_GAINBIAS},
               {b, fixed, mjBIAS_USER, mjPOSSCOPE_GAINBIAS},
               {f, user, affine, mjPOSSCOPE_TRANSMISSION},
               {b, mjGAIN_AFFINE, affine, mjPOSSCOPE_RESTORING},
               {b, fixed, mjBIAS_NONE, mjPOSSCOPE_ZERO},
               {b, fixed, affine, mjPOSSCOPE_RESTORING}};
  for (const auto& edit : edits) {
    m->actuator_trnid[0] = edit.joint;
    m->actuator_gaintype[0] = edit.gaintype;
    m->actuator_biastype[0] = edit.biastype;
    d->actuator_posdof = posdof.data();
    d->actuator_postrn = postrn.data();
    d->actuator_posdiag = posdiag.data();
    mj_resetData(m.get(), d.get());
    d->actuator_posdof = own_dof;
    d->actuator_postrn = own_trn;
    d->actuator_posdiag = own_diag;
    EXPECT_EQ(posdof[nu], sentinel) << "joint " << edit.joint;
    EXPECT_EQ(postrn[nu], sentinel) << "joint " << edit.joint;
    EXPECT_EQ(posdiag[nu], sentinel) << "joint " << edit.joint;
    bool servo = edit.scope == mjPOSSCOPE_RESTORING && edit.gaintype == fixed &&
                 edit.biastype == affine;
    EXPECT_EQ(posdiag[0], servo ? diag[m->jnt_dofadr[edit.joint]] : -1) << "joint " << edit.joint;
    std::copy(posdof.begin(), posdof.begin() + nu, own_dof);
    std::copy(postrn.begin(), postrn.begin() + nu, own_trn);
    std::copy(posdiag.begin(), posdiag.begin() + nu, own_diag);
    mj_forward(m.get(), d.get());
    EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), edit.scope)
        << "joint " << edit.joint;

    // K times unit velocities: kp gear^2 on the actuator's dof alone
    std::vector<mjtNum> vec(nv, 0);
    std::fill(d->qvel, d->qvel + nv, 1.0);
    mjd_implicitPos(m.get(), d.get(), nullptr, 0, vec.data(), 1);
    for (int dof = 0; dof < nv; ++dof) {
      bool in_k = edit.scope == mjPOSSCOPE_RESTORING && dof == m->jnt_dofadr[edit.joint];
      EXPECT_EQ(vec[dof], in_k ? 400 : 0) << "joint " << edit.joint << ", dof " << dof;
    }
  }
}

// Catches: the D layout's scratch taken by mj_resetData where the stack cannot hold it (3 nv + nD
// mjtNums: mj_makeMSparse takes nv more), an error where stock resets; or not taken where it
// can, so that the servo finds no address; or counted in maxuse_stack, which stock's reset leaves
// 0. With room for it exactly the servo has its address, with one mjtNum less none (-1), and its
// term of K is the same either way (the step's general path).
TEST_F(ImplicitPosTendonScope, DiagonalAddressOnlyWhereTheStackHoldsTheLayout) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><option integrator=\"implicit\"><flag implicitpos=\"enable\"/></option>"
      "<worldbody><body><joint axis=\"0 1 0\"/><geom size=\".1\"/>"
      "<body pos=\"0 0 -.3\"><joint name=\"b\" axis=\"0 1 0\"/><geom size=\".1\"/>"
      "</body></body></worldbody>"
      "<actuator><position joint=\"b\" kp=\"100\" gear=\"2\"/></actuator></mujoco>");
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  int nv = m->nv, need = 3 * nv + m->nD, own = d->nstack;
  ASSERT_GE(own, need);
  std::vector<mjtNum> stepped[2];
  for (int room : {need, need - 1}) {
    d->nstack = room;
    mj_resetData(m.get(), d.get());
    d->nstack = own;
    EXPECT_EQ(d->maxuse_stack, 0) << room;
    EXPECT_EQ(d->actuator_posdiag[0], room == need ? 3 : -1) << room;  // rows (0, 1), (0, 1)

    // K times unit velocities: kp gear^2 on b's dof alone
    mj_forward(m.get(), d.get());
    std::vector<mjtNum> vec(nv, 0);
    std::fill(d->qvel, d->qvel + nv, 1.0);
    mjd_implicitPos(m.get(), d.get(), nullptr, 0, vec.data(), 1);
    EXPECT_EQ(vec[0], 0) << room;
    EXPECT_EQ(vec[1], 400) << room;

    // the step from a unit error, by its matrix: the same with the address or without
    d->ctrl[0] = 1;
    for (int i = 0; i < 5; ++i) mj_step(m.get(), d.get());
    stepped[room == need].assign(d->qpos, d->qpos + m->nq);
  }
  EXPECT_EQ(stepped[0], stepped[1]);
}

// Catches: a model of one dof left without its servo's address, which its D layout has (the one
// element 0): the layout found only from two dofs on.
TEST_F(ImplicitPosTendonScope, DiagonalAddressOfOneDof) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><worldbody><body><joint name=\"a\" axis=\"0 1 0\"/><geom size=\".1\"/>"
      "</body></worldbody><actuator><position joint=\"a\" kp=\"100\"/></actuator></mujoco>");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->nv, 1);
  DataPtr d(mj_makeData(m.get()));
  EXPECT_EQ(d->actuator_posdiag[0], 0);
}

// Catches: mj_resetData reading the absent arrays of a model of sizes only, as the Python
// bindings' unpickling makes one (its sizes, then mj_makeData, then every mjData array read from
// the pickle), in the passes that find the tendons' scope and the actuators' dof and transmission
// scope: stock's own reset tests each model array it reads. The model has a tendon servo and a
// joint servo, so that both passes have work; each leaves its arrays as the reset cleared them.
TEST_F(ImplicitPosTendonScope, ResetOfAModelOfSizesOnly) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><worldbody><body><joint name=\"a\" axis=\"0 1 0\"/><geom size=\".1\"/>"
      "<body pos=\"0 0 -.3\"><joint name=\"b\" axis=\"0 1 0\"/><geom size=\".1\"/></body></body>"
      "</worldbody><tendon><fixed name=\"t\"><joint joint=\"a\" coef=\"1\"/>"
      "<joint joint=\"b\" coef=\"1\"/></fixed></tendon><actuator><position tendon=\"t\"/>"
      "<position joint=\"b\"/></actuator></mujoco>");
  ASSERT_NE(m, nullptr);
  mjModel sizes;
  std::memset(&sizes, 0, sizeof(sizes));
#define X(var) sizes.var = m->var;
  MJMODEL_INTS
#undef X
  ASSERT_EQ(sizes.ntendon, 1);
  ASSERT_EQ(sizes.nu, 2);
  DataPtr d(mj_makeData(&sizes));
  ASSERT_NE(d, nullptr);
  for (int i = 0; i < sizes.nu; ++i) {
    EXPECT_EQ(d->actuator_posdof[i], 0) << i;  // the buffer as the reset cleared it
    EXPECT_EQ(d->actuator_postrn[i], 0) << i;
  }
  EXPECT_EQ(d->ten_posscope[0], 0);
}

// Catches: a tendon's scope decided by the order of its joints. Joints on two branches listed
// before a ball joint, or before a joint listed again, are TRANSMISSION as in any other order;
// the two joints on two branches alone are in K.
TEST_F(ImplicitPosTendonScope, IndependentOfTheWrapOrder) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><option integrator=\"implicit\"/><worldbody>"
      "<body><joint name=\"a\" axis=\"0 1 0\"/><geom size=\".1\"/>"
      "<body pos=\".3 0 0\"><joint name=\"ball\" type=\"ball\"/><geom size=\".1\"/></body>"
      "</body>"
      "<body pos=\"0 1 0\"><joint name=\"c\" axis=\"0 1 0\"/><geom size=\".1\"/></body>"
      "</worldbody><tendon><fixed name=\"t\"><joint joint=\"a\" coef=\"1\"/>"
      "<joint joint=\"c\" coef=\"1\"/><joint joint=\"ball\" coef=\"1\"/></fixed></tendon>"
      "<actuator><position tendon=\"t\" kp=\"100\"/></actuator></mujoco>");
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  int last = m->tendon_adr[0] + 2;
  int a = mj_name2id(m.get(), mjOBJ_JOINT, "a"), ball = mj_name2id(m.get(), mjOBJ_JOINT, "ball");
  ASSERT_EQ(m->wrap_objid[last], ball);
  const struct {
    int joint;  // the third joint, after a and c (on two branches)
    int scope;
    const char* what;
  } cases[] = {
      {ball, mjPOSSCOPE_TRANSMISSION, "a ball joint"},
      {a, mjPOSSCOPE_TRANSMISSION, "a repeated"},
      {-1, mjPOSSCOPE_RESTORING, "none (a two-joint tendon)"},
  };
  for (const auto& c : cases) {
    if (c.joint >= 0) {
      m->wrap_objid[last] = c.joint;
    } else {
      m->tendon_num[0] = 2;
    }
    mj_resetData(m.get(), d.get());
    mj_forward(m.get(), d.get());
    EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), c.scope) << c.what;
  }
  m->tendon_num[0] = 3;
}

class ImplicitPosScopeReason : public MujocoTest {};

// Catches: a scope case's reason written a second time in other words. The engine states why each
// case is in K or left out (mjd_posScopeReason); doc/scope.md's table of the actuator cases must
// carry that text in the row of the case, and a value outside mjtPosScope is named as such.
TEST_F(ImplicitPosScopeReason, DocumentedInTheScopeTable) {
  std::ifstream doc(MJPOS_DOC_DIR "/scope.md");
  ASSERT_TRUE(doc.good());
  // case name -> its row in the first table that names it (the actuators', before the springs')
  std::map<std::string, std::string> rows;
  for (std::string line; std::getline(doc, line);) {
    size_t end = line.find("` |", 3);
    if (line.rfind("| `", 0) == 0 && end != std::string::npos) {
      rows.emplace(line.substr(3, end - 3), line);
    }
  }
  const struct {
    int scope;
    const char* name;
  } cases[] = {
      {mjPOSSCOPE_RESTORING, "RESTORING"},       {mjPOSSCOPE_ZERO, "ZERO"},
      {mjPOSSCOPE_NONRESTORING, "NONRESTORING"}, {mjPOSSCOPE_CLAMPED, "CLAMPED"},
      {mjPOSSCOPE_GAINBIAS, "GAINBIAS"},         {mjPOSSCOPE_TRANSMISSION, "TRANSMISSION"},
      {mjPOSSCOPE_DISABLED, "DISABLED"},
  };
  for (const auto& c : cases) {
    std::string reason = mjd_posScopeReason(c.scope);
    ASSERT_TRUE(rows.count(c.name)) << c.name << " has no row in doc/scope.md";
    EXPECT_NE(rows[c.name].find("| " + reason), std::string::npos)
        << c.name << ": \"" << reason << "\" is not in its row: " << rows[c.name];
  }
  EXPECT_STREQ(mjd_posScopeReason(-1), "unknown scope");
  EXPECT_STREQ(mjd_posScopeReason(mjPOSSCOPE_DISABLED + 1), "unknown scope");
}

}  // namespace
}  // namespace mjpos
