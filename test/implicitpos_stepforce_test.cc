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

// The force the step applied (mjData.actuator_force_step, qfrc_actuator_step, qfrc_smooth_step),
// against references the test computes on its own: the change of momentum M (v+ - v) / h from
// the mass matrix and the two velocities, and each actuator's force linearised at the end of the
// step from finite-difference slopes of actuator_force in qvel and qpos.

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "test/fixture.h"
#include "support/models.h"
#include "support/one_dof.h"

namespace mjpos {
namespace {

const char kHumanoid[] = MJPOS_MODEL_DIR "/humanoid/humanoid.xml";
constexpr double kInertia = 0.01576;

// an integrator and the flags, as a user sets them
struct Integration {
  const char* name;
  int integrator;
  bool flag;
  bool weighted;
};
const Integration kIntegrations[] = {
    {"Euler", mjINT_EULER, false, false},
    {"implicit", mjINT_IMPLICIT, false, false},
    {"implicit+implicitpos", mjINT_IMPLICIT, true, false},
    {"implicit+implicitpos+posweight", mjINT_IMPLICIT, true, true},
};

// the models of the issue: one hinge (kp 1e5, the README's example), a hinge spring, the 7-dof
// arm, the gear/tendon arm, the servo humanoid and the finger squeeze (contact)
struct Model {
  std::string name;
  ModelPtr m;
};
std::vector<Model> Models() {
  std::vector<Model> models;
  models.push_back({"hinge", LoadModelOrFail(OneHingeXml(kInertia, 1e5, 1, 0.005))});
  models.push_back({"hinge spring",
                    LoadModelOrFail(OneHingeSpringXml(kInertia, 1e5, 1, 0.005))});
  models.push_back({"arm7", LoadModelOrFail(ChainXml(7, 2e3, 20, 0.005))});
  // nu = nv = 8: each new mjData array ends on a 64-byte boundary, so an index one past its end
  // is the next array's first element (or past the buffer)
  models.push_back({"chain8", LoadModelOrFail(ChainXml(8, 2e3, 20, 0.005))});
  models.push_back({"gear/tendon arm", LoadModelOrFail(GearTendonArmXml(2e3, 20, 0.005))});
  std::string error;
  models.push_back({"servo humanoid", ModelPtr(LoadWithServos(kHumanoid, 2e3, 20, &error))});
  EXPECT_NE(models.back().m, nullptr) << error;
  models.push_back({"finger squeeze", LoadModelOrFail(FingerSqueezeXml(2e3, 20, 0.005))});
  // one tendon across two branches, with a velocity gain: the step applies its whole velocity
  // term and K through the update of its solve, qDeriv holds the part on the pattern of M; after
  // a motor (the row is actuator 1), its proximal coefficients 0.8 and 1.3 (not +-1)
  std::string hand = TwoFingerHandXml(2e3, 20, 0.005);
  hand.replace(hand.find("<actuator>"), 10, "<actuator><motor joint=\"left1\"/>");
  models.push_back({"two-finger hand", LoadModelOrFail(hand)});
  if (mjModel* m = models.back().m.get()) {
    m->wrap_prm[m->tendon_adr[0]] = 0.8;
    m->wrap_prm[m->tendon_adr[0] + 2] = 1.3;
  }

  // a tree whose rows of qDeriv have gaps ({0, 2, 3, 4}, {0, 2, 3}, {0, 2, 4}): the product
  // h*qDeriv*qacc takes only a row of consecutive columns as one dot product
  models.push_back({"branched tree", LoadModelOrFail(BranchedTreeXml(2e3, 20, 0.005))});

  // gains with a velocity term: force (kp - 5 velocity) ctrl on the first joint of a chain,
  // (kp - 3 velocity) ctrl on its third (actuator 2: each reads its own row of gainprm)
  models.push_back({"velocity gain", LoadModelOrFail(ChainXml(3, 2e3, 20, 0.005))});
  if (mjModel* m = models.back().m.get()) {
    m->actuator_gaintype[0] = m->actuator_gaintype[2] = mjGAIN_AFFINE;
    m->actuator_gainprm[2] = -5;
    m->actuator_gainprm[2 * mjNGAIN + 2] = -3;
  }

  // a servo without a velocity term (kv 0: in K, dfdv 0) and a force of velocity slope exactly
  // +1 without a position slope (actuator 1: dfdv 1, outside K), which the per-actuator skip of
  // the outputs must tell from an actuator with neither; a negative spring, which no output may
  // count as a term of K
  models.push_back({"kv 0 and a unit velocity slope", LoadModelOrFail(ChainXml(2, 2e3, 0, 0.005))});
  if (mjModel* m = models.back().m.get()) {
    m->actuator_biasprm[mjNBIAS + 1] = 0;
    m->actuator_biasprm[mjNBIAS + 2] = 1;
    m->jnt_stiffness[0] = -5;  // and a spring that is not restoring: explicit, out of K
  }

  // the same two with an affine gain of no slope (the same forces): not position servos
  // (actuator_posdiag -1), so their velocity slope is mjd_actuatorVel's and the skip of an
  // actuator with neither slope nor K is tested on them, where the servos' path does not test it
  models.push_back({"kv 0 and a unit velocity slope, affine gains",
                    LoadModelOrFail(ChainXml(2, 2e3, 0, 0.005))});
  if (mjModel* m = models.back().m.get()) {
    m->actuator_biasprm[mjNBIAS + 1] = 0;
    m->actuator_biasprm[mjNBIAS + 2] = 1;
    m->actuator_gaintype[0] = m->actuator_gaintype[1] = mjGAIN_AFFINE;
  }

  // a muscle behind a servo (actuator 1, its activation act[0]), activated
  models.push_back({"servo and muscle", LoadModelOrFail(
      "<mujoco><option timestep=\"0.005\" integrator=\"implicit\"/><worldbody>\n"
      "  <body><joint name=\"a\" axis=\"0 1 0\" armature=\"0.01\"/>"
      "<geom type=\"capsule\" fromto=\"0 0 0 .2 0 0\" size=\".02\"/>\n"
      "    <body pos=\".2 0 0\"><joint name=\"b\" axis=\"0 1 0\" armature=\"0.01\"/>"
      "<geom type=\"capsule\" fromto=\"0 0 0 .2 0 0\" size=\".02\"/></body></body>\n"
      "</worldbody><actuator>\n"
      "  <general joint=\"a\" gainprm=\"2000\" biastype=\"affine\" biasprm=\"0 -2000 -20\"/>\n"
      "  <muscle joint=\"b\" lengthrange=\"-1 1\"/>\n"
      "</actuator></mujoco>")});

  // every transmission and force class of the scope tests, in K or not (spatial tendon, site,
  // body, ball and free joints, muscle, clamped, non-restoring, motor, springs)
  for (const ScopeConfiguration& c : ScopeConfigurations(2e3, 2e3)) {
    models.push_back({c.name, LoadModelOrFail(c.xml)});
  }
  for (Model& model : models) {
    if (model.m) model.m->opt.timestep = 0.005;
  }
  return models;
}

void SetIntegration(mjModel* m, const Integration& s) {
  m->opt.integrator = s.integrator;
  SetEnable(m, mjENBL_IMPLICITPOS, s.flag);
  SetEnable(m, mjENBL_POSWEIGHT, s.weighted);
}

// a state away from rest: targets off the current pose, joints moving
void SetMoving(const mjModel* m, mjData* d) {
  mj_resetData(m, d);
  HoldPose(m, d);
  for (int i = 0; i < m->nu; ++i) d->ctrl[i] += 0.2 * std::cos(1.3 * i + 0.5);
  int first = m->nq > m->nv ? 6 : 0;  // a free root keeps still
  for (int i = first; i < m->nv; ++i) d->qvel[i] = 0.5 * std::sin(1.7 * i + 0.4);
  if (m->nu == 1 && m->nv == 1) d->ctrl[0] = 1;  // one hinge: a unit step
  for (int i = 0; i < m->na; ++i) d->act[i] = 0.4 + 0.1 * i;  // muscles active
  mj_forward(m, d);
}

// M (v+ - v) / h for the step from start to end, M dense from start's mass matrix
std::vector<double> MomentumChange(const mjModel* m, const mjData* start, const mjData* end) {
  int nv = m->nv;
  std::vector<double> mass(nv * nv), out(nv, 0.0);
  mj_fullM(m, mass.data(), start->qM);
  for (int r = 0; r < nv; ++r) {
    for (int c = 0; c < nv; ++c) {
      out[r] += mass[r * nv + c] * (end->qvel[c] - start->qvel[c]) / m->opt.timestep;
    }
  }
  return out;
}

// d actuator_force / d qvel (vel = true) or / d qpos (in the dofs' tangent space) at qvel = 0,
// nu x nv, by central differences at the state of start: the position slope is then the length's
// alone, d force / d length times d length / d qpos, without the velocity's change with a moment
// that turns (a spatial tendon's, a site's), which the step's linearisation leaves out; the
// forces of the models on hinges, slides and fixed tendons are affine in both, so eps only sets
// the rounding there (a site's length is not: its position slopes take eps 1e-5). A muscle's
// position slope depends on its velocity (its velocity curve scales its length curve): in a model
// with one, qvel is kept (its muscles drive joints, whose moments do not turn)
std::vector<double> ForceSlopes(const mjModel* m, const mjData* start, bool vel, double eps) {
  bool muscle = false;
  for (int i = 0; i < m->nu; ++i) muscle = muscle || m->actuator_gaintype[i] == mjGAIN_MUSCLE;
  int nu = m->nu, nv = m->nv;
  std::vector<double> slope(nu * nv), dq(nv);
  std::vector<double> plus(nu);
  mjData* d = mj_makeData(m);
  for (int j = 0; j < nv; ++j) {
    for (int side : {1, -1}) {
      mj_copyData(d, m, start);
      if (vel) {
        d->qvel[j] += side * eps;
      } else {
        if (!muscle) mju_zero(d->qvel, nv);
        std::fill(dq.begin(), dq.end(), 0.0);
        dq[j] = side * eps;
        mj_integratePos(m, d->qpos, dq.data(), 1);
      }
      mj_forward(m, d);
      for (int i = 0; i < nu; ++i) {
        if (side == 1) {
          plus[i] = d->actuator_force[i];
        } else {
          slope[i * nv + j] = (plus[i] - d->actuator_force[i]) / (2 * eps);
        }
      }
    }
  }
  mj_deleteData(d);
  return slope;
}

// each actuator's force linearised at the end of the step, from the slopes of ForceSlopes: the
// velocity term under implicit (of the force before its clamp), and the position term of each
// term of K (its scope RESTORING) with its weight
std::vector<double> ReferenceForce(const mjModel* m, mjData* start, const mjData* end,
                                   const Integration& s) {
  int nu = m->nu, nv = m->nv;
  double h = m->opt.timestep;
  std::vector<double> force(start->actuator_force, start->actuator_force + nu);
  if (s.integrator != mjINT_IMPLICIT) return force;
  // the velocity slope of the force before its clamp: qDeriv (mjd_actuator_vel) ignores
  // forcerange, so a clamped actuator's step applies it too
  ModelPtr unclamped(mj_copyModel(nullptr, m));
  for (int i = 0; i < nu; ++i) unclamped->actuator_forcelimited[i] = 0;
  std::vector<double> dfdv = ForceSlopes(unclamped.get(), start, true, 1e-3);
  std::vector<double> dfdq = ForceSlopes(m, start, false, 1e-5);
  for (int i = 0; i < nu; ++i) {
    bool in_k = s.flag && mjd_actuatorPosScope(m, start, i, nullptr) == mjPOSSCOPE_RESTORING;
    double theta = s.weighted ? mjd_posWeight(m, start, mjOBJ_ACTUATOR, i) : 1;
    for (int j = 0; j < nv; ++j) {
      force[i] += dfdv[i * nv + j] * (end->qvel[j] - start->qvel[j]);
      if (in_k) force[i] += theta * dfdq[i * nv + j] * h * end->qvel[j];
    }
  }
  return force;
}

// the flag held actuator i at a bound of its forcerange in the last step: its applied force is
// the bound (mj_stepForceLimit; its own test checks that this happens where it must)
bool HeldAtBound(const mjModel* m, const mjData* d, int i) {
  const mjtNum* range = m->actuator_forcerange + 2 * i;
  return (m->opt.enableflags & mjENBL_IMPLICITPOS) && m->actuator_forcelimited[i] &&
         (d->actuator_force_step[i] == range[0] || d->actuator_force_step[i] == range[1]);
}

// the smooth and constraint forces the step reports it applied
std::vector<double> ReportedForce(const mjModel* m, const mjData* d) {
  std::vector<double> force(m->nv);
  for (int i = 0; i < m->nv; ++i) force[i] = d->qfrc_smooth_step[i] + d->qfrc_constraint[i];
  return force;
}

// check(name, m, s, start, end) for one step of every model under every integration, from the
// moving state of SetMoving
template <typename Check>
void ForEachStep(Check check) {
  for (Model& model : Models()) {
    mjModel* m = model.m.get();
    if (!m) continue;
    for (const Integration& s : kIntegrations) {
      SetIntegration(m, s);
      DataPtr start(mj_makeData(m)), d(mj_makeData(m));
      SetMoving(m, start.get());
      mj_copyData(d.get(), m, start.get());
      mj_step(m, d.get());
      check(model.name + ", " + s.name, m, s, start.get(), d.get());
    }
  }
}

// one step from start with the disable flag set, into a new mjData whose outputs of the applied
// force are NaN before the step (every step writes them whole, whatever it leaves out); poison:
// the MuJoCo stack filled with NaN too, so that a value the step reads before setting it shows
DataPtr StepDisabled(mjModel* m, const mjData* start, int flag, bool poison) {
  m->opt.disableflags |= flag;
  DataPtr d(mj_makeData(m));
  mj_copyData(d.get(), m, start);
  const mjtNum nan = std::numeric_limits<mjtNum>::quiet_NaN();
  std::fill(d->actuator_force_step, d->actuator_force_step + m->nu, nan);
  std::fill(d->qfrc_actuator_step, d->qfrc_actuator_step + m->nv, nan);
  std::fill(d->qfrc_smooth_step, d->qfrc_smooth_step + m->nv, nan);
  if (poison) {
    std::fill(d->stack, d->stack + d->nstack, nan);
  }
  mj_step(m, d.get());
  m->opt.disableflags &= ~flag;
  return d;
}

// fails on a MuJoCo warning outside a WarningCapture
class ImplicitPosStepForce : public MujocoTest {};

// Catches: a term of the step missing from qfrc_smooth_step (Euler's implicit damping, the
// velocity derivative qDeriv under implicit, the springs or servos of K), or counted at the start
// of the step instead of its end: the change of momentum differs from the forces reported.
TEST_F(ImplicitPosStepForce, MomentumChangeIsTheReportedForce) {
  ForEachStep([](const std::string& name, mjModel* m, const Integration&, mjData* start,
                 mjData* d) {
    EXPECT_LE(RelDiff(ReportedForce(m, d), MomentumChange(m, start, d)), 1e-10) << name;
  });
}

// Catches: a term dropped from actuator_force_step or qfrc_actuator_step (the velocity slope, the
// position term of K, its weight), a term applied to an actuator outside K, or the joint-space
// sum taken over the wrong moments.
TEST_F(ImplicitPosStepForce, ActuatorForceIsTheLinearisationAtTheEnd) {
  ForEachStep([](const std::string& name, mjModel* m, const Integration& s, mjData* start,
                 mjData* d) {
    std::vector<double> reference = ReferenceForce(m, start, d, s);
    std::vector<double> reported(d->actuator_force_step, d->actuator_force_step + m->nu);
    for (int i = 0; i < m->nu; ++i) {
      if (HeldAtBound(m, d, i)) reference[i] = reported[i];  // ForceLimitedServosHeld
    }
    EXPECT_LE(RelDiff(reported, reference), 1e-8) << name;

    // joint space: the moments times the reference
    std::vector<double> joint(m->nv, 0.0);
    for (int i = 0; i < m->nu; ++i) {
      for (int j = 0; j < m->nv; ++j) {
        joint[j] += start->actuator_moment[i * m->nv + j] * reference[i];
      }
    }
    std::vector<double> reported_joint(d->qfrc_actuator_step, d->qfrc_actuator_step + m->nv);
    EXPECT_LE(RelDiff(reported_joint, joint), 1e-8) << name;
  });
}

// Catches: an actuator held at a bound read from another actuator's range (holdCrossing; the
// one-actuator HeldAtTheBoundItCrosses cannot see it). Three servos of a chain, at their targets and moving away
// from them: the start force (the velocity term) is inside each range, the force the step applies
// (the stiffness over the step's motion) beyond its upper bound; ranges +-1, +-2, +-3. With the
// flag, each is held exactly at its own upper bound; flipped, at its own lower bound. The stack is
// poisoned first, so that a hold flag or bound not written by the step is seen.
TEST_F(ImplicitPosStepForce, EachHeldAtItsOwnBound) {
  for (double sign : {1.0, -1.0}) {
    ModelPtr m = LoadModelOrFail(ChainXml(3, 1e4, 0.05, 0.005));
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(m->nu, 3);
    SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
    for (int i = 0; i < m->nu; ++i) {
      m->actuator_forcelimited[i] = 1;
      m->actuator_forcerange[2 * i] = -(i + 1.0);
      m->actuator_forcerange[2 * i + 1] = i + 1.0;
    }
    DataPtr d(mj_makeData(m.get()));
    m->opt.gravity[2] = 0;
    HoldPose(m.get(), d.get());
    for (int i = 0; i < m->nv; ++i) d->qvel[i] = -sign;
    mj_forward(m.get(), d.get());
    for (int i = 0; i < m->nu; ++i) {
      ASSERT_LT(std::abs(d->actuator_force[i]), i + 1.0) << i;  // inside at the start: in K
    }
    // the stack poisoned: a hold read from scratch the step did not write shows
    std::fill(d->stack + d->pstack, d->stack + d->nstack, -1.0);
    mj_step(m.get(), d.get());
    for (int i = 0; i < m->nu; ++i) {
      EXPECT_EQ(d->actuator_force_step[i], sign * (i + 1.0)) << "actuator " << i << " sign "
                                                             << sign;
    }
  }
}

// Catches: an applied force beyond forcerange under the flag for an actuator in K (no hold, or a
// hold at the wrong bound), a hold that leaves the actuator's velocity slope or term of K in the
// step's matrix or its force out of the right side (the change of momentum then differs from the
// forces reported), or a hold that never engages. Without the flag the same runs leave the range
// (stock implicit's velocity slope ignores the clamp), so the runs do cross it. A held actuator
// is one whose explicit force is inside the range and whose applied force is at a bound; one
// clamped at the step's start is out of K and keeps stock's step (ScopeTest: bit-identical).
TEST_F(ImplicitPosStepForce, ForceLimitedServosHeldAtTheirRange) {
  struct Limited {
    std::string name;
    ModelPtr m;
    double range;  // actuator i: +-range (1 + (i % 3) / 10), each its own
    int unlimited = -1;  // an actuator left without a range (always in K)
  };
  std::vector<Limited> models;
  std::string error;
  int stock_beyond = 0;
  models.push_back({"servo humanoid", ModelPtr(LoadWithServos(kHumanoid, 1e3, 10, &error)), 100});
  models.push_back({"finger squeeze", LoadModelOrFail(FingerSqueezeXml(1e4, 100, 0.005)), 50});
  models.push_back({"gear/tendon arm", LoadModelOrFail(GearTendonArmXml(2e3, 20, 0.005)), 20});
  // held rows: servos on spatial tendons (mjd_addActuatorTerm takes a held row out of the
  // matrix), and the hand's tendon across two branches (out of the solve's update)
  models.push_back({"spatial tendons", LoadModelOrFail(RowServoXml("spatial", 2e3, 20, 0.005)),
                    20});
  // (its links 1000 times heavier, kp 1e4: the light hand's explicit force is never inside the
  // range when its applied force crosses it)
  // and with a second tendon across the branches (the distal joints, opposed), kp 1e3 (stock
  // stable) and no range, so that a step holds the closing row and keeps the spreading one, in
  // K, in the re-solve's update (limited too, it is clamped at the start whenever the other
  // crosses: out of K)
  std::string hand = TwoFingerHandXml(1e4, 1, 0.005);
  hand.replace(hand.find("</fixed>"), 8,
               "</fixed><fixed name=\"spread\"><joint joint=\"left2\" coef=\"1\"/>"
               "<joint joint=\"right2\" coef=\"-1\"/></fixed>");
  hand.replace(hand.find("</actuator>"), 11,
               "<general tendon=\"spread\" gainprm=\"1e3\" biastype=\"affine\" "
               "biasprm=\"0 -1e3 -1\"/></actuator>");
  models.push_back({"heavy two-finger hand", LoadModelOrFail(hand), 50, 1});
  if (mjModel* m = models.back().m.get()) {
    for (int b = 0; b < m->nbody; ++b) {
      m->body_mass[b] *= 1000;
      for (int k = 0; k < 3; ++k) m->body_inertia[3 * b + k] *= 1000;
    }
    for (int j = 0; j < m->nv; ++j) m->dof_armature[j] *= 1000;
    DataPtr d(mj_makeData(m));
    mj_setConst(m, d.get());
  }
  for (Limited& l : models) {
    mjModel* m = l.m.get();
    ASSERT_NE(m, nullptr) << l.name << error;
    m->opt.timestep = 0.005;
    m->opt.integrator = mjINT_IMPLICIT;
    std::vector<double> range(m->nu);
    for (int i = 0; i < m->nu; ++i) {
      range[i] = l.range * (1 + (i % 3) / 10.0);
      m->actuator_forcelimited[i] = i != l.unlimited;
      m->actuator_forcerange[2 * i] = -range[i];
      m->actuator_forcerange[2 * i + 1] = range[i];
    }
    for (int mode = 0; mode < 3; ++mode) {  // flag off, flag, weighted
      SetEnable(m, mjENBL_IMPLICITPOS, mode > 0);
      SetEnable(m, mjENBL_POSWEIGHT, mode == 2);
      DataPtr d(mj_makeData(m)), start(mj_makeData(m));
      SetMoving(m, d.get());
      std::vector<double> hold(d->ctrl, d->ctrl + m->nu);
      int beyond = 0, held = 0, clamped_held = 0;
      for (int t = 0; t < 200; ++t) {
        for (int i = 0; i < m->nu; ++i) {
          d->ctrl[i] = hold[i] + 0.3 * std::sin(2 * M_PI * d->time + 0.7 * i);
        }
        mj_forward(m, d.get());
        mj_copyData(start.get(), m, d.get());
        mj_step(m, d.get());
        for (int i = 0; i < m->nu; ++i) {
          if (i == l.unlimited) continue;
          // with the flag, an actuator clamped at the start is out of K and left as stock's
          double f = d->actuator_force_step[i];
          bool inside = std::abs(start->actuator_force[i]) < range[i];
          beyond += (mode == 0 || inside) && (f < -range[i] || f > range[i]);
          held += HeldAtBound(m, d.get(), i) && inside;
          clamped_held += HeldAtBound(m, d.get(), i) && !inside;
        }
        ASSERT_LE(RelDiff(ReportedForce(m, d.get()), MomentumChange(m, start.get(), d.get())),
                  1e-10)
            << l.name << ", mode " << mode << ", step " << t;
      }
      if (mode == 0) {
        stock_beyond += beyond;
      } else {
        EXPECT_EQ(beyond, 0) << l.name << ", mode " << mode;
      }
      if (mode == 1) EXPECT_GT(held, 0) << l.name;
      EXPECT_EQ(clamped_held, 0) << l.name << ", mode " << mode;
    }
  }
  EXPECT_GT(stock_beyond, 0);  // the humanoid and the fingers; the arm's damping pulls inward
}

// Catches: a velocity or position term reported for disabled actuators: with actuation disabled
// (mjDSBL_ACTUATION) the step applies no actuator force, so both outputs are 0, and the smooth
// force is the explicit one plus the passive and bias terms alone.
TEST_F(ImplicitPosStepForce, DisabledActuationAppliesNoActuatorForce) {
  ForEachStep([](const std::string& name, mjModel* m, const Integration& s, mjData* start,
                 mjData*) {
    DataPtr d = StepDisabled(m, start, mjDSBL_ACTUATION, false);
    for (int i = 0; i < m->nu; ++i) EXPECT_EQ(d->actuator_force_step[i], 0) << name;
    for (int i = 0; i < m->nv; ++i) EXPECT_EQ(d->qfrc_actuator_step[i], 0) << name;
    EXPECT_LE(RelDiff(ReportedForce(m, d.get()), MomentumChange(m, start, d.get())), 1e-10)
        << name;
  });
}

// Catches: a spring's term reported with passive forces disabled (mjDSBL_PASSIVE): the step then
// has no spring in K, and reads no stiffness of one (kspring, which it sets only when a spring is
// in K). The MuJoCo stack is filled with NaN before the step, so that a stiffness read where none
// was set shows in the smooth force.
TEST_F(ImplicitPosStepForce, DisabledPassiveAppliesNoSpringTerm) {
  ForEachStep([](const std::string& name, mjModel* m, const Integration& s, mjData* start,
                 mjData*) {
    DataPtr d = StepDisabled(m, start, mjDSBL_PASSIVE, true);
    EXPECT_LE(RelDiff(ReportedForce(m, d.get()), MomentumChange(m, start, d.get())), 1e-10)
        << name;
  });
}

// Catches: a hold at the wrong bound, or none. One heavy hinge (I 10) with a servo (kp 1e4,
// forcerange +-100) a little off its target (explicit force +-70, inside the range, so in K) and
// moving away from it: its term of K, kp h v+, carries the linearised force past the bound on
// its own side, and the flag holds it there, +100 above and -100 below. Stock's step has no such
// term and stays inside. With gear 1.5 too, where the held term's moment is not its square.
TEST_F(ImplicitPosStepForce, HeldAtTheBoundItCrosses) {
  ModelPtr m = LoadModelOrFail(OneHingeXml(10, 1e4, 1, 0.005));
  ASSERT_NE(m, nullptr);
  m->actuator_forcelimited[0] = 1;
  m->actuator_forcerange[0] = -100;
  m->actuator_forcerange[1] = 100;
  for (double gear : {1.0, 1.5}) {
    m->actuator_gear[0] = gear;
    for (double side : {1.0, -1.0}) {
      for (bool flag : {false, true}) {
        SetEnable(m.get(), mjENBL_IMPLICITPOS, flag);
        DataPtr start(mj_makeData(m.get())), d(mj_makeData(m.get()));
        start->ctrl[0] = side * 0.005;
        start->qvel[0] = -side * 20;
        mj_forward(m.get(), start.get());
        ASSERT_LT(std::abs(start->actuator_force[0]), 100);
        mj_copyData(d.get(), m.get(), start.get());
        mj_step(m.get(), d.get());
        if (flag) {
          EXPECT_EQ(d->actuator_force_step[0], side * 100) << "gear " << gear << " side " << side;
        } else {
          EXPECT_LT(std::abs(d->actuator_force_step[0]), 100) << "gear " << gear << " side "
                                                               << side;
        }
        EXPECT_LE(RelDiff(ReportedForce(m.get(), d.get()), MomentumChange(m.get(), start.get(),
                                                                          d.get())), 1e-10);
      }
    }
  }
}

// Catches: an actuator held that does not cross its own range (the range of another read for
// it). Two servos on one hinge (I 10): the first crosses as in HeldAtTheBoundItCrosses, the
// second (kp 10, in K) stays far inside its +-1e6. Whether the second is force-limited then
// changes nothing, bit for bit, and the first is held at its bound either way.
TEST_F(ImplicitPosStepForce, HoldsOnlyTheActuatorThatCrosses) {
  ModelPtr m = LoadModelOrFail(
      "<mujoco><option timestep=\"0.005\" integrator=\"implicit\"/><worldbody><body>"
      "<joint name=\"hinge\" axis=\"0 1 0\" armature=\"10\"/><geom size=\".01\" mass=\"1e-6\"/>"
      "</body></worldbody><actuator>"
      "<general joint=\"hinge\" gainprm=\"1e4\" biastype=\"affine\" biasprm=\"0 -1e4 -1\" "
      "forcelimited=\"true\" forcerange=\"-100 100\"/>"
      "<general joint=\"hinge\" gainprm=\"10\" biastype=\"affine\" biasprm=\"0 -10 -1\" "
      "forcelimited=\"false\" forcerange=\"-1e6 1e6\"/></actuator></mujoco>");
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  for (double side : {1.0, -1.0}) {
    std::vector<double> force[2];
    for (int limited : {0, 1}) {
      m->actuator_forcelimited[1] = limited;
      DataPtr d(mj_makeData(m.get()));
      d->ctrl[0] = d->ctrl[1] = side * 0.005;
      d->qvel[0] = -side * 20;
      mj_step(m.get(), d.get());
      EXPECT_EQ(d->actuator_force_step[0], side * 100) << "side " << side;
      force[limited].assign(d->actuator_force_step, d->actuator_force_step + m->nu);
      force[limited].push_back(d->qvel[0]);
    }
    EXPECT_TRUE(BitIdentical(force[0], force[1])) << "side " << side;
  }
}

// Catches: RK4 reporting a stage's force other than the first (mj_forwardSkip overwrites
// actuator_force at each stage), or leaving the outputs of an earlier step.
TEST_F(ImplicitPosStepForce, RungeKuttaReportsTheStartOfTheStep) {
  for (Model& model : Models()) {
    mjModel* m = model.m.get();
    if (!m) continue;
    m->opt.integrator = mjINT_RK4;
    DataPtr start(mj_makeData(m)), d(mj_makeData(m));
    SetMoving(m, start.get());
    mj_copyData(d.get(), m, start.get());
    mj_step(m, d.get());
    EXPECT_TRUE(BitIdentical({d->actuator_force_step, d->actuator_force_step + m->nu},
                             {start->actuator_force, start->actuator_force + m->nu}))
        << model.name;
    EXPECT_TRUE(BitIdentical({d->qfrc_actuator_step, d->qfrc_actuator_step + m->nv},
                             {start->qfrc_actuator, start->qfrc_actuator + m->nv}))
        << model.name;
    EXPECT_TRUE(BitIdentical({d->qfrc_smooth_step, d->qfrc_smooth_step + m->nv},
                             {start->qfrc_smooth, start->qfrc_smooth + m->nv}))
        << model.name;
  }
}

// Catches: the README's example gone: one hinge servo at kp 1e5 from a unit error reports the
// explicit 1e5 in actuator_force, and in actuator_force_step the force its inertia received,
// I (v+ - v) / h, about 160 times less.
TEST_F(ImplicitPosStepForce, OneHingeServoAboveTheCap) {
  ModelPtr m = LoadModelOrFail(OneHingeXml(kInertia, 1e5, 1, 0.005));
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  DataPtr d(mj_makeData(m.get()));
  d->ctrl[0] = 1;
  mj_step(m.get(), d.get());
  double inertia = d->qM[0];
  EXPECT_EQ(d->actuator_force[0], 1e5);
  EXPECT_LE(RelDiff(d->actuator_force_step[0], inertia * d->qvel[0] / 0.005), 1e-10);
  EXPECT_GT(d->actuator_force[0] / d->actuator_force_step[0], 100);
}

// Catches: mj_resetData leaving the last step's outputs, or the outputs left to the buffer's fill
// (mj_resetDataDebug fills it with a byte before the reset sets each array).
TEST_F(ImplicitPosStepForce, ResetClearsTheOutputs) {
  ModelPtr m = LoadModelOrFail(GearTendonArmXml(2e3, 20, 0.005));
  ASSERT_NE(m, nullptr);
  DataPtr d(mj_makeData(m.get()));
  SetMoving(m.get(), d.get());
  mj_step(m.get(), d.get());
  ASSERT_NE(d->actuator_force_step[0], 0);
  mj_resetDataDebug(m.get(), d.get(), 'a');
  for (int i = 0; i < m->nu; ++i) EXPECT_EQ(d->actuator_force_step[i], 0);
  for (int i = 0; i < m->nv; ++i) {
    EXPECT_EQ(d->qfrc_actuator_step[i], 0);
    EXPECT_EQ(d->qfrc_smooth_step[i], 0);
  }
}

}  // namespace
}  // namespace mjpos
