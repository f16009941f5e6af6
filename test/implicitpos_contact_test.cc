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

// Stiff servos in contact under mjENBL_IMPLICITPOS, against the converged reference (the same
// model under stock at h/N, N doubled until force and penetration agree to 1 %): a standing
// robot and a gripper at rest reach the reference's statics at any h and kp because the step
// solves its constraints in its own metric with the model's regularisation (patch 0006,
// engine_implicit_constraint.c). doc/contact.md has the study.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mjxmacro.h>
#include <mujoco/mujoco.h>
#include "test/fixture.h"
#include "support/contact.h"
#include "support/models.h"
#include "support/one_dof.h"

namespace mjpos {
namespace {

constexpr double kSeconds = 1.5;  // from the initial pose, settled after 1 s
constexpr double kWindow = 0.5;   // the metrics' window, the last 0.5 s
constexpr double kTol = 0.01;     // the reference's convergence
constexpr double kHmin = 1e-6;

using ImplicitPosContact = MujocoTest;

struct Schemes {
  ContactMetrics flag, weighted;
};

// the converged reference of the model
ContactMetrics Reference(const std::string& xml, const char* body, double* h_ref) {
  ModelPtr m = LoadModelOrFail(xml);
  if (!m) return {};
  int b = body ? mj_name2id(m.get(), mjOBJ_BODY, body) : -1;
  WarningCapture capture;  // stock diverges at the reference's first timesteps
  double seconds = kSeconds;  // no longer: the test's models come to rest within it
  return ContactReference(m.get(), &seconds, kSeconds, kWindow, b, kTol, kHmin, h_ref);
}

// what a step leaves that the bit-for-bit comparisons compare: qpos, qvel and efc_force
std::vector<mjtNum> StepState(const mjModel* m, const mjData* d) {
  std::vector<mjtNum> state(d->qpos, d->qpos + m->nq);
  state.insert(state.end(), d->qvel, d->qvel + m->nv);
  state.insert(state.end(), d->efc_force, d->efc_force + d->nefc);
  return state;
}

// the flag and the weighted mode on the model
Schemes Measure(const std::string& xml, const char* body) {
  Schemes r;
  ModelPtr m = LoadModelOrFail(xml);
  if (!m) return r;
  int b = body ? mj_name2id(m.get(), mjOBJ_BODY, body) : -1;
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  r.flag = MeasureContact(m.get(), kSeconds, kWindow, b);
  SetEnable(m.get(), mjENBL_POSWEIGHT, true);
  r.weighted = MeasureContact(m.get(), kSeconds, kWindow, b);
  return r;
}

// Catches: the constraints solved in M with the start-of-step servo force (the simpler design of
// doc/contact.md), a metric without h^2*K or with the wrong sign, R taken from the step's metric.
// The quadruped with the default servo of <position> (kv 0), no armature and no joint damping
// chatters on its feet under that design (normal-force ripple 70-100 % of the weight, penetration
// 4-8x the reference's); it must stand as the reference does: force and penetration within 2 %,
// ripple at most 0.5 % of the force.
TEST_F(ImplicitPosContact, StandingRobotMatchesReference) {
  for (double kp : {1e4, 1e6}) {
    double h_ref = 0;
    ContactMetrics ref = Reference(LeggedXml(kp, 0, 0.005, "implicit", 0, 0), nullptr, &h_ref);
    ASSERT_GT(h_ref, 0) << "reference did not converge, kp " << kp;
    for (double h : {0.005, 0.01}) {
      Schemes r = Measure(LeggedXml(kp, 0, h, "implicit", 0, 0), nullptr);
      for (const ContactMetrics* c : {&r.flag, &r.weighted}) {
        const char* mode = c == &r.flag ? "flag" : "weighted";
        ASSERT_TRUE(c->stable) << mode << " h " << h << " kp " << kp;
        EXPECT_LT(RelDiff(c->force, ref.force), 0.02) << mode << " h " << h << " kp " << kp;
        EXPECT_LT(RelDiff(c->penetration, ref.penetration), 0.02)
            << mode << " h " << h << " kp " << kp << ": " << c->penetration << " vs "
            << ref.penetration;
        EXPECT_LE(c->ripple, 0.005) << mode << " h " << h << " kp " << kp;
      }
    }
  }
}

// Catches the same as above on a grasp: the squeeze force and penetration of the fingers within
// 2 % of the reference's, ripple at most 0.5 %, the held box's slip within 10 %, with light
// fingers (no armature) at kp 1e4 (where stock is stable too) to 1e7.
TEST_F(ImplicitPosContact, GripperMatchesReference) {
  for (double kp : {1e4, 1e5, 1e7}) {
    double h_ref = 0;
    ContactMetrics ref = Reference(GripperXml(kp, 0, 0.005), "object", &h_ref);
    ASSERT_GT(h_ref, 0) << "reference did not converge, kp " << kp;
    Schemes r = Measure(GripperXml(kp, 0, 0.005), "object");
    for (const ContactMetrics* c : {&r.flag, &r.weighted}) {
      const char* mode = c == &r.flag ? "flag" : "weighted";
      ASSERT_TRUE(c->stable) << mode << " kp " << kp;
      EXPECT_LT(RelDiff(c->force, ref.force), 0.02) << mode << " kp " << kp;
      EXPECT_LT(RelDiff(c->penetration, ref.penetration), 0.02) << mode << " kp " << kp;
      EXPECT_LE(c->ripple, 0.005) << mode << " kp " << kp;
      EXPECT_LT(RelDiff(c->slip, ref.slip), 0.1) << mode << " kp " << kp;
    }
  }
}

// Catches: a constraint force that is not the one of the step's own acceleration (the
// constraints solved in M, or in another metric than the step's). On the gripper closing on its
// box (a symmetric step matrix: slides and a free box, kv 0), the step's acceleration
// (v+ - v)/h obeys MuJoCo's soft-constraint law on every row in the quadratic state:
// efc_force = efc_D * (efc_aref - efc_J * (v+ - v)/h). Solved in M, it is off by 106 N.
TEST_F(ImplicitPosContact, StepAccelerationObeysTheConstraintLaw) {
  ModelPtr m = LoadModelOrFail(GripperXml(1e5, 0, 0.005));
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  DataPtr d(mj_makeData(m.get()));
  const int nv = m->nv;
  for (int t = 0; t < 6; ++t) {
    std::vector<mjtNum> v0(d->qvel, d->qvel + nv), acc(nv);
    mj_step(m.get(), d.get());
    for (int i = 0; i < nv; ++i) acc[i] = (d->qvel[i] - v0[i]) / m->opt.timestep;
    int quadratic = 0;
    double err = 0, scale = 0;
    for (int r = 0; r < d->nefc; ++r) {
      if (d->efc_state[r] != mjCNSTRSTATE_QUADRATIC) continue;
      quadratic++;
      double law = d->efc_D[r] * (d->efc_aref[r] - mju_dot(d->efc_J + r * nv, acc.data(), nv));
      err = std::max(err, std::abs(d->efc_force[r] - law));
      scale = std::max(scale, std::abs(d->efc_force[r]));
    }
    if (!quadratic) continue;
    EXPECT_LT(err, 1e-6 * scale) << "step " << t << ", " << quadratic << " rows";
  }
}

// Catches: a dual solver (PGS) solving with M's constraint projection (efc_AR, left from the
// position stage) or without the metric's unconstrained acceleration (efc_b = J*a0 - aref, which
// the primal solvers do not read). The gripper at kp 1e5 under PGS and CG squeezes as the
// reference does, as under Newton (GripperMatchesReference).
TEST_F(ImplicitPosContact, EverySolverSolvesInTheMetric) {
  double h_ref = 0;
  ContactMetrics ref = Reference(GripperXml(1e5, 0, 0.005), "object", &h_ref);
  ASSERT_GT(h_ref, 0);
  for (const char* solver : {"PGS", "CG"}) {
    std::string xml = GripperXml(1e5, 0, 0.005);
    xml.replace(xml.find("integrator="), 0, std::string("solver=\"") + solver + "\" ");
    Schemes r = Measure(xml, "object");
    ASSERT_TRUE(r.flag.stable) << solver;
    EXPECT_LT(RelDiff(r.flag.force, ref.force), 0.02) << solver;
    EXPECT_LT(RelDiff(r.flag.penetration, ref.penetration), 0.02) << solver;
  }
}

// Catches, on MuJoCo's own humanoid (motors made servos of gear 1, kp 1e5, kv 0, standing on
// frictionless feet): the same as above on a model no one here wrote, and a reference that
// ignores MuJoCo's integrator safety. Its geoms' solref time constant is 15 ms, which refsafe
// raises to 2h = 20 ms at h 10 ms; a reference run with 15 ms at its small timestep penetrates
// 1.21x less than every scheme at 10 ms (doc/contact.md).
TEST_F(ImplicitPosContact, ServoHumanoidStandsAsTheReference) {
  const ContactCase humanoid = StandingCases().back();
  ASSERT_STREQ(humanoid.name, "servo humanoid standing");
  for (double h : {0.005, 0.01}) {
    ModelPtr m(LoadContactCase(humanoid, MJPOS_MODEL_DIR, 1e5, 0, h));
    ASSERT_NE(m, nullptr);
    double h_ref = 0, seconds = 2;
    ContactMetrics ref;
    {
      WarningCapture capture;  // stock diverges at the reference's first timesteps
      ref = ContactReference(m.get(), &seconds, 8, kWindow, -1, kTol, kHmin, &h_ref);
    }
    ASSERT_GT(h_ref, 0) << "reference did not converge, h " << h << ", " << seconds << " s";
    for (int flags : {+mjENBL_IMPLICITPOS, mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT}) {
      m->opt.enableflags = flags;
      ContactMetrics c = MeasureContact(m.get(), seconds, kWindow, -1);
      ASSERT_TRUE(c.stable) << flags << " h " << h;
      EXPECT_LT(RelDiff(c.force, ref.force), 0.02) << flags << " h " << h;
      EXPECT_LT(RelDiff(c.penetration, ref.penetration), 0.02)
          << flags << " h " << h << ": " << c.penetration << " vs " << ref.penetration;
      EXPECT_LE(c.ripple, 0.005) << flags << " h " << h;
    }
  }
}

// A light slide finger (0.1 kg, no gravity) pressed 1 cm into a fixed wall by one term of K:
// a servo (kp, kv 0) or, with spring, a joint spring of stiffness kp (no actuator).
std::string FingerOnWallXml(double kp, bool spring, double h) {
  std::string k = std::to_string(kp);
  return "<mujoco><option timestep=\"" + std::to_string(h) +
         "\" integrator=\"implicit\" gravity=\"0 0 0\"/><worldbody>"
         "<geom type=\"box\" size=\".01 .05 .05\" pos=\".05 0 0\"/>"
         "<body name=\"finger\"><joint name=\"slide\" type=\"slide\" axis=\"1 0 0\"" +
         (spring ? " stiffness=\"" + k + "\" springref=\".01\"" : std::string()) +
         "/><geom type=\"box\" size=\".03 .01 .01\" pos=\".01 0 0\" mass=\".1\"/>"
         "</body></worldbody>" +
         (spring ? std::string()
                 : "<actuator><general joint=\"slide\" gainprm=\"" + k +
                       "\" biastype=\"affine\" biasprm=\"" + std::to_string(0.01 * kp) + " -" +
                       k + " 0\"/></actuator>") +
         "</mujoco>";
}

// Catches: a K of one term (one servo, or one joint spring and no actuator) taken for an empty
// one, which leaves the constraints in M: the finger on the wall at kp 1e5 (h^2 kp / m = 25)
// presses as its reference does, force and penetration within 2 %, ripple at most 0.5 %.
TEST_F(ImplicitPosContact, OneTermOfKInContact) {
  for (bool spring : {false, true}) {
    double h_ref = 0;
    ContactMetrics ref = Reference(FingerOnWallXml(1e5, spring, 0.005), nullptr, &h_ref);
    ASSERT_GT(h_ref, 0) << "reference did not converge, spring " << spring;
    Schemes r = Measure(FingerOnWallXml(1e5, spring, 0.005), nullptr);
    ASSERT_TRUE(r.flag.stable) << "spring " << spring;
    EXPECT_LT(RelDiff(r.flag.force, ref.force), 0.02) << "spring " << spring;
    EXPECT_LT(RelDiff(r.flag.penetration, ref.penetration), 0.02) << "spring " << spring;
    EXPECT_LE(r.flag.ripple, 0.005) << "spring " << spring;
  }
}

// Catches: the step's metric applied to a kinematic tree K does not act on, or K's own tree
// missed (its actuators', on a joint or a tendon, or its springs'). A loose box, its free joint
// damped (qDeriv on its six dofs), dropped spinning onto the floor beside a stiff arm held
// against its joint limit, the arm's K from a position servo on its joint or on a tendon over
// it, or from a joint spring. The box's contacts are solved in its M,
// as stock solves them, so its path under the flag is stock's (within 1e-10 over 1 s at h 5 ms;
// up to 9e-5 apart when they are solved in its M - h*qDeriv). The arm's limit is solved in the
// step's metric, so its speed is the flag's on the arm alone (one tree) to 1e-8 at every step,
// and differs from stock's.
TEST_F(ImplicitPosContact, TreeWithoutKIsSolvedInM) {
  static constexpr char kArm[] = R"(
      <body pos="1 0 1">
        <joint name="arm" type="hinge" axis="0 1 0" limited="true" range="-0.2 0.2" stiffness="STIFFNESS"
               springref="0.5"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="0.5"/>
      </body>)";
  static constexpr char kBox[] = R"(
      <body name="box" pos="-0.5 0 0.3">
        <joint type="free" damping="0.2"/>
        <geom type="box" size="0.05 0.08 0.03" mass="0.3"/>
      </body>)";
  for (const char* k : {"servo", "tendon", "spring"}) {
    std::string arm = kArm, where = k;
    bool spring = where == "spring";
    arm.replace(arm.find("STIFFNESS"), 9, spring ? "2000" : "0");
    std::string servo = where == "tendon" ? "tendon=\"t\"" : "joint=\"arm\"";
    auto xml = [&](bool box) {
      return std::string("<mujoco><option timestep=\"0.005\" integrator=\"implicit\"/>") +
             "<worldbody><geom type=\"plane\" size=\"2 2 0.1\"/>" + (box ? kBox : "") + arm +
             "</worldbody><tendon><fixed name=\"t\"><joint joint=\"arm\" coef=\"1\"/></fixed>"
             "</tendon><actuator><position " + servo + " kp=\"" + (spring ? "0" : "2000") +
             "\"/></actuator></mujoco>";
    };
    ModelPtr m = LoadModelOrFail(xml(true));
    ModelPtr alone = LoadModelOrFail(xml(false));
    ASSERT_NE(m, nullptr);
    ASSERT_NE(alone, nullptr);
    // the box first: joint 0, its tree before the arm's (the tendon's id 0 is not the arm's)
    int box = m->jnt_qposadr[0], box_dof = m->jnt_dofadr[0];
    int arm_dof = m->jnt_dofadr[mj_name2id(m.get(), mjOBJ_JOINT, "arm")];
    DataPtr stock(mj_makeData(m.get())), flag(mj_makeData(m.get()));
    DataPtr arm_alone(mj_makeData(alone.get()));
    for (mjData* d : {stock.get(), flag.get()}) {
      d->qvel[box_dof] = 3;  // the box spins about x and y as it falls
      d->qvel[box_dof + 3] = 5;
      d->qvel[box_dof + 4] = -4;
    }
    for (mjData* d : {stock.get(), flag.get(), arm_alone.get()}) d->ctrl[0] = 0.5;
    SetEnable(alone.get(), mjENBL_IMPLICITPOS, true);
    int contacts = 0, limited = 0;
    double from_alone = 0, from_stock = 0;  // the arm's largest distance over the run
    for (int k = 0; k < 200; ++k) {
      SetEnable(m.get(), mjENBL_IMPLICITPOS, false);
      mj_step(m.get(), stock.get());
      SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
      mj_step(m.get(), flag.get());
      mj_step(alone.get(), arm_alone.get());
      contacts += flag->ncon > 0;
      limited += arm_alone->nefc > 0;
      from_alone = std::max(from_alone, std::abs(flag->qvel[arm_dof] - arm_alone->qvel[0]));
      from_stock = std::max(from_stock, std::abs(flag->qvel[arm_dof] - stock->qvel[arm_dof]));
    }
    EXPECT_GT(contacts, 100) << where;  // the box lands and stays on the floor
    EXPECT_GT(limited, 100) << where;   // the arm rests on its limit
    for (int i = box; i < box + 7; ++i) {
      EXPECT_NEAR(flag->qpos[i], stock->qpos[i], 1e-10) << where << ", box qpos " << i - box;
    }
    EXPECT_LE(from_alone, 1e-8) << where;
    EXPECT_GT(from_stock, 1e-3) << where;
  }
}

// Catches: a metric that is not positive definite taken for one, or its fallback not solving the
// constraints. The finger on the wall with a servo of negative damping (velocity bias +1e3 N s/m:
// M - h qDeriv + h^2 K is -4.9 on its one dof, h 5 ms): the step solves the constraints in M as
// mj_forward does, to the bit, and leaves no warning.
TEST_F(ImplicitPosContact, MetricNotPositiveDefiniteSolvesInM) {
  std::string xml = FingerOnWallXml(1e3, false, 0.005);
  xml.replace(xml.find(" 0\"/></actuator>"), 16, " 1000\"/></actuator>");
  ModelPtr m = LoadModelOrFail(xml);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->actuator_biasprm[2], 1000);
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  DataPtr d(mj_makeData(m.get()));
  d->qpos[0] = 0.001;  // 1 mm into the wall
  DataPtr before(mj_copyData(nullptr, m.get(), d.get()));
  mj_forward(m.get(), before.get());
  ASSERT_GT(before->nefc, 0);
  mj_step(m.get(), d.get());
  ASSERT_EQ(d->nefc, before->nefc);
  for (int i = 0; i < d->nefc; ++i) EXPECT_EQ(d->efc_force[i], before->efc_force[i]) << i;
  EXPECT_EQ(d->warning[mjWARN_INERTIA].number, 0);
}

// Catches: the constraint solve in the step's metric run without contact or without K (it must
// leave those steps as they were), and a changed contract of what mj_step leaves. With contact,
// efc_force and qfrc_constraint are the step's (J'*efc_force = qfrc_constraint), qacc is
// qacc_smooth + M^-1*qfrc_constraint, the velocity update is the step's:
// M*(v+ - v)/h = qfrc_smooth_step + qfrc_constraint, and so are the acceleration sensors.
// mj_forward keeps its acceleration sensors.
TEST_F(ImplicitPosContact, StepLeavesItsConstraintForce) {
  ModelPtr m = LoadModelOrFail(LeggedXml(1e5, 0, 0.005, "implicit", 0, 0));
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  DataPtr d(mj_makeData(m.get()));
  for (int t = 0; t < 40; ++t) mj_step(m.get(), d.get());
  ASSERT_GT(d->nefc, 0);
  const int nv = m->nv;
  std::vector<mjtNum> v0(d->qvel, d->qvel + nv), jtf(nv), acc(nv), dv(nv), mdv(nv), rhs(nv);
  DataPtr before(mj_makeData(m.get()));
  mj_copyData(before.get(), m.get(), d.get());
  mju_zero(d->sensordata, m->nsensordata);
  for (int i = 0; i < m->nstack; ++i) d->stack[i] = NAN;  // the step reads nothing it did not write
  mj_step(m.get(), d.get());
  EXPECT_EQ(d->warning[mjWARN_INERTIA].number, 0);  // the metric's factorization warns nothing

  // the acceleration sensors are the step's: the feet's touch sensors from its contacts and
  // efc_force, as mj_sensorAcc computes them from what the step left
  std::vector<mjtNum> touch(d->sensordata, d->sensordata + m->nsensordata);
  EXPECT_GT(mju_sum(touch.data(), m->nsensordata), 0);
  mj_sensorAcc(m.get(), d.get());
  EXPECT_LT(RelDiff(touch.data(), d->sensordata, m->nsensordata), 1e-12);

  // J'*efc_force at the start of the step (before's Jacobian) is the constraint force it left
  mj_forward(m.get(), before.get());
  mju_mulMatTVec(jtf.data(), before->efc_J, d->efc_force, before->nefc, nv);
  EXPECT_LT(RelDiff(jtf.data(), d->qfrc_constraint, nv), 1e-9);

  // qacc = qacc_smooth + M^-1*qfrc_constraint
  mj_solveM(m.get(), before.get(), acc.data(), d->qfrc_constraint, 1);
  mju_addTo(acc.data(), before->qacc_smooth, nv);
  EXPECT_LT(RelDiff(acc.data(), d->qacc, nv), 1e-9);

  // M*(v+ - v)/h = qfrc_smooth_step + qfrc_constraint
  mju_sub(dv.data(), d->qvel, v0.data(), nv);
  mju_scl(dv.data(), dv.data(), 1 / m->opt.timestep, nv);
  mj_mulM(m.get(), before.get(), mdv.data(), dv.data());
  mju_add(rhs.data(), d->qfrc_smooth_step, d->qfrc_constraint, nv);
  EXPECT_LT(RelDiff(mdv.data(), rhs.data(), nv), 1e-9);

  // mj_forward alone solves in M: its constraint force is not the step's
  EXPECT_GT(RelDiff(before->qfrc_constraint, d->qfrc_constraint, nv), 1e-6);

  // and it still runs the acceleration sensors (the feet's touch sensors), on fresh data
  DataPtr fresh(mj_makeData(m.get()));
  mju_copy(fresh->qpos, before->qpos, m->nq);
  mju_copy(fresh->qvel, before->qvel, nv);
  mj_forward(m.get(), fresh.get());
  EXPECT_GT(mju_sum(fresh->sensordata, m->nsensordata), 0);
}

// Catches: the step that reuses its factorization (mj_stepSkip from mjd_transitionFD, for the
// control columns) not solving its constraints in the metric, or with no metric to solve in. On
// the gripper holding its box (kp 1e4, kv 100, at rest after 1 s), the derivative of the next
// velocity in each control equals the central difference of whole steps.
TEST_F(ImplicitPosContact, ReusedFactorizationSolvesInTheMetric) {
  ModelPtr m = LoadModelOrFail(GripperXml(1e4, 100, 0.005));
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  m->opt.tolerance = 1e-12;  // both paths' constraint forces converged
  const int nv = m->nv, nu = m->nu, n = 2 * nv + m->na;
  DataPtr d(mj_makeData(m.get()));
  for (int t = 0; t < 200; ++t) mj_step(m.get(), d.get());
  mj_forward(m.get(), d.get());
  ASSERT_GT(d->nefc, 0);
  std::vector<mjtNum> b(n * nu);
  mjd_transitionFD(m.get(), d.get(), 1e-6, 1, nullptr, b.data(), nullptr, nullptr);
  const double eps = 1e-6;
  for (int u = 0; u < nu; ++u) {
    std::vector<double> next[2], fd(nv), engine(nv);
    for (int side = 0; side < 2; ++side) {
      DataPtr e(mj_copyData(nullptr, m.get(), d.get()));
      e->ctrl[u] += side ? eps : -eps;
      mj_step(m.get(), e.get());
      next[side].assign(e->qvel, e->qvel + nv);
    }
    for (int i = 0; i < nv; ++i) {
      fd[i] = (next[1][i] - next[0][i]) / (2 * eps);
      engine[i] = b[(nv + i) * nu + u];
    }
    EXPECT_LE(RelDiff(engine, fd), 1e-4) << "control " << u;
  }
}

// Catches: the step not starting again, or starting twice, after mj_checkAcc resets the state
// for a bad acceleration that only the constraint solve in the step's metric produces. The
// quadruped pressed 5 cm into a floor of direct stiffness 1e15 (solref -1e15 0): its smooth
// acceleration is sound, its contact acceleration beyond mj_checkAcc's limit. mj_step warns once,
// resets and takes one step from the reset state: the state of mj_resetData and one mj_step, to
// the solver's tolerance (the restart solves the constraints after mj_checkAcc's mj_forward).
// Where the reset state is as bad, the step resets once, as stock's does, and goes on.
TEST_F(ImplicitPosContact, StepAfterResetStartsFromTheResetState) {
  ModelPtr m = LoadModelOrFail(LeggedXml(1e4, 100, 0.005, "implicit", 0, 0));
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  m->opt.tolerance = 1e-12;
  for (int g = 0; g < m->ngeom; ++g) {
    m->geom_solref[mjNREF * g] = -1e15;
    m->geom_solref[mjNREF * g + 1] = 0;
  }
  m->qpos0[2] += 0.01;  // the reset state in the air
  DataPtr d(mj_makeData(m.get())), fresh(mj_makeData(m.get()));
  d->qpos[2] -= 0.06;
  {
    WarningCapture capture;
    mj_step(m.get(), d.get());
  }
  EXPECT_EQ(d->warning[mjWARN_BADQACC].number, 1);
  mj_step(m.get(), fresh.get());
  EXPECT_EQ(fresh->warning[mjWARN_BADQACC].number, 0);
  EXPECT_EQ(d->time, fresh->time);
  EXPECT_LT(RelDiff(d->qvel, fresh->qvel, m->nv), 1e-6);
  EXPECT_LT(RelDiff(d->qpos, fresh->qpos, m->nq), 1e-9);

  // a reset state as bad: one reset per step, as stock's mj_step, then the step goes on
  m->qpos0[2] -= 0.06;
  DataPtr deep(mj_makeData(m.get()));
  {
    WarningCapture capture;
    mj_step(m.get(), deep.get());
  }
  EXPECT_EQ(deep->warning[mjWARN_BADQACC].number, 1);
  EXPECT_EQ(deep->time, m->opt.timestep);
}

// Catches: mj_step's path with the flag skipping the position- and velocity-stage sensors or
// the step's timer, and mj_step2's path miscounting it. With contact, after mj_step a
// joint-position sensor holds the position at the start of the step (as stock's), and the step
// timer counts each mj_step, and each mj_step1 + mj_step2, once.
TEST_F(ImplicitPosContact, StepKeepsSensorsAndTimer) {
  std::string xml = LeggedXml(1e5, 0, 0.005, "implicit", 0, 0);
  xml.replace(xml.find("<sensor>"), 8, "<sensor>\n    <jointpos joint=\"fl_hip\"/>");
  ModelPtr m = LoadModelOrFail(xml);
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  DataPtr d(mj_makeData(m.get()));
  const int hip = m->jnt_qposadr[mj_name2id(m.get(), mjOBJ_JOINT, "fl_hip")];
  for (int t = 0; t < 40; ++t) {
    mjtNum start = d->qpos[hip];
    mju_zero(d->sensordata, m->nsensordata);
    mj_step(m.get(), d.get());
    ASSERT_EQ(d->sensordata[0], start) << "step " << t;
  }
  EXPECT_GT(d->nefc, 0);
  EXPECT_EQ(d->timer[mjTIMER_STEP].number, 40);
  for (int t = 0; t < 10; ++t) {
    mj_step1(m.get(), d.get());
    mj_step2(m.get(), d.get());
  }
  EXPECT_EQ(d->timer[mjTIMER_STEP].number, 50);
}

// Catches: the step reading what the last constraint solve left, or reading past the end of an
// array into the next one (qacc_smooth is followed by efc_b in mjData's buffer). With contact,
// flag on and off (the gripper at kp 1e3, where stock holds it), a step from a copy whose
// constraint outputs hold NaN equals the step from the original bit for bit and runs the solver
// once.
TEST_F(ImplicitPosContact, StepReadsNoOutputOfTheLastSolve) {
  for (int on = 0; on < 2; ++on) {
    ModelPtr m = LoadModelOrFail(GripperXml(1e3, 0, 0.005));
    ASSERT_NE(m, nullptr);
    SetEnable(m.get(), mjENBL_IMPLICITPOS, on);
    DataPtr a(mj_makeData(m.get())), b(mj_makeData(m.get()));
    for (int t = 0; t < 40; ++t) mj_step(m.get(), a.get());
    ASSERT_GT(a->nefc, 0) << on;
    mj_copyData(b.get(), m.get(), a.get());
    for (int i = 0; i < m->njmax; ++i) b->efc_b[i] = b->efc_force[i] = NAN;
    for (int i = 0; i < m->nv; ++i) b->qfrc_constraint[i] = NAN;
    const int solves = a->timer[mjTIMER_CONSTRAINT].number;
    mj_step(m.get(), a.get());
    mj_step(m.get(), b.get());
    EXPECT_EQ(b->timer[mjTIMER_CONSTRAINT].number, solves + 1) << on;
    EXPECT_TRUE(BitIdentical(StepState(m.get(), a.get()), StepState(m.get(), b.get()))) << on;
  }
}

// Catches: the step leaving one of mjData's arrays pointing elsewhere (the metric's solve puts
// its own qM, qLD, qLDiagInv, qLDiagSqrtInv, qacc_smooth and qfrc_smooth in place and must put
// mjData's back): after steps with contact every array is where mj_makeData put it.
TEST_F(ImplicitPosContact, StepLeavesEveryArrayInPlace) {
  ModelPtr m = LoadModelOrFail(GripperXml(1e5, 0, 0.005));
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  DataPtr d(mj_makeData(m.get())), fresh(mj_makeData(m.get()));
  for (int t = 0; t < 10; ++t) mj_step(m.get(), d.get());
  ASSERT_GT(d->nefc, 0);
  auto offset = [](const mjData* data, const void* array) {
    return static_cast<const char*>(array) - static_cast<const char*>(data->buffer);
  };
#define X(type, name, nr, nc) \
  EXPECT_EQ(offset(d.get(), d->name), offset(fresh.get(), fresh->name)) << #name;
  MJDATA_POINTERS
#undef X
}

// Catches: the step's check of the smooth acceleration before its late solve not being
// mju_isBad's (a value of exactly mjMAXVAL is not bad): a sphere on a slide (mass 1, so its
// smooth acceleration is its applied force) resting on a plane, a servo on the slide, pushed by
// exactly mjMAXVAL; the step solves its constraints once, as for any sound acceleration.
TEST_F(ImplicitPosContact, SmoothAccelerationAtTheLimitIsSound) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><option timestep=\"0.001\" integrator=\"implicit\" gravity=\"0 0 0\"/>"
      "<worldbody><geom type=\"plane\" size=\"1 1 .1\"/><body pos=\"0 0 .099\">"
      "<joint name=\"x\" type=\"slide\" axis=\"1 0 0\"/>"
      "<geom type=\"sphere\" size=\".1\" mass=\"1\"/></body></worldbody>"
      "<actuator><position joint=\"x\" kp=\"100\"/></actuator></mujoco>");
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  DataPtr d(mj_makeData(m.get()));
  d->qfrc_applied[0] = mjMAXVAL;
  mj_step(m.get(), d.get());
  ASSERT_GT(d->nefc, 0);
  EXPECT_EQ(d->qacc_smooth[0], mjMAXVAL);
  EXPECT_EQ(d->timer[mjTIMER_CONSTRAINT].number, 1);
  EXPECT_EQ(d->warning[mjWARN_BADQACC].number, 0);
}

// Catches: mj_step2 taking another path than mj_step (the constraints solved in M, or the
// implicit step's late path taken under Euler or without the flag). mj_step1 + mj_step2 equal
// mj_step bit for bit, with contact, under implicit with the flag and without, and under Euler.
TEST_F(ImplicitPosContact, Step1Step2EqualsStep) {
  for (int setting = 0; setting < 3; ++setting) {
    ModelPtr m = LoadModelOrFail(LeggedXml(setting == 0 ? 1e5 : 1e2, 0, 0.005,
                                           setting == 2 ? "Euler" : "implicit", 0, 0));
    ASSERT_NE(m, nullptr);
    SetEnable(m.get(), mjENBL_IMPLICITPOS, setting != 1);
    DataPtr a(mj_makeData(m.get())), b(mj_makeData(m.get()));
    for (int t = 0; t < 40; ++t) {
      mj_step(m.get(), a.get());
      mj_step1(m.get(), b.get());
      mj_step2(m.get(), b.get());
    }
    ASSERT_GT(a->nefc, 0) << setting;
    EXPECT_TRUE(BitIdentical(StepState(m.get(), a.get()), StepState(m.get(), b.get()))) << setting;
  }
}

// Catches: a crash, NaN or silent corruption from bad gains with contact, and from solref and
// solimp at their limits. Non-finite and negative gains leave the flag's step as stock's (the
// terms are out of scope); kp 1e12 stands; solimp's dmin = dmax = 0.9999 and a timeconst below
// 2h (MuJoCo clamps it to 2h) stay finite.
TEST_F(ImplicitPosContact, BadInputWithContact) {
  for (double kp : {std::nan(""), HUGE_VAL, -1e3}) {
    ModelPtr m = LoadModelOrFail(LeggedXml(1, 0, 0.005, "implicit", 0, 0));
    ASSERT_NE(m, nullptr);
    MakeServos(m.get(), kp, 0);
    std::vector<mjtNum> state[2];
    for (bool flag : {false, true}) {
      SetEnable(m.get(), mjENBL_IMPLICITPOS, flag);
      DataPtr d(mj_makeData(m.get()));
      WarningCapture capture;
      for (int t = 0; t < 40; ++t) mj_step(m.get(), d.get());
      state[flag].assign(d->qpos, d->qpos + m->nq);
      state[flag].insert(state[flag].end(), d->qvel, d->qvel + m->nv);
    }
    EXPECT_TRUE(BitIdentical(state[0], state[1])) << "kp " << kp;
  }
  for (int limit = 0; limit < 3; ++limit) {
    ModelPtr m = LoadModelOrFail(LeggedXml(limit == 2 ? 1e12 : 1e6, 0, 0.005, "implicit", 0, 0));
    ASSERT_NE(m, nullptr);
    for (int g = 0; g < m->ngeom; ++g) {
      if (limit == 0) {
        m->geom_solref[mjNREF * g] = 1e-6;  // below 2h
      } else if (limit == 1) {
        m->geom_solimp[mjNIMP * g] = m->geom_solimp[mjNIMP * g + 1] = 0.9999;
      }
    }
    SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
    DataPtr d(mj_makeData(m.get()));
    EXPECT_TRUE(StepStable(m.get(), d.get(), 400)) << limit;
    EXPECT_GT(d->ncon, 0) << limit;
  }
}

}  // namespace
}  // namespace mjpos
