// Copyright 2026 DeepMind Technologies Limited
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

// Tests for mjENBL_IMPLICITPOS: implicit integration in position.

#include "src/engine/engine_derivative_pos.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mjmodel.h>
#include <mujoco/mjspec.h>
#include <mujoco/mujoco.h>
#include "src/engine/engine_forward.h"
#include "test/fixture.h"

namespace mujoco {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::NotNull;
using ::testing::StrEq;

using ImplicitPosTest = MujocoTest;

constexpr double kInertia = 0.01576;
constexpr double kKv = 1.0;

// one hinge with armature kInertia, a position servo (kp, kv) and a body inertia of 4e-11
std::string OneHinge(double kp, double kv, double h, const char* integrator,
                     const char* extra_actuator = "") {
  char xml[2048];
  std::snprintf(xml, sizeof(xml), R"(
  <mujoco>
    <option timestep="%.17g" integrator="%s" gravity="0 0 0"/>
    <worldbody>
      <body>
        <joint name="hinge" axis="0 0 1" armature="%.17g"/>
        <geom type="sphere" size=".01" mass="1e-6"/>
      </body>
    </worldbody>
    <actuator>
      <position joint="hinge" kp="%.17g" kv="%.17g" %s/>
    </actuator>
  </mujoco>
  )", h, integrator, kInertia, kp, kv, extra_actuator);
  return xml;
}

void SetFlag(mjModel* m, bool on) {
  if (on) {
    m->opt.enableflags |= mjENBL_IMPLICITPOS;
  } else {
    m->opt.enableflags &= ~mjENBL_IMPLICITPOS;
  }
}

double RelErr(double x, double ref) {
  return std::abs(x - ref) / std::max(std::abs(ref), 1e-300);
}

// K (nv x nv, row-major) from mjd_implicitPos on the D pattern
std::vector<mjtNum> DenseK(const mjModel* m, mjData* d) {
  std::vector<mjtNum> kd(m->nD, 0), dense(m->nv*m->nv);
  mjd_implicitPos(m, d, kd.data(), 1, nullptr, 0);
  mju_sparse2dense(dense.data(), kd.data(), m->nv, m->nv, m->D_rownnz, m->D_rowadr, m->D_colind);
  return dense;
}

// one backward-Euler step of the one-hinge servo: qacc = (kp(q*-q0) - (kv+h kp) v0) / den
double ClosedFormQacc(double inertia, double kp, double kv, double h, double q0, double v0,
                      double target, bool implicitpos) {
  double den = inertia + h*kv + (implicitpos ? h*h*kp : 0);
  return (kp*(target - q0) - (kv + (implicitpos ? h*kp : 0))*v0) / den;
}

// 2x2 one-step map of (q, v) about the target 0
struct Map2 {
  double a[2][2];
  std::complex<double> Eig(int which) const {
    double tr = a[0][0] + a[1][1], det = a[0][0]*a[1][1] - a[0][1]*a[1][0];
    std::complex<double> disc = std::sqrt(std::complex<double>(tr*tr/4 - det));
    return tr/2 + (which ? -disc : disc);
  }
  double Radius() const { return std::max(std::abs(Eig(0)), std::abs(Eig(1))); }
};

Map2 SimulatedMap(const mjModel* m, double delta) {
  Map2 map;
  mjData* d = mj_makeData(m);
  for (int col = 0; col < 2; ++col) {
    mj_resetData(m, d);
    d->qpos[0] = col == 0 ? delta : 0;
    d->qvel[0] = col == 1 ? delta : 0;
    mj_step(m, d);
    map.a[0][col] = d->qpos[0] / delta;
    map.a[1][col] = d->qvel[0] / delta;
  }
  mj_deleteData(d);
  return map;
}

Map2 ClosedFormMap(double inertia, double kp, double kv, double h, bool implicitpos) {
  Map2 map;
  double aq = ClosedFormQacc(inertia, kp, kv, h, 1, 0, 0, implicitpos);
  double av = ClosedFormQacc(inertia, kp, kv, h, 0, 1, 0, implicitpos);
  map.a[1][0] = h*aq;
  map.a[1][1] = 1 + h*av;
  map.a[0][0] = 1 + h*map.a[1][0];
  map.a[0][1] = h*map.a[1][1];
  return map;
}

// ------------------------------- one hinge -----------------------------------

// one step matches the closed form, under implicit and implicitfast, flag on and off
// Catches: a wrong h^2 kp term or h kp v shift on one hinge (qLU or qH), or a flag acting off.
TEST_F(ImplicitPosTest, OneHingeClosedForm) {
  const double q0 = 0.3, v0 = -2.0, target = 0.5;
  for (const char* integrator : {"implicit", "implicitfast"}) {
    for (double h : {5e-3, 2e-3}) {
      for (double kp : {1e2, 1e4, 1e6, 1e8}) {
        MjModelPtr model = LoadModelFromString(OneHinge(kp, kKv, h, integrator));
        ASSERT_THAT(model, NotNull());
        for (bool on : {false, true}) {
          SetFlag(model.get(), on);
          MjDataPtr data = MakeData(model);
          data->qpos[0] = q0;
          data->qvel[0] = v0;
          data->ctrl[0] = target;
          mj_forward(model.get(), data.get());
          double inertia = data->M[0];
          EXPECT_NEAR(inertia, kInertia, 1e-10);

          mj_step(model.get(), data.get());
          double qacc = ClosedFormQacc(inertia, kp, kKv, h, q0, v0, target, on);
          double qvel = v0 + h*qacc;
          double qpos = q0 + h*qvel;
          if (on || h*h*kp < 4*inertia + 2*h*kKv) {
            EXPECT_LE(RelErr(data->qvel[0], qvel), 1e-14)
                << integrator << " h=" << h << " kp=" << kp << " flag=" << on;
            EXPECT_LE(RelErr(data->qpos[0], qpos), 1e-14)
                << integrator << " h=" << h << " kp=" << kp << " flag=" << on;
          }

          // the two schemes differ: the test can tell them apart
          double other = v0 + h*ClosedFormQacc(inertia, kp, kKv, h, q0, v0, target, !on);
          EXPECT_GT(RelErr(data->qvel[0], other), 1e-6);
        }
      }
    }
  }
}

// the simulated one-step map has the closed-form poles; stock loses stability just above
// h^2 kp = 4I + 2h kv, the flag keeps the spectral radius below one up to kp = 1e12
// Catches: step-map poles that are not backward Euler's, or a flag that keeps the stock cap.
TEST_F(ImplicitPosTest, OneHingePoles) {
  for (const char* integrator : {"implicit", "implicitfast"}) {
    for (double h : {5e-3, 2e-3}) {
      double cap = (4*kInertia + 2*h*kKv) / (h*h);
      for (double kp : {1e1, 1e3, 0.99*cap, 1.01*cap, 1e6, 1e9, 1e12}) {
        MjModelPtr model = LoadModelFromString(OneHinge(kp, kKv, h, integrator));
        ASSERT_THAT(model, NotNull());
        MjDataPtr data = MakeData(model);
        mj_forward(model.get(), data.get());
        double inertia = data->M[0];
        for (bool on : {false, true}) {
          SetFlag(model.get(), on);
          Map2 sim = SimulatedMap(model.get(), 1e-6);
          Map2 ref = ClosedFormMap(inertia, kp, kKv, h, on);
          double scale = std::max(1.0, ref.Radius());
          for (int k = 0; k < 2; ++k) {
            EXPECT_LE(std::abs(sim.Eig(k) - ref.Eig(k)), 1e-6*scale)
                << integrator << " h=" << h << " kp=" << kp << " flag=" << on;
          }
          if (on) {
            EXPECT_LT(sim.Radius(), 1.0) << integrator << " h=" << h << " kp=" << kp;
          } else if (kp == 0.99*cap || kp == 1.01*cap) {
            EXPECT_EQ(sim.Radius() > 1.0, kp > cap) << integrator << " h=" << h;
          }
        }
      }
    }
  }
}

// joint stiffness: one step matches the closed form with k in place of kp
// Catches: stiffness missing from K or its shift, or in K while softening or disabled.
TEST_F(ImplicitPosTest, JointStiffnessClosedForm) {
  const double h = 5e-3, k = 1e5, b = 0.5, q0 = 0.2, v0 = 1.0;
  static const char* xml = R"(
  <mujoco>
    <option timestep="5e-3" gravity="0 0 0"/>
    <worldbody>
      <body>
        <joint axis="0 1 0" type="slide" armature="0.01576" stiffness="1e5" damping="0.5"/>
        <geom type="sphere" size=".01" mass="1e-6"/>
      </body>
    </worldbody>
  </mujoco>
  )";
  MjModelPtr model = LoadModelFromString(xml);
  ASSERT_THAT(model, NotNull());
  for (int integrator : {mjINT_IMPLICIT, mjINT_IMPLICITFAST}) {
    model->opt.integrator = integrator;
    SetFlag(model.get(), true);
    MjDataPtr data = MakeData(model);
    data->qpos[0] = q0;
    data->qvel[0] = v0;
    mj_forward(model.get(), data.get());
    double inertia = data->M[0];
    mj_step(model.get(), data.get());
    double qacc = (-k*q0 - (b + h*k)*v0) / (inertia + h*b + h*h*k);
    EXPECT_LE(RelErr(data->qvel[0], v0 + h*qacc), 1e-14) << integrator;
  }

  // out of K, so that the flag changes nothing: a softening spring (d(x f)/dx = 1e5 - 1e6 q0 < 0
  // at q0), and springs disabled
  for (bool disabled : {false, true}) {
    model->jnt_stiffnesspoly[0] = disabled ? 0 : -5e5;
    if (disabled) model->opt.disableflags |= mjDSBL_SPRING;
    for (int integrator : {mjINT_IMPLICIT, mjINT_IMPLICITFAST}) {
      model->opt.integrator = integrator;
      mjtNum qvel[2];
      for (bool on : {false, true}) {
        SetFlag(model.get(), on);
        MjDataPtr data = MakeData(model);
        data->qpos[0] = q0;
        data->qvel[0] = v0;
        mj_step(model.get(), data.get());
        qvel[on] = data->qvel[0];
      }
      EXPECT_EQ(qvel[0], qvel[1]) << "integrator " << integrator << " disabled " << disabled;
    }
  }
}

// ------------------------------- multi-dof -----------------------------------

// a three-link arm with joint servos and a fixed-tendon servo along the chain: one
// implicitfast step matches a dense solve of (M + h kv mm' + h^2 kp mm') a = f - h K v
static const char* const kArm = R"(
<mujoco>
  <option timestep="0.01" integrator="implicitfast" gravity="0 0 -9.81"/>
  <worldbody>
    <body>
      <joint name="j0" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      <body pos=".3 0 0">
        <joint name="j1" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
        <body pos=".3 0 0">
          <joint name="j2" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t">
      <joint joint="j0" coef="1"/>
      <joint joint="j2" coef="-0.5"/>
    </fixed>
  </tendon>
  <actuator>
    <position joint="j0" kp="3000" kv="2"/>
    <position joint="j1" kp="2000" kv="1"/>
    <position tendon="t" kp="5000" kv="3"/>
  </actuator>
</mujoco>
)";

// largest error of one implicitfast step from (qpos, qvel, ctrl) against a dense solve of
// (M + h kv mm' + h^2 kp mm') a = f - h kp mm' v, for position servos with any moment
double DenseStepError(const mjModel* model, const std::vector<mjtNum>& qpos,
                      const std::vector<mjtNum>& qvel, const std::vector<mjtNum>& ctrl) {
  int nv = model->nv, nu = model->nactuator;
  double h = model->opt.timestep;
  MjDataPtr data(mj_makeData(model));
  mju_copy(data->qpos, qpos.data(), nv);
  mju_copy(data->qvel, qvel.data(), nv);
  mju_copy(data->ctrl, ctrl.data(), nu);
  mj_forward(model, data.get());

  // dense reference from the public API: mass matrix, moments, gains
  std::vector<mjtNum> A(nv*nv), moment(nu*nv), rhs(nv);
  mj_fullM(model, data.get(), A.data());
  EXPECT_EQ(model->nout, nu);
  mju_sparse2dense(moment.data(), data->actuator_moment, nu, nv, data->moment_rownnz,
                   data->moment_rowadr, data->moment_colind);
  for (int i = 0; i < nv; ++i) rhs[i] = data->qfrc_smooth[i] + data->qfrc_constraint[i];
  for (int k = 0; k < nu; ++k) {
    double kp = -model->actuator_biasprm[mjNBIAS*k + 1];
    double kv = -model->actuator_biasprm[mjNBIAS*k + 2];
    const mjtNum* mk = moment.data() + k*nv;
    double mv = mju_dot(mk, qvel.data(), nv);
    for (int r = 0; r < nv; ++r) {
      rhs[r] -= h*kp*mk[r]*mv;
      for (int c = 0; c < nv; ++c) A[r*nv + c] += (h*kv + h*h*kp)*mk[r]*mk[c];
    }
  }
  std::vector<mjtNum> qacc(nv);
  EXPECT_EQ(mju_cholFactor(A.data(), nv, 0), nv);
  mju_cholSolve(qacc.data(), A.data(), rhs.data(), nv);

  // one implicitfast step from the same forward pass
  mj_implicit(model, data.get());
  double err = 0;
  for (int i = 0; i < nv; ++i) {
    double ref = qvel[i] + h*qacc[i];
    err = std::max(err, std::abs(data->qvel[i] - ref) / (1 + std::abs(ref)));
  }
  return err;
}

// Catches: a wrong joint or fixed-tendon block kp m m' (sign, scale, pattern) or its shift.
TEST_F(ImplicitPosTest, ArmMatchesDenseSolve) {
  MjModelPtr model = LoadModelFromString(kArm);
  ASSERT_THAT(model, NotNull());
  SetFlag(model.get(), true);
  EXPECT_LE(DenseStepError(model.get(), {0.3, -0.4, 0.8}, {1.0, -2.0, 0.5}, {0.1, 0.2, 0.3}),
            1e-12);

  // flag off: the same reference is missed by far
  SetFlag(model.get(), false);
  EXPECT_GT(DenseStepError(model.get(), {0.3, -0.4, 0.8}, {1.0, -2.0, 0.5}, {0.1, 0.2, 0.3}),
            1e-3);
}

// Cartesian servos: site transmissions with a refsite on the site's chain (on the first link,
// and fixed in the world), translational gear; their moments depend on qpos
static const char* const kSiteArm = R"(
<mujoco>
  <option timestep="0.01" integrator="implicitfast" gravity="0 0 -9.81"/>
  <worldbody>
    <site name="origin"/>
    <body>
      <joint name="j0" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      <site name="base" pos=".1 0 0"/>
      <body pos=".3 0 0">
        <joint name="j1" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
        <body pos=".3 0 0">
          <joint name="j2" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
          <site name="tip" pos=".3 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position site="tip" refsite="base" gear="1 0 0 0 0 0" kp="4000" kv="2"/>
    <position site="tip" refsite="origin" gear="0 0 1 0 0 0" kp="3000" kv="1"/>
  </actuator>
</mujoco>
)";

// Catches: Cartesian servos left out of K, judged out of scope, or with a wrong block or shift.
TEST_F(ImplicitPosTest, SiteRefsiteMatchesDenseSolve) {
  MjModelPtr model = LoadModelFromString(kSiteArm);
  ASSERT_THAT(model, NotNull());
  MjDataPtr data = MakeData(model);
  mj_forward(model.get(), data.get());
  for (int i = 0; i < model->nactuator; ++i) {
    EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), i, nullptr), mjPOSSCOPE_RESTORING);
  }
  SetFlag(model.get(), true);
  EXPECT_LE(DenseStepError(model.get(), {0.3, -0.4, 0.8}, {1.0, -2.0, 0.5}, {0.2, -0.1}), 1e-12);
  SetFlag(model.get(), false);
  EXPECT_GT(DenseStepError(model.get(), {0.3, -0.4, 0.8}, {1.0, -2.0, 0.5}, {0.2, -0.1}), 1e-3);
}

// K assembled on the D pattern (and its lower triangle on the M pattern) equals a central
// finite difference of -(qfrc_actuator + qfrc_passive) in qpos, at zero velocity and with the
// servos at their setpoints (so that the force, and the geometric term of site moments, is 0);
// the springs: a unit hinge stiffness, a polynomial slide spring away from its springref;
// mjd_implicitPos and mjd_implicitPosM are called directly
// (no step: meant to pass with the hooks in mj_implicitSkip reverted)
// Catches: a K that is not -d qfrc / d qpos (slope sign, gain term, springs, lost entries).
TEST_F(ImplicitPosTest, StiffnessMatchesFiniteDifference) {
  static const char* const kSpring = R"(
  <mujoco>
    <worldbody>
      <body>
        <joint axis="0 1 0" stiffness="1" springref="0.2"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
        <body pos=".3 0 0">
          <joint type="slide" axis="1 0 0" stiffness="700" springref="0.1"/>
          <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
        </body>
      </body>
    </worldbody>
  </mujoco>
  )";
  // affine gain with a length term: slope = biasprm[1] + gainprm[1] * ctrl
  static const char* const kAffineGain = R"(
  <mujoco>
    <worldbody>
      <body>
        <joint name="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      </body>
    </worldbody>
    <actuator>
      <general joint="hinge" gaintype="affine" gainprm="20 50 0" biastype="affine"
               biasprm="0 -300 0"/>
    </actuator>
  </mujoco>
  )";
  for (const char* xml : {kArm, kSiteArm, kSpring, kAffineGain}) {
    MjModelPtr model = LoadModelFromString(xml);
    ASSERT_THAT(model, NotNull());
    if (xml == kSpring) {
      // nonlinear slide spring, at x = qpos - springref = -0.5: d(x f)/dx = 700 - 50 + 75
      model->jnt_stiffnesspoly[mjNPOLY*1 + 0] = 50;
      model->jnt_stiffnesspoly[mjNPOLY*1 + 1] = 100;
    }
    int nv = model->nv, nq = model->nq;
    MjDataPtr data = MakeData(model);
    const double qpos[3] = {0.3, -0.4, 0.8};
    for (int i = 0; i < nq; ++i) data->qpos[i] = qpos[i];
    mj_forward(model.get(), data.get());
    for (int i = 0; i < model->nu; ++i) data->ctrl[i] = data->actuator_length[i];
    mj_forward(model.get(), data.get());

    // K on the D pattern, and its lower triangle on the M pattern
    std::vector<mjtNum> dense = DenseK(model.get(), data.get());
    std::vector<mjtNum> km(model->nM, 0), lower(nv*nv);
    mjd_implicitPosM(model.get(), data.get(), km.data(), 1, nullptr, 0);
    mju_sparse2dense(lower.data(), km.data(), nv, nv, model->M_rownnz, model->M_rowadr,
                     model->M_colind);

    // central difference of the force, column by column
    const double eps = 1e-6;
    MjDataPtr probe = MakeData(model);
    double scale = 0, err = 0, err_lower = 0;
    for (int c = 0; c < nv; ++c) {
      std::vector<mjtNum> f[2];
      for (int side = 0; side < 2; ++side) {
        mju_copy(probe->qpos, data->qpos, nq);
        mju_copy(probe->ctrl, data->ctrl, model->nu);
        std::vector<mjtNum> dq(nv, 0);
        dq[c] = side ? eps : -eps;
        mj_integratePos(model.get(), probe->qpos, dq.data(), 1);
        mj_forward(model.get(), probe.get());
        f[side].resize(nv);
        mju_add(f[side].data(), probe->qfrc_actuator, probe->qfrc_passive, nv);
      }
      for (int r = 0; r < nv; ++r) {
        double fd = -(f[1][r] - f[0][r]) / (2*eps);
        scale = std::max(scale, std::abs(fd));
        err = std::max(err, std::abs(dense[r*nv + c] - fd));
        if (c <= r) err_lower = std::max(err_lower, std::abs(lower[r*nv + c] - fd));
      }
    }
    EXPECT_GT(scale, 100);
    EXPECT_LE(err, 1e-6*scale);
    EXPECT_LE(err_lower, 1e-6*scale);
  }
}

// a simple body (two slides at its center of mass) has only the diagonal of its rows in the
// lower M pattern of qH: a tendon over both slides is out of scope, so that implicit and
// implicitfast still take the same step; a servo on one slide stays in scope. M is diagonal, so
// the step is known in closed form: x gets h^2 kp in its pivot, y nothing
// Catches: a tendon over a simple body taken into K, or the servo on one slide left out of it.
TEST_F(ImplicitPosTest, SimpleBodyTendonOutOfScope) {
  static const char* xml = R"(
  <mujoco>
    <option gravity="0 0 0"/>
    <worldbody>
      <body>
        <joint name="x" type="slide" axis="1 0 0"/>
        <joint name="y" type="slide" axis="0 1 0"/>
        <geom size=".1"/>
      </body>
    </worldbody>
    <tendon>
      <fixed name="t">
        <joint joint="x" coef="1"/>
        <joint joint="y" coef="2"/>
      </fixed>
    </tendon>
    <actuator>
      <position tendon="t" kp="1e4"/>
      <position joint="x" kp="1e4"/>
    </actuator>
  </mujoco>
  )";
  MjModelPtr model = LoadModelFromString(xml);
  ASSERT_THAT(model, NotNull());
  ASSERT_GT(model->dof_simplenum[1], 0);
  const double h = model->opt.timestep, kp = 1e4;
  std::vector<mjtNum> qvel[2];
  for (int integrator : {mjINT_IMPLICIT, mjINT_IMPLICITFAST}) {
    model->opt.integrator = integrator;
    std::vector<mjtNum> step[2];
    double mass[2], frc[2];
    for (bool on : {false, true}) {
      SetFlag(model.get(), on);
      MjDataPtr data = MakeData(model);
      data->qpos[0] = 0.3;
      data->qpos[1] = -0.2;
      mj_forward(model.get(), data.get());
      EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), 0, nullptr), mjPOSSCOPE_BRANCH);
      EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), 1, nullptr), mjPOSSCOPE_RESTORING);
      mjtNum dense[4];
      mj_fullM(model.get(), data.get(), dense);
      ASSERT_EQ(dense[1], 0);
      for (int i = 0; i < 2; ++i) {
        mass[i] = dense[3*i];
        frc[i] = data->qfrc_smooth[i];
      }
      mj_step(model.get(), data.get());
      step[on].assign(data->qvel, data->qvel + model->nv);
    }
    qvel[integrator == mjINT_IMPLICITFAST] = step[1];

    // at rest: qvel = h f / pivot, with pivot m + h^2 kp on x only
    double ref[2] = {h*frc[0] / (mass[0] + h*h*kp), h*frc[1] / mass[1]};
    for (int i = 0; i < 2; ++i) {
      EXPECT_LE(RelErr(step[1][i], ref[i]), 1e-12) << "integrator " << integrator << " dof " << i;
    }

    // the flag acts on x (by a factor 1 + h^2 kp / m), not on y
    EXPECT_GT(RelErr(step[1][0], step[0][0]), 1e-3) << "integrator " << integrator;
    EXPECT_LE(RelErr(step[1][1], step[0][1]), 1e-12) << "integrator " << integrator;
  }
  for (int i = 0; i < model->nv; ++i) {
    EXPECT_NEAR(qvel[0][i], qvel[1][i], 1e-12*(1 + std::abs(qvel[1][i]))) << "dof " << i;
  }
}

// implicit and implicitfast coincide at zero velocity (no Coriolis derivative), with the
// tendon term in both the D pattern (qLU) and the lower M pattern (qH); each matches the dense
// solve, which the flag-off step misses
// Catches: K (joint or tendon servo) added to qLU but not to qH, or the reverse, or neither.
TEST_F(ImplicitPosTest, ArmImplicitMatchesImplicitFastAtRest) {
  MjModelPtr model = LoadModelFromString(kArm);
  ASSERT_THAT(model, NotNull());
  const std::vector<mjtNum> qpos = {0.3, 0, 0.8}, rest = {0, 0, 0}, ctrl = {0.2, 0.2, 0.2};
  std::vector<mjtNum> qvel[2];
  for (int integrator : {mjINT_IMPLICIT, mjINT_IMPLICITFAST}) {
    model->opt.integrator = integrator;
    SetFlag(model.get(), true);
    MjDataPtr data = MakeData(model);
    data->qpos[0] = 0.3;
    data->qpos[2] = 0.8;
    for (int i = 0; i < model->nu; ++i) data->ctrl[i] = 0.2;
    mj_step(model.get(), data.get());
    qvel[integrator == mjINT_IMPLICITFAST].assign(data->qvel, data->qvel + model->nv);

    // independent reference (at rest the Coriolis derivative of implicit is zero)
    EXPECT_LE(DenseStepError(model.get(), qpos, rest, ctrl), 1e-12) << "integrator " << integrator;
    SetFlag(model.get(), false);
    EXPECT_GT(DenseStepError(model.get(), qpos, rest, ctrl), 1e-3) << "integrator " << integrator;
  }
  for (int i = 0; i < model->nv; ++i) {
    EXPECT_NEAR(qvel[0][i], qvel[1][i], 1e-12*(1 + std::abs(qvel[1][i]))) << "dof " << i;
  }
}

// with the factorization reused (as in finite differencing), the right-hand side shift
// -h K v is still applied: skipping the factorization gives the same step. The shift matters
// (reusing the factorization without it gives another step), and so does the flag
// Catches: the shift -h K v missing or doubled when the factorization is reused.
TEST_F(ImplicitPosTest, ShiftAppliedWhenFactorizationReused) {
  MjModelPtr model = LoadModelFromString(kArm);
  ASSERT_THAT(model, NotNull());
  int nv = model->nv;
  for (int integrator : {mjINT_IMPLICIT, mjINT_IMPLICITFAST}) {
    model->opt.integrator = integrator;
    MjDataPtr full = MakeData(model);
    MjDataPtr skip = MakeData(model);
    MjDataPtr noshift = MakeData(model);
    MjDataPtr off = MakeData(model);
    SetFlag(model.get(), true);
    for (mjData* d : {full.get(), skip.get(), noshift.get(), off.get()}) {
      d->qpos[1] = 0.5;
      d->qvel[0] = 3.0;
      d->qvel[2] = -1.0;
      mj_forward(model.get(), d);
    }
    mj_implicitSkip(model.get(), full.get(), 0);

    // skip: reuse the factorization computed for the same state
    for (mjData* d : {skip.get(), noshift.get()}) {
      mju_copy(d->qLU, full->qLU, model->nD);
      mju_copy(d->qH, full->qH, model->nC);
      mju_copy(d->qHDiagInv, full->qHDiagInv, nv);
    }
    mj_implicitSkip(model.get(), skip.get(), 1);

    // flag off: the same reused factorization without the shift, and the stock step
    SetFlag(model.get(), false);
    mj_implicitSkip(model.get(), noshift.get(), 1);
    mj_implicitSkip(model.get(), off.get(), 0);
    double dshift = 0, dflag = 0;
    for (int i = 0; i < nv; ++i) {
      EXPECT_EQ(skip->qvel[i], full->qvel[i]) << "integrator " << integrator << " dof " << i;
      dshift = std::max(dshift, RelErr(noshift->qvel[i], full->qvel[i]));
      dflag = std::max(dflag, RelErr(off->qvel[i], full->qvel[i]));
    }
    EXPECT_GT(dshift, 1e-3) << "integrator " << integrator;
    EXPECT_GT(dflag, 1e-3) << "integrator " << integrator;
  }
}

// K is added into the D pattern (qLU) and the lower M pattern (qH) element by element; every
// element in scope is in the pattern of M, so one outside it is an error, not a silent drop that
// would leave the matrix and the shift -h K v in disagreement. A copy of the model has the pair
// (2, 1) of the tendon servo over j0 (dof 1) and j1 (dof 2) replaced by (2, 0) in row 2 of the
// D or M pattern, the row kept sorted
// Catches: an element of K outside the pattern dropped silently, under implicit or implicitfast.
TEST_F(ImplicitPosTest, PatternMissIsError) {
  static const char* xml = R"(
  <mujoco>
    <option gravity="0 0 0">
      <flag implicitpos="enable"/>
    </option>
    <worldbody>
      <body>
        <joint name="other" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -.3" size=".03"/>
      </body>
      <body pos="1 0 0">
        <joint name="j0" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
        <body pos=".3 0 0">
          <joint name="j1" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
        </body>
      </body>
    </worldbody>
    <tendon>
      <fixed name="t">
        <joint joint="j0" coef="1"/>
        <joint joint="j1" coef="-1"/>
      </fixed>
    </tendon>
    <actuator>
      <position tendon="t" kp="100"/>
    </actuator>
  </mujoco>
  )";
  MjModelPtr model = LoadModelFromString(xml);
  ASSERT_THAT(model, NotNull());
  ASSERT_EQ(model->nv, 3);
  MjDataPtr data = MakeData(model);
  data->qpos[1] = 0.3;
  data->qvel[2] = 1.0;
  mj_forward(model.get(), data.get());
  ASSERT_EQ(mjd_actuatorPosScope(model.get(), data.get(), 0, nullptr), mjPOSSCOPE_RESTORING);

  // intact patterns: no error, and K(2, 1) = kp * 1 * -1 is stored
  std::vector<mjtNum> kd(model->nD, 0), km(model->nM, 0);
  EXPECT_THAT(MjuErrorMessageFrom(mjd_implicitPos)(model.get(), data.get(), kd.data(), 1,
                                                    nullptr, 0), StrEq(""));
  EXPECT_THAT(MjuErrorMessageFrom(mjd_implicitPosM)(model.get(), data.get(), km.data(), 1,
                                                     nullptr, 0), StrEq(""));
  EXPECT_EQ(kd[model->D_rowadr[2]], -100);
  EXPECT_EQ(km[model->M_rowadr[2]], -100);

  // row 2 of each pattern, {1, 2}, made {0, 2} in a copy
  MjModelPtr bad_d(mj_copyModel(nullptr, model.get()));
  MjModelPtr bad_m(mj_copyModel(nullptr, model.get()));
  ASSERT_EQ(model->D_rownnz[2], 2);
  ASSERT_EQ(model->M_rownnz[2], 2);
  ASSERT_EQ(model->D_colind[model->D_rowadr[2]], 1);
  ASSERT_EQ(model->M_colind[model->M_rowadr[2]], 1);
  bad_d->D_colind[bad_d->D_rowadr[2]] = 0;
  bad_m->M_colind[bad_m->M_rowadr[2]] = 0;

  // direct calls, matrix and shift together
  const char* expected = "column 1 of K is outside the sparsity pattern of row 2";
  std::vector<mjtNum> shift(model->nv, 0);
  EXPECT_THAT(MjuErrorMessageFrom(mjd_implicitPos)(bad_d.get(), data.get(), kd.data(), 1,
                                                    shift.data(), 1), HasSubstr(expected));
  EXPECT_THAT(MjuErrorMessageFrom(mjd_implicitPosM)(bad_m.get(), data.get(), km.data(), 1,
                                                     shift.data(), 1), HasSubstr(expected));

  // one flag-on step: implicit factors qLU (D pattern), implicitfast qH (M pattern); the data
  // is made and reset with the intact model (mj_resetData checks D against B), which also clears
  // the stack frame left by the error
  bad_d->opt.integrator = mjINT_IMPLICIT;
  bad_m->opt.integrator = mjINT_IMPLICITFAST;
  for (mjModel* bad : {bad_d.get(), bad_m.get()}) {
    MjDataPtr step = MakeData(model);
    step->qpos[1] = 0.3;
    step->qvel[2] = 1.0;
    EXPECT_THAT(MjuErrorMessageFrom(mj_step)(bad, step.get()), HasSubstr(expected))
        << "integrator " << bad->opt.integrator;
    mj_resetData(model.get(), step.get());
  }
}

// ------------------------------- scope ---------------------------------------

// out of scope the flag changes nothing: Euler and RK4, a motor, a clamped force, a ball
// joint spring; in scope it does (the comparison can fail)
// Catches: the flag acting under Euler, RK4, a clamped servo or a ball spring, or not in scope.
TEST_F(ImplicitPosTest, BitIdenticalOutOfScope) {
  static const char* kBallSpring = R"(
  <mujoco>
    <worldbody>
      <body>
        <joint name="ball" type="ball" stiffness="50"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      </body>
    </worldbody>
    <actuator>
      <motor joint="ball" gear="1 0 0"/>
    </actuator>
  </mujoco>
  )";
  struct Case {
    std::string xml;
    int integrator;
    bool changes;
  };
  std::vector<Case> cases = {
    {OneHinge(1e4, kKv, 5e-3, "implicitfast"), mjINT_EULER, false},
    {OneHinge(1e4, kKv, 5e-3, "implicitfast"), mjINT_RK4, false},
    {OneHinge(1e4, kKv, 5e-3, "implicitfast", R"(forcelimited="true" forcerange="-1 1")"),
     mjINT_IMPLICITFAST, false},
    {OneHinge(1e4, kKv, 5e-3, "implicit", R"(forcelimited="true" forcerange="-1 1")"),
     mjINT_IMPLICIT, false},
    {kBallSpring, mjINT_IMPLICITFAST, false},
    {kBallSpring, mjINT_IMPLICIT, false},
    {OneHinge(1e4, kKv, 5e-3, "implicitfast"), mjINT_IMPLICITFAST, true},
    {OneHinge(1e4, kKv, 5e-3, "implicit"), mjINT_IMPLICIT, true},
  };
  for (const Case& c : cases) {
    MjModelPtr model = LoadModelFromString(c.xml);
    ASSERT_THAT(model, NotNull());
    model->opt.integrator = c.integrator;
    mjtNum qvel[2];
    for (bool on : {false, true}) {
      SetFlag(model.get(), on);
      MjDataPtr data = MakeData(model);
      data->qpos[0] = 0.3;
      data->qvel[0] = -2.0;
      data->ctrl[0] = 0.5;
      for (int t = 0; t < 3; ++t) mj_step(model.get(), data.get());
      qvel[on] = data->qvel[0];
    }
    if (c.changes) {
      EXPECT_NE(qvel[0], qvel[1]) << c.integrator;
    } else {
      EXPECT_EQ(qvel[0], qvel[1]) << c.integrator;
    }
  }
}

// two hinges with a fixed-tendon position servo over both (kp), and a separate hinge with a spring
// (stiffness), h = 5 ms, gravity on
std::string StiffArm(double kp, double stiffness) {
  char xml[2048];
  std::snprintf(xml, sizeof(xml), R"(
  <mujoco>
    <option timestep="5e-3" gravity="0 0 -9.81"/>
    <worldbody>
      <body>
        <joint name="j0" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
        <body pos=".3 0 0">
          <joint name="j1" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
        </body>
      </body>
      <body pos="0 1 0">
        <joint name="spring" axis="0 1 0" stiffness="%.17g"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      </body>
    </worldbody>
    <tendon>
      <fixed name="t">
        <joint joint="j0" coef="1"/>
        <joint joint="j1" coef="1"/>
      </fixed>
    </tendon>
    <actuator>
      <position tendon="t" kp="%.17g"/>
    </actuator>
  </mujoco>
  )", stiffness, kp);
  return xml;
}

// stiffness bound: a servo slope or a spring with h^2 * stiffness > mjMAXVAL is left explicit
// (NONRESTORING), as stock: a 1e300 tendon servo would leave M + h^2 K singular in the
// factorization. Just inside the bound (h^2 * stiffness = 1e9) both are in K and the flag acts.
// The servo is at its setpoint and the spring at rest, so that the stock step is finite.
// Catches: the bound missing for the actuators or the springs, or cutting below mjMAXVAL.
TEST_F(ImplicitPosTest, StiffnessBound) {
  const double h = 5e-3;
  for (double stiffness : {1e300, 1e9 / (h*h)}) {
    bool in_scope = stiffness*h*h <= mjMAXVAL;
    MjModelPtr model = LoadModelFromString(StiffArm(stiffness, stiffness));
    ASSERT_THAT(model, NotNull());
    ASSERT_EQ(model->opt.timestep, h);

    // scope of the servo, and K * qvel with a unit qvel (no step)
    SetFlag(model.get(), true);
    MjDataPtr data = MakeData(model);
    mj_forward(model.get(), data.get());
    mjtNum slope;
    EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), 0, &slope),
              in_scope ? mjPOSSCOPE_RESTORING : mjPOSSCOPE_NONRESTORING) << stiffness;
    EXPECT_EQ(slope, -stiffness);
    // tendon dofs: kp * (1 + 1), spring dof: stiffness
    int spring = model->jnt_dofadr[mj_name2id(model.get(), mjOBJ_JOINT, "spring")];
    std::vector<mjtNum> kv(model->nv, 0);
    for (int i = 0; i < model->nv; ++i) data->qvel[i] = 1;
    mjd_implicitPos(model.get(), data.get(), nullptr, 0, kv.data(), 1);
    for (int i = 0; i < model->nv; ++i) {
      double ref = in_scope ? (i == spring ? 1 : 2)*stiffness : 0;
      EXPECT_EQ(kv[i], ref) << "stiffness " << stiffness << " dof " << i;
    }

    // one step from rest: bit-identical to stock beyond the bound, changed by the flag inside
    for (int integrator : {mjINT_IMPLICIT, mjINT_IMPLICITFAST}) {
      model->opt.integrator = integrator;
      std::vector<mjtNum> qvel[2];
      for (bool on : {false, true}) {
        SetFlag(model.get(), on);
        MjDataPtr step = MakeData(model);
        mj_step(model.get(), step.get());
        qvel[on].assign(step->qvel, step->qvel + model->nv);
        for (mjtNum v : qvel[on]) EXPECT_TRUE(std::isfinite(v));
      }
      for (int i = 0; i < model->nv; ++i) {
        if (in_scope) {
          EXPECT_GT(RelErr(qvel[1][i], qvel[0][i]), 1e-3)
              << "integrator " << integrator << " dof " << i;
        } else {
          EXPECT_EQ(qvel[1][i], qvel[0][i]) << "integrator " << integrator << " dof " << i;
        }
      }
    }
  }
}

// the stiffness bound is inclusive: with h = 2^-8, h^2 * 6.5536e14 = mjMAXVAL exactly, and the
// tendon servo and the spring of StiffArm at that stiffness are both in K
// (no step: meant to pass with the hooks in mj_implicitSkip reverted)
// Catches: the bound h^2 |slope| <= mjMAXVAL (servo) or h^2 k <= mjMAXVAL (spring) made strict.
TEST_F(ImplicitPosTest, StiffnessBoundInclusive) {
  const double h = 0.00390625, stiffness = 655360000000000;
  ASSERT_EQ(stiffness*h*h, mjMAXVAL);
  MjModelPtr model = LoadModelFromString(StiffArm(stiffness, stiffness));
  ASSERT_THAT(model, NotNull());
  model->opt.timestep = h;
  MjDataPtr data = MakeData(model);
  mj_forward(model.get(), data.get());
  mjtNum slope;
  EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), 0, &slope), mjPOSSCOPE_RESTORING);
  EXPECT_EQ(slope, -stiffness);

  // K * qvel with a unit qvel: tendon dofs kp * (1 + 1), spring dof stiffness
  int spring = model->jnt_dofadr[mj_name2id(model.get(), mjOBJ_JOINT, "spring")];
  std::vector<mjtNum> kv(model->nv, 0);
  for (int i = 0; i < model->nv; ++i) data->qvel[i] = 1;
  mjd_implicitPos(model.get(), data.get(), nullptr, 0, kv.data(), 1);
  for (int i = 0; i < model->nv; ++i) {
    EXPECT_EQ(kv[i], (i == spring ? 1 : 2)*stiffness) << "dof " << i;
  }
}

// ActuatorScope's model, bodies and tendons: a hinge with a ball below it, a second tree, a
// fork (c1, c2 under c0), and a simple body with two slides
constexpr char kScopeBodies[] = R"(
  <mujoco>
    <worldbody>
      <site name="world"/>
      <body>
        <joint name="hinge"/>
        <geom size=".1"/>
        <site name="moving" pos=".1 .1 0"/>
        <body>
          <joint name="ball" type="ball"/>
          <geom size=".1"/>
        </body>
      </body>
      <body>
        <joint name="other"/>
        <geom size=".1"/>
      </body>
      <body pos="0 2 0">
        <joint name="c0"/>
        <geom size=".1"/>
        <body pos="0 0 .5">
          <joint name="c1"/>
          <geom size=".1"/>
        </body>
        <body pos="0 0 -.5">
          <joint name="c2"/>
          <geom size=".1"/>
        </body>
      </body>
      <body pos="0 -2 0">
        <joint name="x" type="slide" axis="1 0 0"/>
        <joint name="y" type="slide" axis="0 1 0"/>
        <geom size=".1"/>
      </body>
    </worldbody>
    <tendon>
      <fixed name="branch">
        <joint joint="hinge" coef="1"/>
        <joint joint="other" coef="1"/>
      </fixed>
      <fixed name="fork">
        <joint joint="c1" coef="1"/>
        <joint joint="c2" coef="1"/>
      </fixed>
      <fixed name="chain">
        <joint joint="c0" coef="1"/>
        <joint joint="c2" coef="-1"/>
      </fixed>
      <fixed name="withball">
        <joint joint="hinge" coef="1"/>
        <joint joint="ball" coef="1"/>
      </fixed>
      <spatial name="spatial">
        <site site="world"/>
        <site site="moving"/>
      </spatial>
      <fixed name="y">
        <joint joint="y" coef="2"/>
      </fixed>
      <fixed name="x">
        <joint joint="x" coef="1"/>
      </fixed>
    </tendon>
)";

// ActuatorScope's model, actuators: one of each kind of gain, bias, input and transmission
constexpr char kScopeActuators[] = R"(
    <actuator>
      <position name="servo" joint="hinge" kp="10"/>
      <motor name="motor" joint="hinge"/>
      <position name="clamped" joint="hinge" kp="10" forcelimited="true"
                forcerange="-1e-3 1e-3"/>
      <general name="user" joint="hinge" gaintype="user"/>
      <position name="ball" joint="ball" kp="10" gear="1 0 0"/>
      <position name="branch" tendon="branch" kp="10"/>
      <general name="posbias" joint="hinge" biastype="affine" biasprm="0 0.5 0"/>
      <pid name="pid" joint="hinge" kp="10" kv="1"/>
      <pid name="pid_integral" joint="hinge" kp="10" ki="1"/>
      <pid name="pid_early" joint="hinge" kp="10" ki="1"/>
      <general name="fixed_gain" joint="hinge" gainprm="1 5" biastype="affine"
               biasprm="0 -10 0"/>
      <general name="clip" joint="hinge" gaintype="affine" gainprm="0 1 0" biastype="affine"
               biasprm="0 -10 0" ctrllimited="true" ctrlrange="0.2 0.4"/>
      <general name="act" joint="hinge" dyntype="filter" dynprm="0.1" gaintype="affine"
               gainprm="0 1 0" biastype="affine" biasprm="0 -10 0"/>
      <general name="act_early" joint="hinge" dyntype="filter" dynprm="0.1" gaintype="affine"
               gainprm="0 1 0" biastype="affine" biasprm="0 -10 0" actearly="true"/>
      <pid name="pid_slew" joint="hinge" kp="10" slewmax="1"/>
      <position name="fork" tendon="fork" kp="10"/>
      <position name="chain" tendon="chain" kp="10"/>
      <position name="withball" tendon="withball" kp="10"/>
      <position name="spatial" tendon="spatial" kp="10"/>
      <position name="tendon_y" tendon="y" kp="10"/>
      <position name="tendon_x" tendon="x" kp="10"/>
      <position name="inparent" jointinparent="hinge" kp="10"/>
    </actuator>
  </mujoco>
)";

// each actuator of ActuatorScope: its scope and its slope biasprm[1] (0 without an affine bias);
// clip, act and act_early add gainprm[1] = 1 times their input
struct ScopeCase {
  const char* name;
  int scope;
  double slope;
};
constexpr ScopeCase kScopeCases[] = {
  {"servo",        mjPOSSCOPE_RESTORING,     -10},
  {"motor",        mjPOSSCOPE_ZERO,            0},
  {"clamped",      mjPOSSCOPE_CLAMPED,       -10},
  {"user",         mjPOSSCOPE_GAINBIAS,        0},
  {"ball",         mjPOSSCOPE_TRANSMISSION,  -10},
  {"branch",       mjPOSSCOPE_BRANCH,        -10},  // hinges on two trees
  {"posbias",      mjPOSSCOPE_NONRESTORING,  0.5},
  {"pid",          mjPOSSCOPE_RESTORING,     -10},
  {"pid_integral", mjPOSSCOPE_RESTORING,     -10},
  {"pid_early",    mjPOSSCOPE_GAINBIAS,      -10},  // integral read early
  {"fixed_gain",   mjPOSSCOPE_RESTORING,     -10},  // gainprm[1] unused
  {"clip",         mjPOSSCOPE_RESTORING,     -10},
  {"act",          mjPOSSCOPE_RESTORING,     -10},
  {"act_early",    mjPOSSCOPE_RESTORING,     -10},
  {"pid_slew",     mjPOSSCOPE_RESTORING,     -10},  // slew state read early, no integral
  {"fork",         mjPOSSCOPE_BRANCH,        -10},  // c1, c2: siblings
  {"chain",        mjPOSSCOPE_RESTORING,     -10},
  {"withball",     mjPOSSCOPE_TRANSMISSION,  -10},  // a ball joint, though on one chain
  {"spatial",      mjPOSSCOPE_TRANSMISSION,  -10},
  {"tendon_y",     mjPOSSCOPE_RESTORING,     -10},  // one dof of a simple body
  {"tendon_x",     mjPOSSCOPE_RESTORING,     -10},
  {"inparent",     mjPOSSCOPE_RESTORING,     -10},
};

// the scope verdict and slope of each kind of actuator, and with actuation disabled
// (no step: meant to pass with the hooks in mj_implicitSkip reverted)
// Catches: a wrong scope verdict or slope for a kind of actuator gain, bias, input or transmission.
TEST_F(ImplicitPosTest, ActuatorScope) {
  MjModelPtr model = LoadModelFromString(std::string(kScopeBodies) + kScopeActuators);
  ASSERT_THAT(model, NotNull());
  ASSERT_EQ(model->nactuator, sizeof(kScopeCases)/sizeof(kScopeCases[0]));
  auto id = [&](const char* name) {
    return mj_name2id(model.get(), mjOBJ_ACTUATOR, name);
  };
  const int clip = id("clip"), act = id("act"), act_early = id("act_early");

  // pid_early reads its integral early: the next integral state depends on the length; pid_slew
  // reads its slew-rate state early, with no integral (ki = 0)
  model->actuator_actearly[id("pid_early")] = 1;
  model->actuator_actearly[id("pid_slew")] = 1;
  ASSERT_GT(model->actuator_actnum[id("pid_slew")], 0);
  MjDataPtr data = MakeData(model);
  data->qpos[0] = 0.5;
  for (int k = 0; k < model->nu; ++k) data->ctrl[k] = 0.3;
  for (int k = 0; k < model->na; ++k) data->act[k] = 0.05*(k + 1);

  // slope = biasprm[1] (+ gainprm[1] * input for an affine gain): the clipped ctrl, the
  // activation, or the next activation if actearly
  for (double ctrl : {0.1, 0.3, 0.5}) {
    data->ctrl[model->actuator_ctrladr[clip]] = ctrl;
    mj_forward(model.get(), data.get());
    for (const ScopeCase& c : kScopeCases) {
      int i = id(c.name);
      ASSERT_GE(i, 0) << c.name;
      mjtNum slope;
      EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), i, &slope), c.scope) << c.name;
      double ref = c.slope;
      int adr = model->actuator_actadr[i];
      if (i == clip) ref += std::clamp(ctrl, 0.2, 0.4);
      if (i == act) ref += data->act[adr];
      if (i == act_early) ref += data->act[adr] + model->opt.timestep*data->act_dot[adr];
      EXPECT_NEAR(slope, ref, 1e-12) << c.name << " ctrl " << ctrl;
    }
  }

  // unclamped with clampctrl disabled; a bad control (servo's) zeroes all controls, and so the
  // input
  mjtNum slope;
  model->opt.disableflags |= mjDSBL_CLAMPCTRL;
  mjd_actuatorPosScope(model.get(), data.get(), clip, &slope);
  EXPECT_EQ(slope, -10 + 0.5);
  data->ctrl[model->actuator_ctrladr[id("servo")]] = std::numeric_limits<double>::quiet_NaN();
  mjd_actuatorPosScope(model.get(), data.get(), clip, &slope);
  EXPECT_EQ(slope, -10);

  model->opt.disableflags |= mjDSBL_ACTUATION;
  EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), id("servo"), nullptr),
            mjPOSSCOPE_DISABLED);
}

// many affine-gain servos (slope -10 + input) and a control that is bad after clamping: every
// input is zero in K, as all controls are in mj_fwdActuation, wherever the bad control is; a
// huge control on a limited actuator is clamped, not bad, unless clamping is disabled; the
// verdict is found anew on each pass (a good control again gives back the inputs). Checked on
// the shift K * qvel (D and M entry points), the diagonal of K and the reported slope, and by a
// flag-on step that equals the step with all controls zero
// Catches: the bad-control verdict cached across passes, taken from the actuator's own control
// only, without clamping, or a bad control not zeroing the input of the other actuators.
TEST_F(ImplicitPosTest, ManyActuatorsBadControl) {
  const int n = 12;
  std::string xml = R"(<mujoco><option gravity="0 0 0"/><worldbody>)";
  std::string actuators;
  for (int i = 0; i < n; ++i) {
    std::string name = "j" + std::to_string(i);
    xml += "<body pos=\"" + std::to_string(i) + " 0 0\"><joint name=\"" + name +
           "\"/><geom size=\".1\"/></body>";
    actuators += "<general joint=\"" + name + "\" gaintype=\"affine\" gainprm=\"0 1 0\" "
                 "biastype=\"affine\" biasprm=\"0 -10 0\"" +
                 (i % 2 ? "" : " ctrllimited=\"true\" ctrlrange=\"0 1\"") + "/>";
  }
  xml += "</worldbody><actuator>" + actuators + "</actuator></mujoco>";
  MjModelPtr model = LoadModelFromString(xml);
  ASSERT_THAT(model, NotNull());
  ASSERT_EQ(model->nu, n);
  ASSERT_EQ(model->nv, n);
  MjDataPtr data = MakeData(model);
  for (int i = 0; i < n; ++i) {
    data->ctrl[i] = 0.05*i;
    data->qvel[i] = 1;
  }
  mj_forward(model.get(), data.get());

  // each pass: the controls 0.05 i but control k, and whether all inputs are zeroed (the mjd_*
  // functions read d->ctrl, no mj_forward needed: no clamps)
  const double kNaN = std::numeric_limits<double>::quiet_NaN(), kHuge = 1e20;
  struct Case {
    int k;
    double ctrl;
    bool clampctrl;
    bool bad;
  };
  std::vector<Case> cases = {
    {0, 0, true, false},            // all good
    {n - 1, kNaN, true, true},      // the last control bad: also zeroes the ones before it
    {0, kNaN, true, true},          // the first control bad
    {n - 2, kHuge, true, false},    // limited: clamped to 1
    {n - 1, kHuge, true, true},     // unlimited: bad
    {n - 2, kHuge, false, true},    // limited, clamping disabled: bad
    {0, 0, true, false},            // all good again
  };
  for (const Case& c : cases) {
    for (int i = 0; i < n; ++i) data->ctrl[i] = 0.05*i;
    data->ctrl[c.k] = c.ctrl;
    if (c.clampctrl) {
      model->opt.disableflags &= ~mjDSBL_CLAMPCTRL;
    } else {
      model->opt.disableflags |= mjDSBL_CLAMPCTRL;
    }
    std::vector<mjtNum> shift(n, 0), shift_m(n, 0);
    mjd_implicitPos(model.get(), data.get(), nullptr, 0, shift.data(), 1);
    mjd_implicitPosM(model.get(), data.get(), nullptr, 0, shift_m.data(), 1);
    std::vector<mjtNum> dense = DenseK(model.get(), data.get());
    for (int i = 0; i < n; ++i) {
      double input = c.bad ? 0 : i % 2 ? data->ctrl[i] : std::clamp(data->ctrl[i], 0.0, 1.0);
      std::string where = "control " + std::to_string(c.k) + " = " + std::to_string(c.ctrl) +
                          ", actuator and dof " + std::to_string(i);
      mjtNum slope;
      EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), i, &slope), mjPOSSCOPE_RESTORING)
          << where;
      EXPECT_EQ(slope, -10 + input) << where;
      EXPECT_EQ(shift[i], 10 - input) << where;
      EXPECT_EQ(shift_m[i], 10 - input) << where;
      EXPECT_EQ(dense[i*n + i], 10 - input) << where;
    }
  }
  model->opt.disableflags &= ~mjDSBL_CLAMPCTRL;

  // flag-on step with the last control bad equals the step with all controls zero
  mock_warning_handler.ExpectWarnings("CTRL");
  SetFlag(model.get(), true);
  for (int integrator : {mjINT_IMPLICIT, mjINT_IMPLICITFAST}) {
    model->opt.integrator = integrator;
    std::vector<mjtNum> qvel[2];
    for (bool bad : {false, true}) {
      MjDataPtr step = MakeData(model);
      for (int i = 0; i < n; ++i) {
        step->qpos[i] = 0.1*i;
        step->qvel[i] = 1;
      }
      if (bad) {
        for (int i = 0; i < n; ++i) step->ctrl[i] = 0.05*i;
        step->ctrl[n - 1] = kNaN;
      }
      mj_step(model.get(), step.get());
      qvel[bad].assign(step->qvel, step->qvel + n);
    }
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(qvel[1][i], qvel[0][i]) << "integrator " << integrator << " dof " << i;
    }
  }
}

// a force that is not affine in the length reports no slope, even with an affine bias: a user
// gain, and a position servo made a plugin actuator (set by hand, after mj_forward) with the
// first plugin id, 0
// (no step: meant to pass with the hooks in mj_implicitSkip reverted)
// Catches: plugin id 0 taken for "no plugin", or the bias slope reported for a non-affine force.
TEST_F(ImplicitPosTest, NonAffineActuatorNoSlope) {
  static const char* xml = R"(
  <mujoco>
    <worldbody>
      <body>
        <joint name="hinge"/>
        <geom size=".1"/>
      </body>
    </worldbody>
    <actuator>
      <position joint="hinge" kp="10"/>
      <general joint="hinge" gaintype="user" biastype="affine" biasprm="0 -10 0"/>
    </actuator>
  </mujoco>
  )";
  MjModelPtr model = LoadModelFromString(xml);
  ASSERT_THAT(model, NotNull());
  MjDataPtr data = MakeData(model);
  data->qpos[0] = 0.5;
  mj_forward(model.get(), data.get());
  mjtNum slope;
  EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), 0, &slope), mjPOSSCOPE_RESTORING);
  EXPECT_EQ(slope, -10);
  EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), 1, &slope), mjPOSSCOPE_GAINBIAS);
  EXPECT_EQ(slope, 0);

  // the servo as the actuator of plugin 0
  model->actuator_plugin[0] = 0;
  EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), 0, &slope), mjPOSSCOPE_GAINBIAS);
  EXPECT_EQ(slope, 0);
  model->actuator_plugin[0] = -1;
}

// a delayed input (delay, nsample) is out of scope only for an affine gain with a length term
// (gainprm[1]); a delayed position servo, and a delayed fixed gain whose gainprm[1] is set (a
// fixed gain does not read it), stay in scope
// (no step: meant to pass with the hooks in mj_implicitSkip reverted)
// Catches: the delay judged on the wrong gain type or gain parameter.
TEST_F(ImplicitPosTest, DelayedInputScope) {
  static const char* xml = R"(
  <mujoco>
    <worldbody>
      <body>
        <joint name="hinge"/>
        <geom size=".1"/>
      </body>
    </worldbody>
    <actuator>
      <position joint="hinge" kp="10" delay="0.004" nsample="2"/>
      <general joint="hinge" gaintype="affine" gainprm="0 1 0" biastype="affine"
               biasprm="0 -10 0" delay="0.004" nsample="2"/>
      <general joint="hinge" gainprm="1 5" biastype="affine" biasprm="0 -10 0" delay="0.004"
               nsample="2"/>
    </actuator>
  </mujoco>
  )";
  MjModelPtr model = LoadModelFromString(xml);
  ASSERT_THAT(model, NotNull());
  MjDataPtr data = MakeData(model);
  data->qpos[0] = 0.5;
  for (int k = 0; k < model->nu; ++k) data->ctrl[k] = 0.3;
  mj_forward(model.get(), data.get());
  int expected[] = {mjPOSSCOPE_RESTORING, mjPOSSCOPE_GAINBIAS, mjPOSSCOPE_RESTORING};
  ASSERT_EQ(model->nactuator, sizeof(expected)/sizeof(int));
  for (int i = 0; i < model->nactuator; ++i) {
    ASSERT_GT(model->actuator_delay[i], 0) << "actuator " << i;
    EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), i, nullptr), expected[i])
        << "actuator " << i;
  }
}

// the joint's and the tendon's actuatorfrcrange clamp the force like forcerange: out of scope
// while on the bound, in scope inside it. Actuator i is on its bound for q > q_i: lower and
// upper bounds, of joints, tendons and actuators that are not first in their arrays
// (no step: meant to pass with the hooks in mj_implicitSkip reverted)
// Catches: a forcerange or actuatorfrcrange clamp missed, or seen inside the range.
TEST_F(ImplicitPosTest, ActuatorForceRangeClamps) {
  static const char* xml = R"(
  <mujoco>
    <worldbody>
      <body pos="2 0 0">
        <joint name="j3"/>
        <geom size=".1"/>
      </body>
      <body>
        <joint name="j0" actuatorfrcrange="-1 1"/>
        <geom size=".1"/>
        <body pos="0 0 .5">
          <joint name="j1"/>
          <geom size=".1"/>
        </body>
      </body>
      <body pos="1 0 0">
        <joint name="j2" actuatorfrcrange="-3 1"/>
        <geom size=".1"/>
      </body>
      <body pos="3 0 0">
        <joint name="j4"/>
        <geom size=".1"/>
      </body>
      <body pos="4 0 0">
        <joint name="j5"/>
        <geom size=".1"/>
        <body pos="0 0 .5">
          <joint name="j6" actuatorfrcrange="-1 1"/>
          <geom size=".1"/>
        </body>
      </body>
    </worldbody>
    <tendon>
      <fixed name="t0">
        <joint joint="j4" coef="1"/>
      </fixed>
      <fixed name="t" actuatorfrclimited="true" actuatorfrcrange="-2 3">
        <joint joint="j1" coef="1"/>
      </fixed>
      <fixed name="t2" actuatorfrclimited="true" actuatorfrcrange="-3 2">
        <joint joint="j3" coef="-1"/>
      </fixed>
      <fixed name="t3">
        <joint joint="j5" coef="1"/>
        <joint joint="j6" coef="1"/>
      </fixed>
    </tendon>
    <actuator>
      <position tendon="t" kp="10"/>
      <position tendon="t" kp="7"/>
      <position joint="j2" kp="10"/>
      <position joint="j0" kp="10"/>
      <position joint="j3" kp="10" forcelimited="true" forcerange="-1 2"/>
      <position joint="j4" kp="10" forcelimited="true" forcerange="-2 1"/>
      <position tendon="t2" kp="10"/>
      <position tendon="t3" kp="5"/>
    </actuator>
  </mujoco>
  )";
  MjModelPtr model = LoadModelFromString(xml);
  ASSERT_THAT(model, NotNull());
  MjDataPtr data = MakeData(model);

  // qpos of each joint at q: sign +1 pushes the force to the lower bound, -1 to the upper
  const char* joint[] = {"j0", "j1", "j2", "j3", "j4", "j5", "j6"};
  const double sign[] = {1, 1, -1, 1, -1, 1, 1};

  // q_i: the tendon t (-17 q on -2), the joints (10 q on 1), the tendon t2 (10 q on 2), the
  // tendon t3 over two joints, the second limited (-5 * 2q on -1)
  const double bound[] = {2.0/17, 2.0/17, 0.1, 0.1, 0.1, 0.1, 0.2, 0.1};
  ASSERT_EQ(model->nactuator, sizeof(bound)/sizeof(double));

  // the tendon's forces are scaled onto its bound, which their sum meets up to rounding
  for (double q : {0.05, 0.11, 0.115, 0.15, 0.5, 0.67, 0.83, 1.37, 2.9}) {
    for (int j = 0; j < 7; ++j) {
      data->qpos[model->jnt_qposadr[mj_name2id(model.get(), mjOBJ_JOINT, joint[j])]] = sign[j]*q;
    }
    mj_forward(model.get(), data.get());
    for (int i = 0; i < model->nactuator; ++i) {
      int expected = q > bound[i] ? mjPOSSCOPE_CLAMPED : mjPOSSCOPE_RESTORING;
      EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), i, nullptr), expected)
          << "q=" << q << " actuator " << i;
    }
  }
}

// a servo on a tendon with actuatorfrcrange reads its tendon's total force, which the pass finds
// once on the stack: the step, under both integrators, and the scope query free what they took
// Catches: a pass that marks the stack and does not free it.
TEST_F(ImplicitPosTest, TendonForceStackFreed) {
  static const char* xml = R"(
  <mujoco>
    <option>
      <flag implicitpos="enable"/>
    </option>
    <worldbody>
      <body>
        <joint name="j0"/>
        <geom size=".1"/>
        <body pos="0 0 .5">
          <joint name="j1"/>
          <geom size=".1"/>
        </body>
      </body>
    </worldbody>
    <tendon>
      <fixed name="t" actuatorfrclimited="true" actuatorfrcrange="-100 100">
        <joint joint="j0" coef="1"/>
        <joint joint="j1" coef="1"/>
      </fixed>
    </tendon>
    <actuator>
      <position tendon="t" kp="10"/>
      <position tendon="t" kp="5"/>
    </actuator>
  </mujoco>
  )";
  MjModelPtr model = LoadModelFromString(xml);
  ASSERT_THAT(model, NotNull());
  MjDataPtr data = MakeData(model);

  for (int integrator : {mjINT_IMPLICIT, mjINT_IMPLICITFAST}) {
    model->opt.integrator = integrator;
    mj_resetData(model.get(), data.get());
    data->ctrl[0] = data->ctrl[1] = 0.1;
    size_t pstack = data->pstack;
    for (int k = 0; k < 3; ++k) {
      mj_step(model.get(), data.get());
      EXPECT_EQ(data->pstack, pstack) << "integrator " << integrator << ", step " << k;
    }
    for (int i = 0; i < model->nactuator; ++i) {
      EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), i, nullptr), mjPOSSCOPE_RESTORING);
      EXPECT_EQ(data->pstack, pstack) << "integrator " << integrator << ", actuator " << i;
    }
  }
}

// site transmissions: in scope only with a refsite on the site's chain, translational gear and
// hinges or slides between them; out of scope the flag changes nothing. The multi-output
// orientation actuator first shifts the output (gear) rows of the others. Sites and refsites on
// the world, on one body and across a fork
// Catches: a wrong site verdict, or the flag acting on out-of-scope sites or not on in-scope ones.
TEST_F(ImplicitPosTest, SiteScope) {
  static const char* xml = R"(
  <mujoco>
    <option integrator="implicitfast"/>
    <worldbody>
      <site name="origin"/>
      <body>
        <joint name="j0" axis="0 1 0"/>
        <geom size=".1"/>
        <site name="s0" pos="0 0 .2"/>
        <site name="s0b" pos="0 .1 .2"/>
        <body pos="0 0 .5">
          <joint name="j1" axis="0 1 0"/>
          <geom size=".1"/>
          <site name="s1" pos="0 0 .3"/>
          <body pos="0 0 .5">
            <joint name="ball" type="ball"/>
            <geom size=".1"/>
            <site name="s2" pos="0 0 .3"/>
          </body>
        </body>
      </body>
      <body pos="1 0 0">
        <joint name="other" axis="0 1 0"/>
        <geom size=".1"/>
        <site name="s3" pos="0 0 .3"/>
      </body>
      <body pos="2 0 0">
        <joint name="p" axis="0 1 0"/>
        <geom size=".1"/>
        <site name="sp" pos="0 0 .2"/>
        <body pos="0 0 .5">
          <joint name="q" axis="0 1 0"/>
          <geom size=".1"/>
        </body>
        <body pos="0 0 -.5">
          <joint name="r" axis="0 1 0"/>
          <geom size=".1"/>
          <site name="sr" pos="0 0 .3"/>
        </body>
      </body>
    </worldbody>
    <actuator>
      <orientation group="2" joint="ball" kp="10"/>
      <position group="1" site="s1" refsite="s0" gear="1 0 0 0 0 0" kp="10"/>
      <position group="1" site="s1" refsite="origin" gear="1 0 0 0 0 0" kp="10"/>
      <position group="2" site="s1" refsite="s0" gear="1 0 0 0 0 1" kp="10"/>
      <position group="2" site="s1" gear="1 0 0 0 0 0" kp="10"/>
      <position group="2" site="s0" refsite="s1" gear="1 0 0 0 0 0" kp="10"/>
      <position group="2" site="s3" refsite="s1" gear="1 0 0 0 0 0" kp="10"/>
      <position group="2" site="s2" refsite="s0" gear="1 0 0 0 0 0" kp="10"/>
      <position group="2" site="origin" refsite="s0" gear="1 0 0 0 0 0" kp="10"/>
      <position group="1" site="s3" refsite="origin" gear="1 0 0 0 0 0" kp="10"/>
      <position group="2" site="s3" refsite="s0" gear="1 0 0 0 0 0" kp="10"/>
      <position group="1" site="s0" refsite="s0b" gear="1 0 0 0 0 0" kp="10"/>
      <position group="1" site="sr" refsite="sp" gear="1 0 0 0 0 0" kp="10"/>
    </actuator>
  </mujoco>
  )";
  MjModelPtr model = LoadModelFromString(xml);
  ASSERT_THAT(model, NotNull());
  MjDataPtr data = MakeData(model);
  data->qpos[0] = 0.5;
  data->qpos[1] = -0.3;
  mj_forward(model.get(), data.get());
  int expected[] = {mjPOSSCOPE_TRANSMISSION, mjPOSSCOPE_RESTORING, mjPOSSCOPE_RESTORING,
                    mjPOSSCOPE_TRANSMISSION, mjPOSSCOPE_TRANSMISSION, mjPOSSCOPE_BRANCH,
                    mjPOSSCOPE_BRANCH, mjPOSSCOPE_TRANSMISSION, mjPOSSCOPE_BRANCH,
                    mjPOSSCOPE_RESTORING, mjPOSSCOPE_BRANCH, mjPOSSCOPE_RESTORING,
                    mjPOSSCOPE_RESTORING};
  ASSERT_EQ(model->nactuator, sizeof(expected)/sizeof(int));
  for (int i = 0; i < model->nactuator; ++i) {
    EXPECT_EQ(mjd_actuatorPosScope(model.get(), data.get(), i, nullptr), expected[i])
        << "actuator " << i;
  }

  // only the out-of-scope actuators (group 1 disabled): bit-identical; only the in-scope ones
  // (group 2 disabled): different
  for (bool in_scope : {false, true}) {
    model->opt.disableactuator = in_scope ? 1 << 2 : 1 << 1;
    std::vector<mjtNum> qvel[2];
    for (bool on : {false, true}) {
      SetFlag(model.get(), on);
      MjDataPtr d = MakeData(model);
      d->qpos[0] = 0.5;
      d->qpos[1] = -0.3;
      for (int i = 0; i < model->nactuator; ++i) d->ctrl[i] = 0.1;
      for (int t = 0; t < 3; ++t) mj_step(model.get(), d.get());
      qvel[on].assign(d->qvel, d->qvel + model->nv);
    }
    if (in_scope) {
      EXPECT_NE(qvel[0], qvel[1]);
    } else {
      EXPECT_EQ(qvel[0], qvel[1]);
    }
  }
}

// ------------------------------- sleeping and flex ---------------------------

// with the flag, sleeping does not affect awake trees: upstream's smooth sleep model (hinge and
// slide springs, in scope) with a hinge servo added rolled out with and without sleeping gives
// identical awake states. The sleep filters of K change only the rows of sleeping dofs, which a
// step does not use, so they do not show here (SleepingTreeOutOfK, FallenAsleepServoOutOfK do)
// Catches: K or its shift left out on awake trees while others sleep, or a no-op flag.
TEST_F(ImplicitPosTest, WakingUnaffectedBySleeping) {
  const std::string xml_path = GetTestDataFilePath("engine/testdata/sleep/smooth.xml");
  char error[1024];
  mjSpec* spec = mj_parseXML(xml_path.c_str(), nullptr, error, sizeof(error));
  ASSERT_THAT(spec, NotNull()) << error;

  // a position servo on the first hinge, so that awake actuators are in K too
  mjsElement* hinge = mjs_firstElement(spec, mjOBJ_JOINT);
  while (hinge && mjs_asJoint(hinge)->type != mjJNT_HINGE) {
    hinge = mjs_nextElement(spec, hinge);
  }
  ASSERT_THAT(hinge, NotNull());
  mjs_setName(hinge, "servo");
  mjsActuator* servo = mjs_addActuator(spec, nullptr);
  servo->trntype = mjTRN_JOINT;
  mjs_setString(servo->target, "servo");
  EXPECT_THAT(mjs_setToPosition(servo, 2, nullptr, nullptr, nullptr, 0), StrEq(""));
  MjModelPtr model = MjModelPtr(mj_compile(spec, nullptr));
  mj_deleteSpec(spec);
  ASSERT_THAT(model, NotNull());
  ASSERT_EQ(model->nu, 1);
  mjModel* m = model.get();
  int duration_id = mj_name2id(m, mjOBJ_NUMERIC, "duration");
  ASSERT_GE(duration_id, 0);
  mjtNum duration = m->numeric_data[m->numeric_adr[duration_id]];

  for (int integrator : {mjINT_IMPLICITFAST, mjINT_IMPLICIT}) {
    m->opt.integrator = integrator;
    SetFlag(m, true);
    m->opt.enableflags |= mjENBL_SLEEP;
    MjDataPtr d_sleep = MakeData(model);
    m->opt.enableflags &= ~mjENBL_SLEEP;
    MjDataPtr d_nosleep = MakeData(model);
    MjDataPtr d_off = MakeData(model);

    int min_awake = m->nbody;
    bool flag_changes = false;
    while (d_nosleep->time < duration) {
      m->opt.enableflags |= mjENBL_SLEEP;
      mj_step(m, d_sleep.get());
      m->opt.enableflags &= ~mjENBL_SLEEP;
      mj_step(m, d_nosleep.get());
      SetFlag(m, false);
      mj_step(m, d_off.get());
      SetFlag(m, true);
      min_awake = std::min(min_awake, d_sleep->nbody_awake);

      // awake dofs: identical velocity and position
      for (int i = 0; i < d_sleep->nv_awake; ++i) {
        int j = d_sleep->dof_awake_ind[i];
        ASSERT_EQ(d_sleep->qvel[j], d_nosleep->qvel[j])
            << "integrator " << integrator << " dof " << j << " at " << d_sleep->time;
        flag_changes |= d_off->qvel[j] != d_nosleep->qvel[j];
      }
      for (int j = 0; j < m->njnt; ++j) {
        if (d_sleep->body_awake[m->jnt_bodyid[j]] != mjS_AWAKE) continue;
        int adr = m->jnt_qposadr[j];
        int num = m->jnt_type[j] == mjJNT_FREE ? 7 : m->jnt_type[j] == mjJNT_BALL ? 4 : 1;
        for (int k = adr; k < adr + num; ++k) {
          ASSERT_EQ(d_sleep->qpos[k], d_nosleep->qpos[k]) << "integrator " << integrator;
        }
      }
    }

    // the comparison is not vacuous: trees did sleep, and the flag acted on this model
    EXPECT_LT(min_awake, m->nbody) << "integrator " << integrator;
    EXPECT_TRUE(flag_changes) << "integrator " << integrator;
  }
}

// K of a tree initialized asleep (a hinge spring and a servo) is left out, the awake tree's
// (spring and servo) is kept; contacts stay enabled, as mjENBL_SLEEP has the bit value of
// mjDSBL_CONTACT
// (no step: meant to pass with the hooks in mj_implicitSkip reverted)
// Catches: the springs' sleep filter missing, or reading the sleep bit from disableflags.
TEST_F(ImplicitPosTest, SleepingTreeOutOfK) {
  static const char* xml = R"(
  <mujoco>
    <option gravity="0 0 0">
      <flag sleep="enable"/>
    </option>
    <worldbody>
      <body sleep="init">
        <joint axis="0 1 0" stiffness="50"/>
        <geom size=".1"/>
        <body pos="0 0 .5">
          <joint name="a1" axis="0 1 0"/>
          <geom size=".1"/>
        </body>
      </body>
      <body pos="2 0 0">
        <joint name="b0" axis="0 1 0" stiffness="50"/>
        <geom size=".1"/>
      </body>
    </worldbody>
    <actuator>
      <position joint="a1" kp="100"/>
      <position joint="b0" kp="100"/>
    </actuator>
  </mujoco>
  )";
  MjModelPtr model = LoadModelFromString(xml);
  ASSERT_THAT(model, NotNull());
  ASSERT_EQ(model->opt.disableflags & mjDSBL_CONTACT, 0);
  MjDataPtr data = MakeData(model);
  mj_forward(model.get(), data.get());
  ASSERT_EQ(data->ntree_awake, 1);
  int nv = model->nv;
  std::vector<mjtNum> dense = DenseK(model.get(), data.get());
  for (int r = 0; r < nv; ++r) {
    for (int c = 0; c < nv; ++c) {
      bool awake = data->tree_awake[model->dof_treeid[r]];
      EXPECT_EQ(dense[r*nv + c], r == c && awake ? 150 : 0) << "row " << r << " col " << c;
    }
  }
}

// a tree that falls asleep in mj_step keeps the moment row its servo got in that step's
// position stage: K taken right after that step (no mj_forward) leaves that servo out, and
// keeps the servo of the tree kept awake
// Catches: the actuators' sleep filter missing, or reading the sleep bit from disableflags.
TEST_F(ImplicitPosTest, FallenAsleepServoOutOfK) {
  static const char* xml = R"(
  <mujoco>
    <option gravity="0 0 0">
      <flag sleep="enable"/>
    </option>
    <worldbody>
      <body sleep="allowed">
        <joint name="a0" axis="0 1 0"/>
        <geom size=".1"/>
      </body>
      <body pos="2 0 0">
        <joint name="b0" axis="0 1 0"/>
        <geom size=".1"/>
      </body>
    </worldbody>
    <actuator>
      <position joint="a0" kp="100"/>
      <position joint="b0" kp="100"/>
    </actuator>
  </mujoco>
  )";
  MjModelPtr model = LoadModelFromString(xml);
  ASSERT_THAT(model, NotNull());
  MjDataPtr data = MakeData(model);
  data->qvel[1] = 1;
  for (int t = 0; t < 10000 && data->tree_awake[0]; ++t) mj_step(model.get(), data.get());
  ASSERT_FALSE(data->tree_awake[0]);
  ASSERT_TRUE(data->tree_awake[1]);
  ASSERT_GT(data->moment_rownnz[0], 0);
  std::vector<mjtNum> dense = DenseK(model.get(), data.get());
  EXPECT_EQ(dense[0], 0);
  EXPECT_EQ(dense[3], 100);
}

// on the flex CG path (mj_flexCG) the solver's qacc is used and the flag has no effect; with the
// Newton solver the same model leaves that path and the flag acts on the hinge servo
// Catches: the flag acting on the flex CG path (qacc from the solver), or not acting off it.
TEST_F(ImplicitPosTest, FlexCGNoEffect) {
  static const char* xml = R"(
  <mujoco>
    <option gravity="0 0 -9.81" timestep="0.002" integrator="implicitfast" solver="CG"/>
    <worldbody>
      <flexcomp name="flex" type="grid" count="3 3 3" spacing="0.1 0.1 0.1" pos="0 0 1"
                radius="0.01" dim="3" mass="1" dof="trilinear">
        <contact selfcollide="none" contype="0" conaffinity="0"/>
        <elasticity young="1e3" poisson="0.3" damping="1"/>
      </flexcomp>
      <body pos="2 0 0">
        <joint name="hinge" axis="0 1 0" stiffness="20"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03" contype="0" conaffinity="0"/>
      </body>
    </worldbody>
    <actuator>
      <position joint="hinge" kp="300" kv="0.1"/>
    </actuator>
  </mujoco>
  )";
  char error[1024];
  MjModelPtr model = LoadModelFromString(xml, error, sizeof(error));
  ASSERT_THAT(model, NotNull()) << error;
  int hinge = model->jnt_dofadr[mj_name2id(model.get(), mjOBJ_JOINT, "hinge")];
  for (int solver : {mjSOL_CG, mjSOL_NEWTON}) {
    model->opt.solver = solver;
    std::vector<mjtNum> qpos[2], qvel[2];
    for (bool on : {false, true}) {
      SetFlag(model.get(), on);
      MjDataPtr data = MakeData(model);
      data->qpos[model->jnt_qposadr[model->dof_jntid[hinge]]] = 0.3;
      data->ctrl[0] = -0.2;

      // the effective metric of the flex CG path is active with CG only
      mj_forward(model.get(), data.get());
      EXPECT_EQ(data->efm_active, solver == mjSOL_CG);
      for (int t = 0; t < 5; ++t) mj_step(model.get(), data.get());
      for (int i = 0; i < model->nv; ++i) EXPECT_FALSE(mju_isBad(data->qvel[i]));
      qpos[on].assign(data->qpos, data->qpos + model->nq);
      qvel[on].assign(data->qvel, data->qvel + model->nv);
    }
    if (solver == mjSOL_CG) {
      EXPECT_EQ(qpos[0], qpos[1]);
      EXPECT_EQ(qvel[0], qvel[1]);
    } else {
      EXPECT_NE(qvel[0][hinge], qvel[1][hinge]);
    }
  }
}

// ------------------------------- XML -----------------------------------------

// the flag in mjENABLESTRING and in XML: read, written, round trip, bad keyword
// (no step: meant to pass with the hooks in mj_implicitSkip reverted)
// Catches: the flag missing from mjENABLESTRING, the XML reader or the XML writer.
TEST_F(ImplicitPosTest, XmlFlag) {
  EXPECT_THAT(mjENABLESTRING[6], StrEq("ImplicitPos"));
  static const char* off = "<mujoco/>";
  static const char* on = R"(
  <mujoco>
    <option>
      <flag implicitpos="enable"/>
    </option>
  </mujoco>
  )";
  MjModelPtr model_off = LoadModelFromString(off);
  ASSERT_THAT(model_off, NotNull());
  EXPECT_EQ(model_off->opt.enableflags & mjENBL_IMPLICITPOS, 0);
  EXPECT_THAT(SaveAndReadXml(model_off.get()), Not(HasSubstr("implicitpos")));

  MjModelPtr model_on = LoadModelFromString(on);
  ASSERT_THAT(model_on, NotNull());
  EXPECT_EQ(model_on->opt.enableflags, mjENBL_IMPLICITPOS);
  std::string saved = SaveAndReadXml(model_on.get());
  EXPECT_THAT(saved, HasSubstr(R"(implicitpos="enable")"));

  // round trip
  MjModelPtr model_again = LoadModelFromString(saved);
  ASSERT_THAT(model_again, NotNull());
  EXPECT_EQ(model_again->opt.enableflags, mjENBL_IMPLICITPOS);

  // bad keyword
  char error[1024];
  static const char* bad = R"(
  <mujoco>
    <option>
      <flag implicitpos="yes"/>
    </option>
  </mujoco>
  )";
  EXPECT_THAT(LoadModelFromString(bad, error, sizeof(error)), testing::IsNull());
  EXPECT_GT(std::string(error).size(), 0);
}

}  // namespace
}  // namespace mujoco
