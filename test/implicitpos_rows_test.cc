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

// Servos whose moment is a row on several dofs of one chain (mjd_addActuatorTerm): a Cartesian
// servo on a site with a refsite, spatial tendons, ball joints. Their term of K is the
// Gauss-Newton term -slope m'm: exact where the force is zero (the moment is the gradient of the
// length), without (dm/dq)'f elsewhere, whose size is measured here. Stability at every gain, with
// and without the accuracy weights; bad gains; a moment on two branches left out.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "test/fixture.h"
#include "support/accuracy.h"
#include "support/models.h"
#include "support/one_dof.h"

namespace mjpos {
namespace {

constexpr double kH = 0.005;
const char* const kKinds[] = {"site", "spatial", "ball"};

// a posture away from qpos0 (hinges turned, ball joints rotated) with velocities on every dof
void SetPosture(const mjModel* m, mjData* d) {
  for (int j = 0; j < m->njnt; ++j) {
    double* q = d->qpos + m->jnt_qposadr[j];
    if (m->jnt_type[j] == mjJNT_BALL) {
      double axis[3] = {0.6, 0, 0.8}, half = 0.15 * (j + 1);
      q[0] = std::cos(half);
      for (int k = 0; k < 3; ++k) q[k + 1] = std::sin(half) * axis[k];
    } else {
      q[0] = 0.3 + 0.2 * j;
    }
  }
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = 0.5 * std::sin(1.0 + i);
  mj_forward(m, d);
}

class ImplicitPosRows : public MujocoTest {};

// Catches: a row term missing from K or from its shift, on a dof or a pair of dofs of its chain,
// or with a wrong slope. With every servo at its target and no damping the forces are zero, and
// -slope m'm is the whole derivative where m is the gradient of the length: the spatial tendons
// and the site with a world refsite anywhere, the ball joints at their rest (qpos0), their gears
// in the joint's frame and in its parent's (jointinparent).
TEST_F(ImplicitPosRows, TermIsTheFiniteDifferenceWhereTheForceIsZero) {
  for (std::string label : {"site", "spatial", "ball", "ball in parent"}) {
    bool in_parent = label == "ball in parent";
    std::string kind = in_parent ? "ball" : label;
    for (double kp : {1.0, 1e3, 1e6}) {
      ModelPtr m = LoadModelOrFail(RowServoXml(kind, kp, 0, kH));
      ASSERT_NE(m, nullptr);
      m->opt.gravity[2] = 0;
      for (int j = 0; j < m->njnt; ++j) m->dof_damping[m->jnt_dofadr[j]] = 0;
      for (int i = 0; in_parent && i < m->nu; ++i) {
        m->actuator_trntype[i] = mjTRN_JOINTINPARENT;  // the gears in the parent's frame
      }
      DataPtr d(mj_makeData(m.get()));
      if (kind != "ball") {
        SetPosture(m.get(), d.get());
      } else {
        for (int i = 0; i < m->nv; ++i) d->qvel[i] = 0.5 * std::sin(1.0 + i);
        mj_forward(m.get(), d.get());
      }
      HoldPose(m.get(), d.get());
      mj_forward(m.get(), d.get());
      KError error = KAgainstFiniteDifference(m.get(), d.get(), 1e-6);
      EXPECT_GT(error.scale, 0.01 * kp) << label << ": nothing compared, kp " << kp;
      EXPECT_LE(error.k, 1e-6) << label << " kp " << kp;
      EXPECT_LE(error.kv, 1e-6) << label << " kp " << kp;
    }
  }
}

// the row-servo model of kind with gain 1e3, no damping and no gravity, posed (SetPosture,
// except a rope of ball joints, left at rest) with each servo's target error away from its length
ModelPtr ForceModel(const char* kind, double error, DataPtr* d) {
  ModelPtr m = LoadModelOrFail(RowServoXml(kind, 1e3, 0, kH));
  if (!m) return m;
  m->opt.gravity[2] = 0;
  for (int j = 0; j < m->njnt; ++j) m->dof_damping[m->jnt_dofadr[j]] = 0;
  d->reset(mj_makeData(m.get()));
  if (std::string(kind) != "ball") SetPosture(m.get(), d->get());
  mj_forward(m.get(), d->get());
  HoldPose(m.get(), d->get());
  for (int i = 0; i < m->nu; ++i) (*d)->ctrl[i] += error;
  mj_forward(m.get(), d->get());
  return m;
}

// Catches: a claim about what the Gauss-Newton term leaves out that does not hold. Away from
// their targets the servos of the site and of the spatial tendons pull with a force f, and the
// term leaves out (dm/dq)'f, which is proportional to f: measured against the finite difference,
// it grows tenfold from an error of 0.01 to one of 0.1 in every servo's length (doc/scope.md
// states the figures printed here). A ball joint's moment is constant: its term leaves out
// nothing at any force at the joint's rest.
TEST_F(ImplicitPosRows, WhatTheTermLeavesOutIsProportionalToTheForce) {
  for (const char* kind : {"site", "spatial"}) {
    double left[2];
    for (int e = 0; e < 2; ++e) {
      double error = e ? 0.1 : 0.01;
      DataPtr d;
      ModelPtr m = ForceModel(kind, error, &d);
      ASSERT_NE(m, nullptr);
      left[e] = KAgainstFiniteDifference(m.get(), d.get(), 1e-6).k;
      std::printf("%s: error %g in each length leaves out %.4f of K\n", kind, error, left[e]);
    }
    EXPECT_GT(left[0], 1e-4) << kind << ": nothing left out";
    EXPECT_GT(left[1] / left[0], 8) << kind;
    EXPECT_LT(left[1] / left[0], 12) << kind;
  }
  DataPtr d;
  ModelPtr m = ForceModel("ball", 0.1, &d);
  ASSERT_NE(m, nullptr);
  EXPECT_LE(KAgainstFiniteDifference(m.get(), d.get(), 1e-6).k, 1e-6);
}

// Catches: a claim about a ball joint's servo term away from the joint's rest that does not
// hold. Its length is the rotation vector along the gear, as the spring's force, so that the term
// leaves out what the spring's does: about half the angle (ImplicitPosJoints), with the servos at
// their targets (no force).
TEST_F(ImplicitPosRows, BallServoAwayFromRestLeavesOutHalfTheAngle) {
  const double axis[3] = {0.6, 0, 0.8};
  for (double angle : {0.1, 0.5}) {
    DataPtr d;
    ModelPtr m = ForceModel("ball", 0, &d);
    ASSERT_NE(m, nullptr);
    double* q = d->qpos + m->jnt_qposadr[0];
    q[0] = std::cos(angle / 2);
    for (int k = 0; k < 3; ++k) q[k + 1] = std::sin(angle / 2) * axis[k];
    mj_forward(m.get(), d.get());
    HoldPose(m.get(), d.get());
    mj_forward(m.get(), d.get());
    double left = KAgainstFiniteDifference(m.get(), d.get(), 1e-6).k;
    std::printf("ball servo, angle %g: left out %.4f\n", angle, left);
    EXPECT_GT(left, 0.35 * angle) << "angle " << angle;
    EXPECT_LT(left, 0.5 * angle) << "angle " << angle;
  }
}

// the model after n steps, flag on or off, with the weights or not, from a moving start with the
// servos' targets at their lengths (a target error e would make stock's start-of-step check of
// qacc warn once kp e / I passes mjMAXVAL)
bool Stable(const std::string& xml, bool flag, bool weighted, int n) {
  return StableFrom(xml, flag, weighted, n, [](const mjModel* m, mjData* d) {
    SetPosture(m, d);
    HoldPose(m, d);
  });
}

// Catches: a row term left explicit, or one the weights make unstable. At 5 ms and every gain
// from 1e2 to 1e12 (kv 1), 2 s of the Cartesian arm, the spatial-tendon arm and the ball-joint
// rope stay finite without a warning, with the flag and with the weights; stock diverges on each
// from 1e6 on.
TEST_F(ImplicitPosRows, StableAtEveryGain) {
  for (const char* kind : kKinds) {
    for (double kp : {1e2, 1e4, 1e5, 1e6, 1e8, 1e10, 1e12}) {
      std::string xml = RowServoXml(kind, kp, 1, kH);
      EXPECT_TRUE(Stable(xml, true, false, 400)) << kind << " flag, kp " << kp;
      EXPECT_TRUE(Stable(xml, true, true, 400)) << kind << " weighted, kp " << kp;
      if (kp >= 1e6) {
        EXPECT_FALSE(Stable(xml, false, false, 400)) << kind << " stock, kp " << kp;
      }
    }
  }
}

// Catches: a term on several branches left explicit (stock's step), or one the update of the
// solve or the weights make unstable. At 5 ms and every gain from 1e2 to 1e12 (kv 1), 2 s of the
// two-finger hand closed by one tendon and of the scope tests' tendons across two branches (fixed
// and spatial) stay finite without a warning, with the flag and with the weights; stock diverges
// on each from 1e8 on (the hand from 30: HandTakesItsWholeDamping).
TEST_F(ImplicitPosRows, TermOnSeveralBranchesStableAtEveryGain) {
  for (double kp : {1e2, 1e4, 1e5, 1e6, 1e8, 1e10, 1e12}) {
    std::vector<std::pair<std::string, std::string>> models = {
        {"two-finger hand", TwoFingerHandXml(kp, 1, kH)}};
    for (const ScopeConfiguration& c : ScopeConfigurations(kp, 0)) {
      if (c.name.find("tendon_branches") != std::string::npos) models.push_back({c.name, c.xml});
    }
    ASSERT_EQ(models.size(), 3u);
    for (const auto& [name, xml] : models) {
      EXPECT_TRUE(Stable(xml, true, false, 400)) << name << " flag, kp " << kp;
      EXPECT_TRUE(Stable(xml, true, true, 400)) << name << " weighted, kp " << kp;
      if (kp >= 1e8) {
        EXPECT_FALSE(Stable(xml, false, false, 400)) << name << " stock, kp " << kp;
      }
    }
  }
}

// Catches: the velocity term of a row on several branches left as stock's, whose qDeriv keeps
// only its part on the pattern of M: for the tendon that closes the two-finger hand, at kp 30 to
// 300 and kv 1, that part leaves stock unstable (the row's own cap, counted with its whole
// damping, is kp 412). The flag's step applies the whole term with K, and the weights, which
// count that damping, must stay stable with it.
TEST_F(ImplicitPosRows, HandTakesItsWholeDamping) {
  for (double kp : {30.0, 100.0, 300.0}) {
    std::string xml = TwoFingerHandXml(kp, 1, kH);
    EXPECT_FALSE(Stable(xml, false, false, 400)) << "stock, kp " << kp;
    EXPECT_TRUE(Stable(xml, true, false, 400)) << "flag, kp " << kp;
    EXPECT_TRUE(Stable(xml, true, true, 400)) << "weighted, kp " << kp;
  }
}

// every joint's position relative to qpos0 (a ball joint's quaternion components) after each
// `hold` steps of scheme s at timestep h over `steps` records, divided by kAmplitude, under input
// c from rest at the tuned targets: a step of every target by +-kAmplitude, a free decay from
// velocities +-kAmplitude wn on every dof, tracking of sinusoidal targets at 0.1 wn, a load
// (gravity); empty if it diverged
std::vector<double> RowResponse(mjModel* m, const std::vector<TunedServo>& servos, double wn,
                                Input c, Scheme s, double h, int steps, int hold) {
  double timestep = m->opt.timestep, gz = m->opt.gravity[2];
  m->opt.timestep = h;
  SetScheme(m, s);
  if (c != Input::kLoad) m->opt.gravity[2] = 0;
  DataPtr d(mj_makeData(m));
  if (c == Input::kDecay) {
    for (int i = 0; i < m->nv; ++i) d->qvel[i] = (i % 2 ? -1 : 1) * kAmplitude * wn;
  }
  std::vector<double> out;
  WarningCapture capture;
  bool stable = true;
  for (int k = 0; k < steps * hold && stable; ++k) {
    if (k % hold == 0) {
      for (size_t i = 0; i < servos.size(); ++i) {
        double sign = i % 2 ? -1 : 1, offset = 0;
        if (c == Input::kStep) offset = sign * kAmplitude;
        if (c == Input::kTrack01) {
          offset = kAmplitude * (std::sin(0.1 * wn * k * h + i) - std::sin(i));
        }
        d->ctrl[servos[i].actuator] = servos[i].target + offset;
      }
    }
    stable = StepStable(m, d.get(), 1);
    if (!stable) out.clear();
    if (!stable || (k + 1) % hold) continue;
    for (int i = 0; i < m->nq; ++i) out.push_back((d->qpos[i] - m->qpos0[i]) / kAmplitude);
  }
  m->opt.timestep = timestep;
  m->opt.gravity[2] = gz;
  return out;
}

// Catches: weights of the row terms that make the weighted mode less accurate than stock where
// stock is stable, or than backward Euler where it is not, on a kind of input it was not fitted
// to. The three row-servo models tuned the way robots are, every servo from its reflected inertia
// at one natural frequency (5 to 150 Hz, damping ratio 0.1 and 0.7, h 5 ms), under a step, a free
// decay, tracking and a load, over the input's window (InputWindow) and at least 100 steps: the
// weighted mode is stable, and its error against stock at h/100 is within 1.05x of stock's where
// stock is stable, and of backward Euler's elsewhere. On the site servo this needs each row's own
// inverse inertia (rowInvweight), not body_invweight0, an average over the body's axes. The rope
// of ball-joint servos is the documented exception (doc/posweight.md, "Ball joints"): its servos
// are weighted 1, so its error is backward Euler's, to rounding.
TEST_F(ImplicitPosRows, WeightedIsNoLessAccurateThanTheBetterScheme) {
  const Input inputs[] = {Input::kStep, Input::kDecay, Input::kTrack01, Input::kLoad};
  int stock_stable = 0, stock_unstable = 0;
  for (const char* kind : kKinds) {
    for (double fn : {5.0, 20.0, 60.0, 150.0}) {
      for (double zeta : {0.1, 0.7}) {
        ModelPtr m = LoadModelOrFail(RowServoXml(kind, 1, 0, kH));
        ASSERT_NE(m, nullptr);
        std::vector<TunedServo> servos = TuneServos(m.get(), {fn}, zeta);
        double wn = 2 * M_PI * fn;
        for (Input c : inputs) {
          int steps = std::max(100, static_cast<int>(std::ceil(InputWindow(c, wn) / kH)));
          std::vector<double> ref = RowResponse(m.get(), servos, wn, c, Scheme::kStock, kH / 100,
                                                steps, 100);
          ASSERT_FALSE(ref.empty()) << kind << " fn " << fn;
          double error[3];
          for (Scheme s : {Scheme::kStock, Scheme::kBackwardEuler, Scheme::kWeighted}) {
            error[static_cast<int>(s)] = ResponseError(
                RowResponse(m.get(), servos, wn, c, s, kH, steps, 1), ref);
          }
          SchemeErrors e = {error[0], error[1], error[2]};
          (std::isfinite(e.stock) ? stock_stable : stock_unstable)++;
          std::string what = std::string(kind) + " fn " + std::to_string(fn) + " zeta " +
                             std::to_string(zeta) + " " + InputName(c);
          EXPECT_TRUE(std::isfinite(e.weighted)) << what;
          if (std::string(kind) == "ball") {
            EXPECT_NEAR(e.weighted, e.backward_euler, 1e-9 * e.backward_euler) << what;
            continue;
          }
          EXPECT_LE(RatioToBaseline(e), 1.05)
              << what << ": stock " << e.stock << ", backward Euler " << e.backward_euler
              << ", weighted " << e.weighted;
        }
      }
    }
  }
  EXPECT_GT(stock_stable, 0);
  EXPECT_GT(stock_unstable, 0);
}

// Catches: weights of ball-joint servos below backward Euler's: the stability gate's linear model
// leaves out that a ball joint's length (its rotation vector along the gear) has a stiffness that
// is not symmetric away from rest. Ropes of 3 and 12 ball joints held by servos (RowServoXml),
// every servo tuned from its reflected inertia to one natural frequency (30 to 80 Hz, damping
// ratio 0 and 0.05, h 2 to 5 ms), released with velocities of +-0.1 and +-0.3 w_n on every dof:
// wherever backward Euler stays finite for 1 s, the weighted mode does. Before every ball servo
// was weighted 1, the table's weights (kept while the gate passed with margin 1/2) diverged on
// both ropes, at h 2 and 4 ms among others, stock diverging too.
TEST_F(ImplicitPosRows, WeightedStableWhereBackwardEulerIsOnABallRope) {
  int compared = 0;
  for (int links : {3, 12}) {
    for (double h : {0.002, 0.003, 0.004, 0.005}) {
      ModelPtr m = LoadModelOrFail(RowServoXml("ball", 1, 0, h, "implicit", links));
      ASSERT_NE(m, nullptr);
      m->opt.gravity[2] = 0;
      for (double fn : {30.0, 40.0, 60.0, 80.0}) {
        for (double zeta : {0.0, 0.05}) {
          TuneServos(m.get(), {fn}, zeta);
          double wn = 2 * M_PI * fn;
          for (double release : {0.1, 0.3}) {
            WarningCapture capture;
            bool backward_euler = ReleasedStable(m.get(), Scheme::kBackwardEuler, release, wn, 1);
            compared += backward_euler;
            EXPECT_TRUE(!backward_euler ||
                        ReleasedStable(m.get(), Scheme::kWeighted, release, wn, 1))
                << links << " links, h " << h << " fn " << fn << " zeta " << zeta << " release "
                << release;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 0);
}

// Catches: a bad gain on a row servo taken into K: NaN, infinite, negative and too large ones are
// left out, and the flag's trajectory is stock's bit for bit; on the two-finger hand's tendon
// across two branches too (its velocity term then stays stock's, in part).
TEST_F(ImplicitPosRows, BadGainIsStocks) {
  std::vector<std::pair<std::string, std::string>> models;
  for (const char* kind : kKinds) models.push_back({kind, RowServoXml(kind, 1, 1, kH)});
  models.push_back({"two-finger hand", TwoFingerHandXml(1, 1, kH)});
  for (const auto& [kind, xml] : models) {
    for (double kp : {std::nan(""), HUGE_VAL, -1e3, 1e300}) {
      ModelPtr m = LoadModelOrFail(xml);
      ASSERT_NE(m, nullptr);
      for (int i = 0; i < m->nu; ++i) {
        m->actuator_gainprm[mjNGAIN * i] = kp;
        m->actuator_biasprm[mjNBIAS * i + 1] = -kp;
      }
      std::vector<mjtNum> state[2];
      for (bool flag : {false, true}) {
        SetEnable(m.get(), mjENBL_IMPLICITPOS, flag);
        DataPtr d(mj_makeData(m.get()));
        SetPosture(m.get(), d.get());
        WarningCapture capture;
        for (int t = 0; t < 20; ++t) mj_step(m.get(), d.get());
        state[flag].assign(d->qpos, d->qpos + m->nq);
        state[flag].insert(state[flag].end(), d->qvel, d->qvel + m->nv);
      }
      EXPECT_TRUE(BitIdentical(state[0], state[1])) << kind << " kp " << kp;
    }
  }
}

// two branches from the world: a two-hinge arm (j0, j1; sites a, a2) and a hinge "jc" (site c, a
// sphere)
// with bodies welded to it (a cylinder, site "welded"); site "w" on a static body; the MJCF up
// to </worldbody>
std::string TwoBranches() {
  return
      "<mujoco><option integrator=\"implicit\"/><worldbody>"
      "<body><joint name=\"j0\" axis=\"0 1 0\"/><geom size=\".1\"/><site name=\"a\"/>"
      "<body pos=\".3 0 0\"><joint name=\"j1\" axis=\"0 1 0\"/><geom size=\".1\"/>"
      "<site name=\"a2\"/>"
      "</body></body>"
      "<body pos=\"0 1 0\"><joint name=\"jc\" axis=\"0 1 0\"/><geom name=\"sphere\" "
      "size=\".1\"/><site name=\"c\"/>"
      "<body pos=\".3 0 0\"><geom size=\".1\"/><body pos=\".3 0 0\"><geom name=\"cylinder\" "
      "type=\"cylinder\" size=\".1 .1\"/><site name=\"welded\"/></body></body></body>"
      "<body pos=\"0 0 1\"><site name=\"w\"/></body>"
      "</worldbody>";
}

// Catches: a moment on two branches taken for one on a chain, where its term would fall outside
// the pattern of M (an error of addD) or lose its part on the other branch, or one on a chain
// taken for one on several branches (its term then left out of the matrix of mjd_implicitPos), or
// a branch test that reads the wrong body: a site servo whose refsite is on another branch, and a
// spatial tendon between two branches, are on several branches; the same on one chain are not; a
// site on bodies welded to a moving body (no joint of their own) counts as on that body's chain;
// a slider-crank's two sites, likewise; a sphere or cylinder a spatial tendon wraps counts by its
// body, a pulley by none. Every case is in K. Each servo follows a motor (it is actuator 1, so
// that its refsite is not read at actuator 0's index).
TEST_F(ImplicitPosRows, MomentOnSeveralBranchesIsFound) {
  const std::string body = TwoBranches();
  const struct {
    std::string elements;
    int branches;  // mjd_actuatorBranches
  } cases[] = {
      {"<actuator><position site=\"a2\" refsite=\"c\" gear=\"1 0 0 0 0 0\" kp=\"100\"/>"
       "</actuator>", 1},
      {"<actuator><position site=\"a2\" refsite=\"a\" gear=\"1 0 0 0 0 0\" kp=\"100\"/>"
       "</actuator>", 0},
      // a refsite of id 0 (site a: no site is on the world body)
      {"<actuator><position site=\"c\" refsite=\"a\" gear=\"1 0 0 0 0 0\" kp=\"100\"/>"
       "</actuator>", 1},
      {"<tendon><spatial name=\"t\"><site site=\"a2\"/><site site=\"c\"/></spatial></tendon>"
       "<actuator><position tendon=\"t\" kp=\"100\"/></actuator>", 1},
      {"<tendon><spatial name=\"t\"><site site=\"a\"/><site site=\"a2\"/></spatial></tendon>"
       "<actuator><position tendon=\"t\" kp=\"100\"/></actuator>", 0},
      // the branches met in the other order: the first dof (of a) after the other branch's
      {"<tendon><spatial name=\"t\"><site site=\"c\"/><site site=\"a\"/></spatial></tendon>"
       "<actuator><position tendon=\"t\" kp=\"100\"/></actuator>", 1},
      // a site on a body welded to the world: moved by no dof, on every chain
      {"<tendon><spatial name=\"t\"><site site=\"w\"/><site site=\"c\"/></spatial></tendon>"
       "<actuator><position tendon=\"t\" kp=\"100\"/></actuator>", 0},
      // a site on bodies welded to a moving one: moved by that body's dofs
      {"<tendon><spatial name=\"t\"><site site=\"a2\"/><site site=\"welded\"/></spatial>"
       "</tendon><actuator><position tendon=\"t\" kp=\"100\"/></actuator>", 1},
      {"<actuator><position site=\"welded\" refsite=\"c\" gear=\"1 0 0 0 0 0\" kp=\"100\"/>"
       "</actuator>", 0},
      // slider-cranks: their two sites
      {"<actuator><position cranksite=\"a2\" slidersite=\"a\" cranklength=\"1\" kp=\"100\"/>"
       "</actuator>", 0},
      {"<actuator><position cranksite=\"a2\" slidersite=\"c\" cranklength=\"2\" kp=\"100\"/>"
       "</actuator>", 1},
      // wrapping geoms on the other branch: a sphere, a cylinder (on welded bodies)
      {"<tendon><spatial name=\"t\"><site site=\"a\"/><geom geom=\"sphere\"/><site site=\"a2\"/>"
       "</spatial></tendon><actuator><position tendon=\"t\" kp=\"100\"/></actuator>",
       1},
      {"<tendon><spatial name=\"t\"><site site=\"a\"/><geom geom=\"cylinder\"/>"
       "<site site=\"a2\"/></spatial></tendon>"
       "<actuator><position tendon=\"t\" kp=\"100\"/></actuator>", 1},
      // a pulley, on the branch of neither dof 0 nor dof 1
      {"<tendon><spatial name=\"t\"><site site=\"w\"/><site site=\"c\"/><pulley divisor=\"2\"/>"
       "<site site=\"w\"/><site site=\"welded\"/></spatial></tendon>"
       "<actuator><position tendon=\"t\" kp=\"100\"/></actuator>", 0},
  };
  for (const auto& c : cases) {
    std::string elements = c.elements;
    elements.replace(elements.find("<actuator>"), 10, "<actuator><motor joint=\"jc\"/>");
    ModelPtr m = LoadModelOrFail(body + elements + "</mujoco>");
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(mj_name2id(m.get(), mjOBJ_SITE, "a"), 0);
    DataPtr d(mj_makeData(m.get()));
    SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
    SetPosture(m.get(), d.get());
    EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 1, nullptr), mjPOSSCOPE_RESTORING)
        << c.elements;
    EXPECT_EQ(mjd_actuatorBranches(m.get(), 1), c.branches) << c.elements;
    for (int t = 0; t < 5; ++t) mj_step(m.get(), d.get());
  }
}

// K, dense (row-major), of the position servos of m (gain kp: the term kp m'm of each over its
// moment at d's state) weighted by theta (one per actuator), with its elements between dofs of two
// branches (neither the ancestor of the other) zeroed unless cross
std::vector<double> DenseK(const mjModel* m, const mjData* d, const std::vector<double>& theta,
                           bool cross) {
  int nv = m->nv;
  std::vector<double> k(nv * nv, 0.0);
  auto ancestor = [m](int a, int b) {  // a is b or one of its ancestors
    while (b > a) b = m->dof_parentid[b];
    return a == b;
  };
  for (int i = 0; i < m->nu; ++i) {
    double kp = -m->actuator_biasprm[mjNBIAS * i + 1];
    const mjtNum* mom = d->actuator_moment + i * nv;
    for (int r = 0; r < nv; ++r) {
      for (int c = 0; c < nv; ++c) {
        if (cross || ancestor(r, c) || ancestor(c, r)) {
          k[r * nv + c] += theta[i] * kp * mom[r] * mom[c];
        }
      }
    }
  }
  return k;
}

// M (dense, from the mass matrix of before), the damping qDeriv after the step d (stock's, on its
// pattern) and the smooth and constraint forces of before: the parts of the dense backward-Euler
// step (BackwardEulerVelocity) that do not depend on K
struct DenseStepParts {
  std::vector<double> mass, damping, force;
};
DenseStepParts DenseParts(const mjModel* m, const mjData* before, const mjData* d) {
  int nv = m->nv;
  DenseStepParts p{std::vector<double>(nv * nv), std::vector<double>(nv * nv, 0.0),
                   std::vector<double>(nv)};
  mj_fullM(m, p.mass.data(), before->qM);
  for (int r = 0; r < nv; ++r) {
    for (int j = 0; j < d->D_rownnz[r]; ++j) {
      int adr = d->D_rowadr[r] + j;
      p.damping[r * nv + d->D_colind[adr]] = d->qDeriv[adr];
    }
    p.force[r] = before->qfrc_smooth[r] + before->qfrc_constraint[r];
  }
  return p;
}

// Catches: a term on several branches left out of the step, or only its part on the pattern of M
// taken (the update of the solve, mj_branchSolve, dropped or wrong), its shift left out, or
// its weight not applied to it. One step equals backward Euler with the dense K of the servos'
// terms kp m'm (their Gauss-Newton term, the finite difference only where the force is zero:
// TermIsTheFiniteDifferenceWhereTheForceIsZero), each weighted by its mjd_posWeight under the
// weights; without the weights, K without its elements between the two branches, or without the
// shift, misses. A fixed tendon, a spatial tendon, a site with its refsite and a slider-crank
// across the two branches, and two of them at once (at 1e6 and a gain from 1e2, in either order),
// each after a motor and with a joint servo on the arm's second hinge (the update then has
// on-pattern terms beside it), at gains from 1e2 to 1e6.
TEST_F(ImplicitPosRows, TermOnSeveralBranchesIsInTheStep) {
  const std::string rows[] = {
      "<tendon><fixed name=\"t\"><joint joint=\"j0\" coef=\"1\"/><joint joint=\"jc\" "
      "coef=\"-0.7\"/></fixed></tendon><actuator><position tendon=\"t\" kp=\"KP\"/>",
      "<tendon><spatial name=\"t\"><site site=\"a2\"/><site site=\"welded\"/></spatial>"
      "</tendon><actuator><position tendon=\"t\" kp=\"KP\"/>",
      "<actuator><position site=\"a2\" refsite=\"welded\" gear=\"0.6 0 0.8 0 0 0\" kp=\"KP\"/>",
      "<actuator><position cranksite=\"a2\" slidersite=\"welded\" cranklength=\"2\" "
      "kp=\"KP\"/>",
      // two rows across the branches, one at 1e6: the update's dense solve is 2 x 2 and pivots
      "<tendon><fixed name=\"t\"><joint joint=\"j0\" coef=\"1\"/><joint joint=\"jc\" "
      "coef=\"-0.7\"/></fixed><spatial name=\"u\"><site site=\"a2\"/><site site=\"welded\"/>"
      "</spatial></tendon><actuator><position tendon=\"t\" kp=\"KP\"/>"
      "<position tendon=\"u\" kp=\"1e6\"/>",
      "<tendon><fixed name=\"t\"><joint joint=\"j0\" coef=\"1\"/><joint joint=\"jc\" "
      "coef=\"-0.7\"/></fixed><spatial name=\"u\"><site site=\"a2\"/><site site=\"welded\"/>"
      "</spatial></tendon><actuator><position tendon=\"u\" kp=\"1e6\"/>"
      "<position tendon=\"t\" kp=\"KP\"/>",
  };
  double least_theta = 1;
  for (std::string row : rows) {
    for (double kp : {1e2, 1e4, 1e6}) {
      std::string elements = row;
      elements.replace(elements.find("KP"), 2, std::to_string(kp));
      elements.replace(elements.find("<actuator>"), 10, "<actuator><motor joint=\"jc\"/>");
      elements += "<position joint=\"j1\" kp=\"" + std::to_string(kp) + "\"/></actuator>";
      ModelPtr m = LoadModelOrFail(TwoBranches() + elements + "</mujoco>");
      ASSERT_NE(m, nullptr) << row;
      ASSERT_EQ(mjd_actuatorBranches(m.get(), 1), 1) << row;
      m->opt.gravity[2] = 0;
      m->opt.timestep = kH;
      int nv = m->nv;
      for (bool weighted : {false, true}) {
        SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
        SetEnable(m.get(), mjENBL_POSWEIGHT, weighted);
        DataPtr d(mj_makeData(m.get()));
        SetPosture(m.get(), d.get());
        HoldPose(m.get(), d.get());
        for (int i = 1; i < m->nu; ++i) d->ctrl[i] += 0.1 * i;
        mj_forward(m.get(), d.get());
        DataPtr before(mj_copyData(nullptr, m.get(), d.get()));
        mj_step(m.get(), d.get());

        // the reference: M, qDeriv and the weighted dense K
        DenseStepParts p = DenseParts(m.get(), before.get(), d.get());
        std::vector<double> theta(m->nu, 1.0);
        for (int i = 1; i < m->nu && weighted; ++i) {
          theta[i] = mjd_posWeight(m.get(), before.get(), mjOBJ_ACTUATOR, i);
          least_theta = std::min(least_theta, theta[i]);
        }
        std::vector<double> k = DenseK(m.get(), before.get(), theta, true);
        std::vector<double> k_chain = DenseK(m.get(), before.get(), theta, false);
        std::vector<double> zero(nv * nv, 0.0);
        std::vector<double> ref = BackwardEulerVelocity(nv, kH, p.mass, p.damping, k, k,
                                                        p.force.data(), before->qvel);
        std::string what = row + " kp " + std::to_string(kp) + (weighted ? " weighted" : "");
        EXPECT_LE(RelDiff(ref.data(), d->qvel, nv), 1e-10) << what;
        if (!weighted) {
          std::vector<double> chain = BackwardEulerVelocity(nv, kH, p.mass, p.damping, k_chain,
                                                            k, p.force.data(), before->qvel);
          std::vector<double> no_shift = BackwardEulerVelocity(nv, kH, p.mass, p.damping, k,
                                                               zero, p.force.data(),
                                                               before->qvel);
          EXPECT_GT(RelDiff(chain.data(), d->qvel, nv), 1e-8) << what;
          EXPECT_GT(RelDiff(no_shift.data(), d->qvel, nv), 1e-8) << what;
        }
      }
    }
  }
  EXPECT_LT(least_theta, 0.5);  // the weights were tested where they matter
}

// Catches: the exact coupling of a moment on several branches replaced by an on-pattern bound.
// The scope issue weighed two options for such a term; the bound n k sum_b m_b m_b' (n the
// branch parts m_b of m, each on one chain: Cauchy-Schwarz) is stable but adds the damping
// h (bound - k m m') to every mode the term does not stiffen. On the two-finger hand (kv 0),
// moving in its differential mode (the fingers move, the tendon does not: m . v = 0), one step
// keeps 0.93 of that velocity (gravity, joint damping); the bound's dense step keeps less than
// half of it at kp 1e2 to 1e6, which freezes the fingers' sharing of the closure. The step must
// keep what the exact dense step keeps. Prints the figures doc/scope.md states.
TEST_F(ImplicitPosRows, DifferentialModeOfTheHandIsKept) {
  for (double kp : {1e2, 1e4, 1e6}) {
    ModelPtr m = LoadModelOrFail(TwoFingerHandXml(kp, 0, kH));
    ASSERT_NE(m, nullptr);
    SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
    int nv = m->nv;
    ASSERT_EQ(nv, 4);
    DataPtr d(mj_makeData(m.get()));
    for (int j = 0; j < nv; ++j) d->qpos[j] = 0.2 * std::sin(1.0 + j);
    mj_forward(m.get(), d.get());
    const mjtNum* mom = d->actuator_moment;
    double v[4] = {1, 0, -mom[0] / mom[2], 0};  // left proximal forward, right back: m . v = 0
    mju_copy(d->qvel, v, nv);
    d->ctrl[0] = d->actuator_length[0];
    mj_forward(m.get(), d.get());
    DataPtr after(mj_copyData(nullptr, m.get(), d.get()));
    mj_step(m.get(), after.get());

    // dense steps: the exact term, and the bound over the two fingers (dofs 0-1 and 2-3, n = 2)
    DenseStepParts p = DenseParts(m.get(), d.get(), after.get());
    std::vector<double> k(nv * nv), bound(nv * nv);
    for (int r = 0; r < nv; ++r) {
      for (int c = 0; c < nv; ++c) {
        k[r * nv + c] = kp * mom[r] * mom[c];
        bound[r * nv + c] = (r < 2) == (c < 2) ? 2 * kp * mom[r] * mom[c] : 0;
      }
    }
    std::vector<double> exact = BackwardEulerVelocity(nv, kH, p.mass, p.damping, k, k,
                                                      p.force.data(), d->qvel);
    std::vector<double> bounded = BackwardEulerVelocity(nv, kH, p.mass, p.damping, bound, bound,
                                                        p.force.data(), d->qvel);
    auto kept = [&](const double* w) {  // the part of v that w keeps
      double vw = 0, vv = 0;
      for (int j = 0; j < nv; ++j) {
        vw += v[j] * w[j];
        vv += v[j] * v[j];
      }
      return vw / vv;
    };
    double engine = kept(after->qvel), dense = kept(exact.data()), loose = kept(bounded.data());
    std::printf("kp %g: differential mode kept by the step %.4f, the exact dense step %.4f, "
                "the bound %.4f\n", kp, engine, dense, loose);
    EXPECT_NEAR(engine, dense, 1e-9) << kp;
    EXPECT_GT(engine, 0.9) << kp;
    EXPECT_LT(loose, 0.5) << kp;
  }
}

// Catches: the step that reuses its factorization (mj_stepSkip from mjd_transitionFD, for the
// control columns) leaving out the terms on several branches, or failing on them. On the
// two-finger hand (kv 1, kp 1e4), the derivative of the next velocity in the control equals the
// central difference of whole steps.
TEST_F(ImplicitPosRows, ReusedFactorizationTakesTheTermOnSeveralBranches) {
  ModelPtr m = LoadModelOrFail(TwoFingerHandXml(1e4, 1, kH));
  ASSERT_NE(m, nullptr);
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  int nv = m->nv, nu = m->nu, n = 2 * nv + m->na;
  DataPtr d(mj_makeData(m.get()));
  SetPosture(m.get(), d.get());
  HoldPose(m.get(), d.get());
  d->ctrl[0] += 0.1;
  mj_forward(m.get(), d.get());
  std::vector<mjtNum> b(n * nu);
  mjd_transitionFD(m.get(), d.get(), 1e-6, 1, nullptr, b.data(), nullptr, nullptr);
  std::vector<double> fd(nv), engine(nv);
  const double eps = 1e-6;
  std::vector<double> next[2];
  for (int side = 0; side < 2; ++side) {
    DataPtr e(mj_copyData(nullptr, m.get(), d.get()));
    e->ctrl[0] += side ? eps : -eps;
    mj_step(m.get(), e.get());
    next[side].assign(e->qvel, e->qvel + nv);
  }
  for (int i = 0; i < nv; ++i) {
    fd[i] = (next[1][i] - next[0][i]) / (2 * eps);
    engine[i] = b[(nv + i) * nu];
  }
  EXPECT_LE(RelDiff(engine, fd), 1e-5);
}

// TwoBranches with two more hinges, x1 and x2, each on its own body of the world (a second pair
// of branches), the model left open for its tendons and actuators
std::string TwoBranchesAndTwoHinges() {
  std::string xml = TwoBranches();
  xml.replace(xml.find("</worldbody>"), 12,
              "<body pos=\"0 -1 0\"><joint name=\"x1\" axis=\"1 0 0\"/><geom size=\".1\"/></body>"
              "<body pos=\"0 -2 0\"><joint name=\"x2\" axis=\"1 0 0\"/><geom size=\".1\"/></body>"
              "</worldbody>");
  return xml;
}

// One step of the flag (gravity off, h kH) on the model xml, whose nu actuators each have a moment
// on several branches, from the posture of SetPosture with every target moved by 0.05 (i + 1):
// the relative difference of its velocity to the dense backward-Euler step's, with no warning.
double StepAgainstDense(const std::string& xml, int nu) {
  ModelPtr m = LoadModelOrFail(xml);
  if (!m) return INFINITY;
  EXPECT_EQ(m->nu, nu);
  for (int i = 0; i < m->nu; ++i) EXPECT_EQ(mjd_actuatorBranches(m.get(), i), 1) << i;
  m->opt.gravity[2] = 0;
  m->opt.timestep = kH;
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  DataPtr d(mj_makeData(m.get()));
  SetPosture(m.get(), d.get());
  HoldPose(m.get(), d.get());
  for (int i = 0; i < m->nu; ++i) d->ctrl[i] += 0.05 * (i + 1);
  mj_forward(m.get(), d.get());
  DataPtr before(mj_copyData(nullptr, m.get(), d.get()));
  WarningCapture warnings;
  mj_step(m.get(), d.get());
  EXPECT_EQ(warnings.Count(), 0) << (warnings.Count() ? warnings.messages()[0] : "");
  DenseStepParts p = DenseParts(m.get(), before.get(), d.get());
  std::vector<double> k = DenseK(m.get(), before.get(), std::vector<double>(m->nu, 1.0), true);
  std::vector<double> ref = BackwardEulerVelocity(m->nv, kH, p.mass, p.damping, k, k,
                                                  p.force.data(), before->qvel);
  return RelDiff(ref.data(), d->qvel, m->nv);
}

// Catches: the dense solve of the update (solveDense) taking a pivot from the wrong row. Three
// rows across branches: a stiff fixed tendon (kp 1e8) and a soft spatial tendon (kp 1e2) that
// share dofs, and a fixed tendon on a second, separate pair of branches. The update's 3 x 3
// matrix then has a large element above a small second pivot and zeros below it: only the
// elements of the pivot's own column may choose its row. One step equals the dense solve.
TEST_F(ImplicitPosRows, ThreeRowsOnSeveralBranchesSolveAsTheDenseStep) {
  std::string xml = TwoBranchesAndTwoHinges();
  xml += "<tendon><fixed name=\"t\"><joint joint=\"j0\" coef=\"1\"/><joint joint=\"jc\" "
         "coef=\"-0.7\"/></fixed><spatial name=\"u\"><site site=\"a2\"/><site site=\"welded\"/>"
         "</spatial><fixed name=\"v\"><joint joint=\"x1\" coef=\"1\"/><joint joint=\"x2\" "
         "coef=\"0.6\"/></fixed></tendon><actuator><position tendon=\"t\" kp=\"1e8\"/>"
         "<position tendon=\"u\" kp=\"1e2\"/><position tendon=\"v\" kp=\"1e4\"/></actuator>"
         "</mujoco>";
  EXPECT_LE(StepAgainstDense(xml, 3), 1e-9);
}

// Catches: the dense solve of the update (solveDense) choosing a pivot by an element outside the
// pivot's column (row r - 1, column n - k, which only n >= 3 reaches past k = 0), or swapping rows
// wrongly past the first column (k/n for k*n: row 0 copied in). Four rows across branches in two
// groups that share no dof: a soft pair (kp 1e2: a fixed and a spatial tendon on the two-hinge
// arm and the other branch), then a stiff pair (kp 1e8 and 1e4, in either order: two fixed
// tendons over the same two separate hinges). The update's 4 x 4 matrix is then block diagonal,
// the stiff block's elements far larger than the soft block's second pivot, with zeros below
// that pivot: a row chosen by the stiff block's element would give a zero pivot, a singular
// update; with the softer of the stiff pair first, its pivot is taken from the last row (a swap at
// k = 2). One step equals the dense solve, with no warning.
TEST_F(ImplicitPosRows, FourRowsInTwoGroupsSolveAsTheDenseStep) {
  for (bool stiff_first : {true, false}) {
    std::string xml = TwoBranchesAndTwoHinges() + std::string(
               "<tendon><fixed name=\"t\"><joint joint=\"j0\" coef=\"1\"/><joint joint=\"jc\" "
               "coef=\"-0.7\"/></fixed><spatial name=\"u\"><site site=\"a2\"/>"
               "<site site=\"welded\"/></spatial><fixed name=\"v\"><joint joint=\"x1\" "
               "coef=\"1\"/><joint joint=\"x2\" coef=\"0.6\"/></fixed><fixed name=\"w\">"
               "<joint joint=\"x1\" coef=\"1\"/><joint joint=\"x2\" coef=\"-0.5\"/></fixed>"
               "</tendon><actuator><position tendon=\"t\" kp=\"1e2\"/>"
               "<position tendon=\"u\" kp=\"1e2\"/><position tendon=\"v\" kp=\"") +
           (stiff_first ? "1e8" : "1e4") + "\"/><position tendon=\"w\" kp=\"" +
           (stiff_first ? "1e4" : "1e8") + "\"/></actuator></mujoco>";
    EXPECT_LE(StepAgainstDense(xml, 4), 1e-9) << "stiff first " << stiff_first;
  }
}

// Catches: the dense solve of the update (solveDense) going on past a pivot that is not finite
// (its test dropped, reading another element, or returning success), where the documented outcome
// is the warning and every term on several branches left out. Two rows across branches that
// share no dof: a fixed tendon on the two-hinge arm and the other branch (kp 1e4), then one over
// two separate hinges geared by 1e160 (kp 1, in scope; its length 0, so that its control is not
// huge), whose element of the update, 1 + h^2 kp m'A^-1 m, overflows to infinity: the second
// pivot is not finite. From rest (qvel 0) at the servos' targets their forces and shifts are zero,
// so leaving the terms out makes the step that of the same model with both gains zero; gravity
// moves the arm, so the first row's update, had it been applied, would show (the step with the
// first row alone differs).
TEST_F(ImplicitPosRows, UpdateWithAnInfinitePivotLeavesTheTermsOut) {
  std::string xml = TwoBranchesAndTwoHinges();
  xml += "<tendon><fixed name=\"t\"><joint joint=\"j0\" coef=\"1\"/><joint joint=\"jc\" "
         "coef=\"-0.7\"/></fixed><fixed name=\"v\"><joint joint=\"x1\" coef=\"1\"/>"
         "<joint joint=\"x2\" coef=\"0.6\"/></fixed></tendon><actuator>"
         "<position tendon=\"t\" kp=\"1e4\"/><position tendon=\"v\" kp=\"1\" gear=\"1e160\"/>"
         "</actuator></mujoco>";
  ModelPtr m = LoadModelOrFail(xml);
  ASSERT_NE(m, nullptr);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(mjd_actuatorBranches(m.get(), i), 1) << i;
  m->opt.timestep = kH;
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  int nv = m->nv;
  auto step = [&](const mjModel* model, int* scope, int* badqacc) {
    DataPtr d(mj_makeData(model));
    for (int j = 0; j < 3; ++j) d->qpos[j] = 0.1 + 0.1 * j;  // x1, x2 at 0: tendon v too
    HoldPose(model, d.get());
    *scope = mjd_actuatorPosScope(model, d.get(), 1, nullptr);
    mj_step(model, d.get());
    *badqacc = d->warning[mjWARN_BADQACC].number;
    return std::vector<double>(d->qvel, d->qvel + nv);
  };
  WarningCapture warnings;
  int scope, badqacc;
  std::vector<double> engine = step(m.get(), &scope, &badqacc);
  ASSERT_EQ(scope, mjPOSSCOPE_RESTORING);
  EXPECT_EQ(warnings.Count("singular update"), 1);
  EXPECT_EQ(warnings.Count(), 1);
  EXPECT_EQ(badqacc, 0);
  ModelPtr out(mj_copyModel(nullptr, m.get()));
  for (int i = 0; i < 2; ++i) {
    out->actuator_gainprm[mjNGAIN * i] = 0;
    out->actuator_biasprm[mjNBIAS * i + 1] = 0;
  }
  std::vector<double> ref = step(out.get(), &scope, &badqacc);
  EXPECT_LE(RelDiff(ref.data(), engine.data(), nv), 1e-12);

  // the first row's update would show: the step with it alone (the second servo's gain zero)
  out->actuator_gainprm[0] = m->actuator_gainprm[0];
  out->actuator_biasprm[1] = m->actuator_biasprm[1];
  std::vector<double> first = step(out.get(), &scope, &badqacc);
  EXPECT_GT(RelDiff(ref.data(), first.data(), nv), 1e-6);
}

// the affine bias of actuator id, as mj_fwdActuation computes it, for mjcb_act_bias
mjtNum AffineBias(const mjModel* m, const mjData* d, int id) {
  const mjtNum* prm = m->actuator_biasprm + mjNBIAS * id;
  return prm[0] + prm[1] * d->actuator_length[id] + prm[2] * d->actuator_velocity[id];
}

// Catches: a singular update of the terms on several branches that leaves them out of the matrix
// but not their shift -h K qvel out of the right side, in the step or in the hold of forcerange
// (mj_stepForceLimit). Two position servos (kp 3e14) on two identical fixed tendons across two
// branches of tiny inertia: h^2 kp m'A^-1 m is beyond 1/eps, and the update's second pivot rounds
// to zero. A servo on one hinge, listed first: unlimited on b, with joint damping, so that the solve
// without the terms has both a term of K and qDeriv, b moving; force-limited on a and crossing its
// range in the step, at kp 1e-3 (the step's update is singular, and the hold solves without the
// terms) and at kp 1 (the step's update is regular, the hold's singular). Each step must warn
// once and be the step with the two servos out of K: the same model with their affine bias
// computed by mjcb_act_bias, a user bias (GAINBIAS) of the same value, bit for bit (qpos, qvel
// and the applied forces).
TEST_F(ImplicitPosRows, SingularUpdateLeavesTheTermsOutOfTheStep) {
  const struct {
    const char* damping;
    const char* third;
    double qvel_b;
    bool held;
  } cases[] = {{"1e-6", "joint=\"b\" kp=\"1e-3\"", 2e-3, false},
               {"0", "joint=\"a\" kp=\"1e-3\" forcelimited=\"true\" forcerange=\"-1e-9 1e-9\"",
                0, true},
               {"0", "joint=\"a\" kp=\"1\" forcelimited=\"true\" forcerange=\"-1e-9 1e-9\"",
                0, true}};
  for (const auto& c : cases) {
    const std::string third = c.third, joint = std::string("armature=\"1e-6\" damping=\"") +
                                               c.damping + "\"";
    std::string xml =
        "<mujoco><option integrator=\"implicit\" timestep=\"0.005\">"
        "<flag implicitpos=\"enable\"/></option><worldbody>"
        "<body><joint name=\"a\" axis=\"0 1 0\" " + joint + "/>"
        "<geom size=\".01\" mass=\"1e-6\"/></body>"
        "<body pos=\"1 0 0\"><joint name=\"b\" axis=\"0 1 0\" " + joint + "/>"
        "<geom size=\".01\" mass=\"1e-6\"/></body></worldbody>"
        "<tendon><fixed name=\"t1\"><joint joint=\"a\" coef=\"1\"/>"
        "<joint joint=\"b\" coef=\"1\"/></fixed><fixed name=\"t2\"><joint joint=\"a\" "
        "coef=\"1\"/><joint joint=\"b\" coef=\"1\"/></fixed></tendon><actuator>"
        "<position " + third + "/><position tendon=\"t1\" kp=\"3e14\"/>"
        "<position tendon=\"t2\" kp=\"3e14\"/></actuator></mujoco>";
    ModelPtr m = LoadModelOrFail(xml);
    ASSERT_NE(m, nullptr);
    int nv = m->nv, nu = m->nu;
    for (int i = 1; i < 3; ++i) ASSERT_EQ(mjd_actuatorBranches(m.get(), i), 1) << i;
    struct Step {
      std::vector<double> qpos, qvel, force, smooth;
      int scope;
    };
    auto step = [&](const mjModel* model) {
      DataPtr d(mj_makeData(model));
      d->qvel[0] = 1e-3;
      d->qvel[1] = c.qvel_b;
      mj_forward(model, d.get());
      Step s;
      s.scope = mjd_actuatorPosScope(model, d.get(), 1, nullptr);
      mj_step(model, d.get());
      s.qpos.assign(d->qpos, d->qpos + model->nq);
      s.qvel.assign(d->qvel, d->qvel + nv);
      s.force.assign(d->actuator_force_step, d->actuator_force_step + nu);
      s.smooth.assign(d->qfrc_smooth_step, d->qfrc_smooth_step + nv);
      return s;
    };

    // the engine: an update is singular, the terms left out of the step
    Step engine;
    {
      WarningCapture warnings;
      engine = step(m.get());
      EXPECT_EQ(warnings.Count("singular update"), 1) << third;
      EXPECT_EQ(warnings.Count(), 1) << third;
    }
    ASSERT_EQ(engine.scope, mjPOSSCOPE_RESTORING);
    for (int j = 0; j < nv; ++j) EXPECT_LT(std::abs(engine.qpos[j]), 1e-4) << third << j;
    if (c.held) {
      EXPECT_EQ(std::abs(engine.force[0]), 1e-9) << third;  // held at its range
    }

    // the same servos out of K: a user bias of the same value
    ModelPtr out(mj_copyModel(nullptr, m.get()));
    for (int i = 1; i < 3; ++i) out->actuator_biastype[i] = mjBIAS_USER;
    mjcb_act_bias = AffineBias;
    Step ref = step(out.get());
    mjcb_act_bias = nullptr;
    ASSERT_EQ(ref.scope, mjPOSSCOPE_GAINBIAS);
    EXPECT_EQ(engine.qpos, ref.qpos) << third;
    EXPECT_EQ(engine.qvel, ref.qvel) << third;
    EXPECT_EQ(engine.force, ref.force) << third;
    EXPECT_EQ(engine.smooth, ref.smooth) << third;
  }
}

}  // namespace
}  // namespace mjpos
