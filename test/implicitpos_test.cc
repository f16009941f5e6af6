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

// mjENBL_IMPLICITPOS: the one-step update against its closed form, the discrete map's poles,
// stability beyond the stock cap, a multi-link arm against an independent dense solve, joint
// stiffness, fixed tendons, the reused factorization, the acceleration check and bad gains.

#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "engine/engine_forward.h"
#include "support/one_dof.h"
#include "test/fixture.h"
#include "support/models.h"

namespace mjpos {
namespace {

using ::testing::DoubleNear;

constexpr double kInertia = 0.01576;  // the upstream proposal's example hinge
constexpr double kKv = 1.0;
constexpr double kQ0 = 0.3, kV0 = -2.0, kTarget = 0.5;


// closed form of one backward-Euler step of a one-hinge PD servo (OneDofStepTerms)
struct OneStep {
  double qacc, qvel, qpos, denominator;
};
OneStep ClosedForm(double inertia, double kp, double kv, double h, double q0, double v0,
                   double target) {
  OneDofTerms t = OneDofStepTerms(mjINT_IMPLICIT, true, h, inertia, kp, kv, 0);
  OneStep s;
  s.denominator = t.denominator;
  s.qacc = (t.stiffness * (target - q0) - t.damping * v0) / t.denominator;
  s.qvel = v0 + h * s.qacc;
  s.qpos = q0 + h * s.qvel;
  return s;
}

//------------------------------ one hinge ---------------------------------------------------------

// fails on a MuJoCo warning outside a WarningCapture
class OneHingeTest : public MujocoTest, public ::testing::WithParamInterface<double> {};

// the flag reproduces the closed-form backward-Euler step in qacc, qvel and qpos
// Catches: a wrong matrix term, shift or scale of the one-hinge step.
TEST_P(OneHingeTest, OneStepMatchesClosedForm) {
  const double h = GetParam();
  double worst[4] = {0, 0, 0, 0};  // qLU, qacc, qvel, qpos
  for (double kp : {1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}) {
    ModelPtr m = LoadModelOrFail(OneHingeXml(kInertia, kp, kKv, h));
    SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
    DataPtr d(mj_makeData(m.get()));
    d->qpos[0] = kQ0;
    d->qvel[0] = kV0;
    d->ctrl[0] = kTarget;
    mj_forward(m.get(), d.get());
    double inertia = d->qM[0];  // armature plus the body's 1e-12 share
    ASSERT_THAT(inertia, DoubleNear(kInertia, 1e-12));

    mj_step(m.get(), d.get());
    OneStep ref = ClosedForm(inertia, kp, kKv, h, kQ0, kV0, kTarget);
    EXPECT_EQ(d->warning[mjWARN_BADQACC].number, 0);

    // the factorized 1x1 matrix is I + h kv + h^2 kp
    EXPECT_LE(RelDiff(d->qLU[0], ref.denominator), 4e-16) << "kp=" << kp;

    // qacc recovered from the velocity step, to the precision the subtraction allows
    double qacc = (d->qvel[0] - kV0) / h;
    double qacc_tol = 4e-16 + 2.3e-16 * (std::abs(kV0) + std::abs(d->qvel[0])) /
                                  (h * std::abs(ref.qacc));
    EXPECT_LE(RelDiff(qacc, ref.qacc), qacc_tol) << "kp=" << kp;
    EXPECT_LE(RelDiff(d->qvel[0], ref.qvel), 4e-16) << "kp=" << kp;
    EXPECT_LE(RelDiff(d->qpos[0], ref.qpos), 4e-16) << "kp=" << kp;
    double err[4] = {RelDiff(d->qLU[0], ref.denominator), RelDiff(qacc, ref.qacc),
                     RelDiff(d->qvel[0], ref.qvel), RelDiff(d->qpos[0], ref.qpos)};
    for (int k = 0; k < 4; ++k) worst[k] = std::max(worst[k], err[k]);

    // the flag changed the step (the test can see the difference)
    SetEnable(m.get(), mjENBL_IMPLICITPOS, false);
    DataPtr d0(mj_makeData(m.get()));
    d0->qpos[0] = kQ0;
    d0->qvel[0] = kV0;
    d0->ctrl[0] = kTarget;
    mj_step(m.get(), d0.get());
    EXPECT_GT(RelDiff(d0->qvel[0], ref.qvel), 1e-6) << "kp=" << kp;
  }
  char summary[160];
  std::snprintf(summary, sizeof(summary), "qLU %.2g, qacc %.2g, qvel %.2g, qpos %.2g", worst[0],
                worst[1], worst[2], worst[3]);
  RecordProperty("largest_relative_error_h" + std::to_string(h), summary);
}

// the simulator's one-step map has the closed-form poles, stock and flag, up to kp = 1e12
// Catches: a step map whose poles are not backward Euler's (stock or flag).
TEST_P(OneHingeTest, PolesMatchClosedFormMap) {
  const double h = GetParam();
  for (double kp : {1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e8, 1e10, 1e12}) {
    ModelPtr m = LoadModelOrFail(OneHingeXml(kInertia, kp, kKv, h));
    double inertia;
    {
      DataPtr d(mj_makeData(m.get()));
      mj_forward(m.get(), d.get());
      inertia = d->qM[0];
    }
    for (bool on : {false, true}) {
      SetEnable(m.get(), mjENBL_IMPLICITPOS, on);
      Map2 sim = EngineStepMap(m.get(), 1e-6);
      // the closed form (the servo report's): stock kp explicit, qacc = (-kp q - kv v)/(I + h kv);
      // flag both implicit
      Map2 ref = OneDofStep(mjINT_IMPLICIT, on, h, inertia, kp, kKv, 0);
      // characteristic polynomial: trace and determinant, to rounding
      double scale = std::max(1.0, SpectralRadius2(ref));
      double tr_s = sim.a[0][0] + sim.a[1][1], tr_r = ref.a[0][0] + ref.a[1][1];
      double det_s = sim.a[0][0] * sim.a[1][1] - sim.a[0][1] * sim.a[1][0];
      double det_r = ref.a[0][0] * ref.a[1][1] - ref.a[0][1] * ref.a[1][0];
      EXPECT_LE(std::abs(tr_s - tr_r), 1e-9 * scale) << "kp=" << kp << " flag=" << on;
      EXPECT_LE(std::abs(det_s - det_r), 1e-9 * scale * scale) << "kp=" << kp << " flag=" << on;

      // eigenvalues: a near-double root is square-root conditioned, hence the looser bound
      std::array<std::complex<double>, 2> zs = Eigenvalues2(sim), zr = Eigenvalues2(ref);
      for (int k = 0; k < 2; ++k) {
        EXPECT_LE(std::abs(zs[k] - zr[k]), 1e-6 * scale) << "kp=" << kp << " flag=" << on;
      }
      if (on) {
        EXPECT_LT(SpectralRadius2(sim), 1.0) << "kp=" << kp;
      }
    }
  }
}

// stock diverges just above h^2 kp = 4I + 2h kv and not just below; the flag does not
// Catches: a flag that leaves the stock cap in place, or a mis-stated cap.
TEST_P(OneHingeTest, StockCapAndFlagBounded) {
  const double h = GetParam();
  double cap = OneDofCap(mjINT_IMPLICIT, h, kInertia, kKv, 0);
  for (double factor : {0.99, 1.01}) {
    ModelPtr m = LoadModelOrFail(OneHingeXml(kInertia, factor * cap, kKv, h));
    SetEnable(m.get(), mjENBL_IMPLICITPOS, false);
    EXPECT_EQ(SpectralRadius2(EngineStepMap(m.get(), 1e-6)) > 1, factor > 1) << factor;
  }

  // 10000 steps from a small error: stock above the cap grows, the flag stays bounded
  for (double kp : {1.01 * cap, 1e6, 1e8, 1e10, 1e12}) {
    ModelPtr m = LoadModelOrFail(OneHingeXml(kInertia, kp, kKv, h));
    for (bool on : {false, true}) {
      SetEnable(m.get(), mjENBL_IMPLICITPOS, on);
      DataPtr d(mj_makeData(m.get()));
      d->qpos[0] = 1e-5;
      double peak = 0;
      WarningCapture warnings;  // stock diverges
      bool stable = StepStable(m.get(), d.get(), 0);
      for (int t = 0; t < 10000 && stable; ++t) {
        stable = StepStable(m.get(), d.get(), 1);
        peak = std::max(peak, std::abs(d->qpos[0]));
      }
      if (on) {
        EXPECT_TRUE(stable) << "kp=" << kp;
        EXPECT_LE(peak, 2e-5) << "kp=" << kp;
        EXPECT_EQ(warnings.Count(), 0) << "kp=" << kp;
      } else {
        EXPECT_TRUE(!stable || peak > 1e-3) << "kp=" << kp;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Timesteps, OneHingeTest, ::testing::Values(5e-3, 2e-3));

// mj_checkAcc (kept as in stock) tests the continuous-time qacc before the implicit update:
// a unit error trips it above kp = 1e10*I, flag or not, and resets the data the same way
// Catches: the acceleration check changed by the flag (resets must stay stock's).
class ImplicitPosCheckAcc : public MujocoTest {};

TEST_F(ImplicitPosCheckAcc, StockCeilingKept) {
  const double h = 5e-3;
  for (double kp : {1e8, 1e9}) {
    ModelPtr m = LoadModelOrFail(OneHingeXml(kInertia, kp, 0, h));
    bool trips = kp / kInertia > mjMAXVAL;
    int warnings[2];
    double qpos[2];
    for (bool on : {false, true}) {
      SetEnable(m.get(), mjENBL_IMPLICITPOS, on);
      DataPtr d(mj_makeData(m.get()));
      d->qpos[0] = 0;
      d->ctrl[0] = 1;
      WarningCapture capture;
      mj_step(m.get(), d.get());
      warnings[on] = d->warning[mjWARN_BADQACC].number;
      qpos[on] = d->qpos[0];
      EXPECT_TRUE(std::isfinite(d->qpos[0]));
      // the warning the check raised, and nothing else
      EXPECT_EQ(capture.Count("Nan, Inf or huge value in QACC"), warnings[on]) << kp;
      EXPECT_EQ(capture.Count(), warnings[on]) << kp;
    }
    EXPECT_EQ(warnings[0], trips ? 1 : 0) << kp;
    EXPECT_EQ(warnings[1], warnings[0]) << kp;
    if (trips) {
      EXPECT_EQ(qpos[1], qpos[0]);  // reset: ctrl zeroed, both integrate the rest state
    }
  }
}

//------------------------------ joint stiffness ---------------------------------------------------

// Catches: joint stiffness missing from K or its shift.
class ImplicitPosSpring : public MujocoTest {};

TEST_F(ImplicitPosSpring, OneStepMatchesClosedFormAndStable) {
  for (double h : {5e-3, 2e-3}) {
    for (double k : {1e2, 1e4, 1e6, 1e8}) {
      ModelPtr m = LoadModelOrFail(OneHingeSpringXml(kInertia, k, kKv, h));
      SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
      DataPtr d(mj_makeData(m.get()));
      d->qpos[0] = kQ0;
      d->qvel[0] = kV0;
      mj_forward(m.get(), d.get());
      double inertia = d->qM[0];
      mj_step(m.get(), d.get());
      OneStep ref = ClosedForm(inertia, k, kKv, h, kQ0, kV0, 0);
      EXPECT_LE(RelDiff(d->qLU[0], ref.denominator), 4e-16) << k;
      EXPECT_LE(RelDiff(d->qvel[0], ref.qvel), 4e-16) << k;
      EXPECT_LE(RelDiff(d->qpos[0], ref.qpos), 4e-16) << k;
    }

    // beyond the stock cap: stock unstable, flag stable
    double k = 10 * OneDofCap(mjINT_IMPLICIT, h, kInertia, kKv, 0);
    ModelPtr m = LoadModelOrFail(OneHingeSpringXml(kInertia, k, kKv, h));
    for (bool on : {false, true}) {
      SetEnable(m.get(), mjENBL_IMPLICITPOS, on);
      EXPECT_EQ(SpectralRadius2(EngineStepMap(m.get(), 1e-6)) < 1, on) << h;
      DataPtr d(mj_makeData(m.get()));
      d->qpos[0] = 1e-5;
      WarningCapture warnings;  // stock diverges
      bool stable = StepStable(m.get(), d.get(), 10000) && std::abs(d->qpos[0]) < 1e-5;
      EXPECT_EQ(stable, on) << h;
      EXPECT_EQ(warnings.Count("The simulation is unstable") > 0, !on) << h;
    }
  }
}

//------------------------------ multi-link arm: dense reference -----------------------------------

// velocity after one implicit step, from an independent dense solve (BackwardEulerVelocity) of
//   (M - h qDeriv + h^2 K) qacc = qfrc_smooth + qfrc_constraint - h K qvel,
// K = sum_i kp_i moment_i' moment_i over the actuators (gains read from the model), with K left
// out of the matrix or the shift on request; qDeriv, the stock velocity derivative, is taken
// from the engine after the step
std::vector<double> DenseReferenceVelocity(const mjModel* m, const mjData* before,
                                           const mjData* after, bool with_k, bool with_shift) {
  int nv = m->nv;
  std::vector<double> mass(nv * nv), damping(nv * nv, 0.0), k(nv * nv, 0.0), zero(nv * nv, 0.0);
  std::vector<double> force(nv);
  mj_fullM(m, mass.data(), before->qM);

  // qDeriv, from the D-sparse layout
  for (int r = 0; r < nv; ++r) {
    for (int j = 0; j < after->D_rownnz[r]; ++j) {
      int adr = after->D_rowadr[r] + j;
      damping[r * nv + after->D_colind[adr]] = after->qDeriv[adr];
    }
  }

  // K from moments and position gains: force = gain*ctrl + b0 + b1*length + b2*velocity
  for (int i = 0; i < m->nu; ++i) {
    double kp = -m->actuator_biasprm[mjNBIAS * i + 1];
    const mjtNum* mom = before->actuator_moment + i * nv;
    for (int r = 0; r < nv; ++r) {
      for (int c = 0; c < nv; ++c) k[r * nv + c] += kp * mom[r] * mom[c];
    }
  }
  for (int r = 0; r < nv; ++r) force[r] = before->qfrc_smooth[r] + before->qfrc_constraint[r];
  return BackwardEulerVelocity(nv, m->opt.timestep, mass, damping, with_k ? k : zero,
                               with_shift ? k : zero, force.data(), before->qvel);
}

// a state away from rest: angles, velocities and targets that differ per joint
void ArmState(const mjModel* m, mjData* d) {
  for (int i = 0; i < m->nv; ++i) {
    d->qpos[i] = 0.3 * std::sin(1.0 + i);
    d->qvel[i] = 2.0 * std::cos(2.0 + 3 * i);
  }
  for (int i = 0; i < m->nu; ++i) d->ctrl[i] = 0.5 * std::sin(0.5 + 2 * i);
}

// the forward pass at ArmState (before) and one mj_step from it (after)
struct StepPair {
  DataPtr before, after;
};
StepPair StepFromArmState(const mjModel* m) {
  StepPair s{DataPtr(mj_makeData(m)), DataPtr(mj_makeData(m))};
  ArmState(m, s.before.get());
  mj_forward(m, s.before.get());
  ArmState(m, s.after.get());
  mj_step(m, s.after.get());
  return s;
}

class ImplicitPosArm : public MujocoTest {};

// Catches: a wrong K block or shift on a coupled chain (each term dropped in turn).
TEST_F(ImplicitPosArm, OneStepMatchesDenseSolve) {
  const double h = 5e-3;
  for (double kp : {1e2, 1e4, 1e6}) {
    ModelPtr m = LoadModelOrFail(ChainXml(4, kp, 1.0, h));
    ASSERT_EQ(m->nv, 4);
    ASSERT_EQ(m->opt.gravity[2], -9.81);
    for (bool on : {false, true}) {
      SetEnable(m.get(), mjENBL_IMPLICITPOS, on);
      auto [before, after] = StepFromArmState(m.get());

      std::vector<double> ref = DenseReferenceVelocity(m.get(), before.get(), after.get(), on, on);
      EXPECT_LE(RelDiff(ref.data(), after->qvel, m->nv), 1e-12) << "kp=" << kp << " flag=" << on;

      // each of the two terms matters: dropping one misses
      if (on) {
        std::vector<double> no_shift =
            DenseReferenceVelocity(m.get(), before.get(), after.get(), true, false);
        std::vector<double> no_matrix =
            DenseReferenceVelocity(m.get(), before.get(), after.get(), false, true);
        EXPECT_GT(RelDiff(no_shift.data(), after->qvel, m->nv), 1e-6) << "kp=" << kp;
        EXPECT_GT(RelDiff(no_matrix.data(), after->qvel, m->nv), 1e-6) << "kp=" << kp;
      }
    }
  }
}

// ChainXml(3, 1.0, 0.0, 5e-3) with its servos replaced by one on a fixed tendon "t" over `joints`
// (MJCF joint elements): gain kp, bias [0 -kp kv]
std::string ChainWithTendonServo(const std::string& joints, const std::string& kp,
                                 const std::string& kv) {
  std::string xml = ChainXml(3, 1.0, 0.0, 5e-3);
  return xml.substr(0, xml.find("  <actuator>")) + "  <tendon><fixed name=\"t\">" + joints +
         "</fixed></tendon>\n  <actuator><general tendon=\"t\" gainprm=\"" + kp +
         "\" biastype=\"affine\" biasprm=\"0 -" + kp + " " + kv +
         "\"/></actuator>\n</mujoco>\n";
}

// a fixed tendon along one chain: K = kp m'm is dense on the tendon's dofs
// Catches: a wrong dense tendon block kp*m'm or its shift.
TEST_F(ImplicitPosArm, FixedTendonOnChainMatchesDenseSolve) {
  // the three joints driven through one fixed tendon instead of three joint servos
  ModelPtr m = LoadModelOrFail(ChainWithTendonServo(
      "<joint joint=\"j0\" coef=\"1\"/><joint joint=\"j1\" coef=\"-0.5\"/>"
      "<joint joint=\"j2\" coef=\"0.25\"/>",
      "3e4", "-2"));
  ASSERT_EQ(m->nu, 1);
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  auto [before, after] = StepFromArmState(m.get());
  std::vector<double> ref = DenseReferenceVelocity(m.get(), before.get(), after.get(), true, true);
  EXPECT_LE(RelDiff(ref.data(), after->qvel, m->nv), 1e-12);
  std::vector<double> stock =
      DenseReferenceVelocity(m.get(), before.get(), after.get(), false, false);
  EXPECT_GT(RelDiff(stock.data(), after->qvel, m->nv), 1e-6);
}

class ImplicitPosBadGains : public MujocoTest {};

// Catches: a gain too stiff for the factorization taken into K: with a 1e300 tendon servo over
// two joints, qLU + h^2 K was singular and mju_factorLUSparse raised an error where stock steps.
TEST_F(ImplicitPosBadGains, TooStiffLeftExplicit) {
  ModelPtr m = LoadModelOrFail(ChainWithTendonServo(
      "<joint joint=\"j0\" coef=\"1\"/><joint joint=\"j1\" coef=\"-0.5\"/>", "1e300", "0"));
  std::vector<std::vector<double>> qpos;
  std::vector<std::string> warnings[2];
  for (bool on : {false, true}) {
    SetEnable(m.get(), mjENBL_IMPLICITPOS, on);
    WarningCapture capture;  // the 1e300 servo makes stock warn
    DataPtr d(mj_makeData(m.get()));
    mj_forward(m.get(), d.get());
    EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_NONRESTORING);
    for (int t = 0; t < 10; ++t) mj_step(m.get(), d.get());
    qpos.emplace_back(d->qpos, d->qpos + m->nq);
    warnings[on] = capture.messages();
  }
  EXPECT_EQ(std::memcmp(qpos[0].data(), qpos[1].data(), m->nq * sizeof(double)), 0);
  EXPECT_EQ(warnings[1], warnings[0]);
}

// Catches: a velocity slope too large for the step to take back out of its matrix, on a moment
// on several branches, taken into K: with kv 1e300 on a fixed tendon over two hinges on two
// branches, M - h qDeriv had lost M below the rounding of the tendon's velocity term, the step
// took that term's part on M's pattern back out to apply it whole in the solve, and
// mju_factorLUSparse met a zero pivot where stock steps (found by the property suite's soak).
// Infinite and NaN velocity slopes are left explicit alike.
TEST_F(ImplicitPosBadGains, BranchVelocityTooLargeLeftExplicit) {
  const char* xml = R"(
<mujoco>
  <option integrator="implicit" timestep="5e-3"/>
  <worldbody>
    <body><joint name="j0" axis="0 1 0"/><geom size=".1" pos=".2 0 0"/></body>
    <body pos="0 1 0"><joint name="j1" axis="0 1 0"/><geom size=".1" pos=".2 0 0"/></body>
  </worldbody>
  <tendon><fixed name="t"><joint joint="j0" coef="1"/><joint joint="j1" coef="-0.5"/></fixed>
  </tendon>
  <actuator><general tendon="t" gainprm="100" biastype="affine" biasprm="0 -100 -1"/></actuator>
</mujoco>)";
  for (double kv : {1e300, std::numeric_limits<double>::infinity(),
                    std::numeric_limits<double>::quiet_NaN()}) {
    ModelPtr m = LoadModelOrFail(xml);
    ASSERT_EQ(mjd_actuatorBranches(m.get(), 0), 1);
    m->actuator_biasprm[2] = -kv;
    std::vector<std::vector<double>> qpos;
    std::vector<std::string> warnings[2];
    for (bool on : {false, true}) {
      SetEnable(m.get(), mjENBL_IMPLICITPOS, on);
      WarningCapture capture;
      DataPtr d(mj_makeData(m.get()));
      d->ctrl[0] = 0.3;
      d->qvel[0] = 1;
      mj_forward(m.get(), d.get());
      EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_NONRESTORING)
          << kv;
      for (int t = 0; t < 10; ++t) mj_step(m.get(), d.get());
      qpos.emplace_back(d->qpos, d->qpos + m->nq);
      warnings[on] = capture.messages();
    }
    EXPECT_EQ(std::memcmp(qpos[0].data(), qpos[1].data(), m->nq * sizeof(double)), 0) << kv;
    EXPECT_EQ(warnings[1], warnings[0]) << kv;
  }

  // an ordinary kv stays in K, and so does the bound itself: h |kv| = mjMAXVAL exactly (h = 2^-7,
  // kv = 1.28e12)
  ModelPtr m = LoadModelOrFail(xml);
  DataPtr d(mj_makeData(m.get()));
  mj_forward(m.get(), d.get());
  EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_RESTORING);
  m->opt.timestep = 0.0078125;
  m->actuator_biasprm[2] = -1.28e12;
  ASSERT_EQ(m->opt.timestep * 1.28e12, mjMAXVAL);
  EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_RESTORING);
}

// Catches: an actuator held at its forcerange whose velocity term the hold cannot take back out
// of the step's matrix: kv 1e300 on a slide servo with a forcerange, pulled by gravity. Its
// applied force (kv times a velocity change of rounding size) crosses the range, and the hold
// took h kv out of M - h qDeriv, which had lost M below its rounding: mju_factorLUSparse met a
// zero pivot where stock steps (found by the property suite's soak, --seed=5 --model=833). Such
// an actuator is not held: its applied force is reported as it is.
TEST_F(ImplicitPosBadGains, HugeVelocitySlopeIsNotHeld) {
  ModelPtr m = LoadModelOrFail(R"(
<mujoco>
  <option integrator="implicit" timestep="5e-3"/>
  <worldbody>
    <body><joint name="s" type="slide" axis="0 0 1"/><geom size=".1" mass="5"/></body>
  </worldbody>
  <actuator>
    <general joint="s" gainprm="3600" biastype="affine" biasprm="0 -3600 -1e300"
             forcelimited="true" forcerange="-0.14 0.14"/>
  </actuator>
</mujoco>)");
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  DataPtr d(mj_makeData(m.get()));
  mj_forward(m.get(), d.get());
  ASSERT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_RESTORING);
  int beyond = 0;  // steps whose applied force is reported beyond the range: not held there
  for (int t = 0; t < 10; ++t) {
    mj_step(m.get(), d.get());
    beyond += !(std::abs(d->actuator_force_step[0]) <= 0.14);
  }
  EXPECT_TRUE(std::isfinite(d->qpos[0]));
  EXPECT_EQ(d->warning[mjWARN_BADQACC].number, 0);
  EXPECT_GT(beyond, 0);
}

//------------------------------ reused factorization ----------------------------------------------

class ImplicitPosSkip : public MujocoTest {};

// mj_implicitSkip(skipfactor=1), as finite differencing calls it, applies the right-hand side
// shift with the stored factorization: same result as the full step
// Catches: the shift skipped when mj_implicitSkip reuses the factorization.
TEST_F(ImplicitPosSkip, ShiftAppliedWhenFactorizationReused) {
  ModelPtr m = LoadModelOrFail(ChainXml(3, 1e5, 1.0, 5e-3));
  for (bool on : {false, true}) {
    SetEnable(m.get(), mjENBL_IMPLICITPOS, on);
    DataPtr d(mj_makeData(m.get()));
    ArmState(m.get(), d.get());
    mj_forward(m.get(), d.get());
    std::vector<double> qpos(d->qpos, d->qpos + m->nq), qvel(d->qvel, d->qvel + m->nv);
    mj_implicitSkip(m.get(), d.get(), 0);
    std::vector<double> full(d->qvel, d->qvel + m->nv);

    // back to the same state; qLU still holds its factorization
    std::copy(qpos.begin(), qpos.end(), d->qpos);
    std::copy(qvel.begin(), qvel.end(), d->qvel);
    d->time = 0;
    mj_forward(m.get(), d.get());
    mj_implicitSkip(m.get(), d.get(), 1);
    for (int i = 0; i < m->nv; ++i) EXPECT_EQ(d->qvel[i], full[i]) << i;
  }
}

//------------------------------ bad gains ---------------------------------------------------------

// NaN, infinite, huge and negative gains: no crash, and no worse than stock (same warnings,
// finite state); non-restoring and non-finite slopes are left explicit, bit-identical to stock
// Catches: a crash, NaN or extra reset from NaN, infinite, huge or negative gains.
TEST_F(ImplicitPosBadGains, NoWorseThanStock) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double kp : {nan, inf, -inf, 1e300, -1e3}) {
    ModelPtr m = LoadModelOrFail(OneHingeXml(kInertia, 1.0, kKv, 5e-3));
    m->actuator_gainprm[0] = kp;
    m->actuator_biasprm[1] = -kp;
    int warnings[2];
    std::vector<std::string> raised[2];  // every warning of the 100 steps (a reset clears counts)
    double qpos[2], qvel[2];
    for (bool on : {false, true}) {
      SetEnable(m.get(), mjENBL_IMPLICITPOS, on);
      WarningCapture capture;  // bad gains make stock warn
      DataPtr d(mj_makeData(m.get()));
      d->qpos[0] = kQ0;
      d->qvel[0] = kV0;
      d->ctrl[0] = kTarget;
      for (int t = 0; t < 100; ++t) mj_step(m.get(), d.get());
      warnings[on] = d->warning[mjWARN_BADQACC].number + d->warning[mjWARN_BADQVEL].number +
                     d->warning[mjWARN_BADQPOS].number;
      raised[on] = capture.messages();
      qpos[on] = d->qpos[0];
      qvel[on] = d->qvel[0];
    }
    EXPECT_LE(warnings[1], warnings[0]) << kp;
    EXPECT_LE(raised[1].size(), raised[0].size()) << kp;
    if (std::isfinite(qpos[0])) {
      EXPECT_TRUE(std::isfinite(qpos[1])) << kp;
      EXPECT_TRUE(std::isfinite(qvel[1])) << kp;
    }
    if (!(kp > 0) || !std::isfinite(kp)) {
      // left explicit: identical to flag off (NaN compares through its bits)
      EXPECT_EQ(std::memcmp(&qpos[0], &qpos[1], sizeof(double)), 0) << kp;
      EXPECT_EQ(std::memcmp(&qvel[0], &qvel[1], sizeof(double)), 0) << kp;
      EXPECT_EQ(raised[1], raised[0]) << kp;
    }
  }
}

}  // namespace
}  // namespace mjpos
