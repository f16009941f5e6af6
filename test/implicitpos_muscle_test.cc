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

// Muscles in K: the restoring part of the slope of 2.2.2's force-length and passive
// curves (their finite difference is in implicitpos_k_test). Here: an arm driven by muscles at
// every peak force, with and without the accuracy weights.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "test/fixture.h"
#include "support/models.h"

namespace mjpos {
namespace {

constexpr double kH = 0.005;

// from rest at qpos0, where the antagonists' forces cancel and gravity pulls the arm down, with
// activation and controls at a
auto Activated(double a) {
  return [a](const mjModel* m, mjData* d) {
    for (int i = 0; i < m->nu; ++i) d->ctrl[i] = a;
    for (int i = 0; i < m->na; ++i) d->act[i] = a;
    mj_forward(m, d);
  };
}

// the arm's joint angles every 10 ms over 0.5 s, stepped at h with the flag and weights as given
// (stock: neither), from the start that start(m, d) sets; then ctrl of the first muscle of each
// pair set to 1 (a step of the agonists) when step is true; empty if it diverged or warned
template <typename Start>
std::vector<double> Trajectory(const std::string& xml, double h, bool flag, bool weighted,
                               Start start, bool step) {
  ModelPtr m = LoadModelOrFail(xml);
  if (!m) return {};
  m->opt.timestep = h;
  SetEnable(m.get(), mjENBL_IMPLICITPOS, flag);
  SetEnable(m.get(), mjENBL_POSWEIGHT, weighted);
  DataPtr d(mj_makeData(m.get()));
  start(m.get(), d.get());
  if (step) {
    for (int i = 0; i < m->nu; i += 2) d->ctrl[i] = 1;
  }
  std::vector<double> q;
  int hold = static_cast<int>(std::lround(0.01 / h));
  for (int t = 0; t < 50; ++t) {
    if (!StepStable(m.get(), d.get(), hold)) return {};
    q.insert(q.end(), d->qpos, d->qpos + m->nq);
  }
  return q;
}

double MaxError(const std::vector<double>& a, const std::vector<double>& ref) {
  if (a.size() != ref.size()) return INFINITY;
  double e = 0;
  for (size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(a[i] - ref[i]));
  return e;
}

class ImplicitPosMuscle : public MujocoTest {};

// Catches: muscles left out of K (stock's step, which diverges on the relaxed arm from force 1e5,
// where its passive curve is stiff and has no damping), or a muscle term the weights make
// unstable. At 5 ms and every peak force from 1e2 to 1e12, 2 s of the arm, relaxed and
// co-contracted at 0.5 (where the muscles' velocity curve damps them in proportion to their
// stiffness, and stock is stable at every force too), stay finite without a warning, with the
// flag and with the weights.
TEST_F(ImplicitPosMuscle, ArmStableAtEveryForce) {
  for (double a : {0.0, 0.5}) {
    for (double force : {1e2, 1e4, 1e5, 1e6, 1e8, 1e10, 1e12}) {
      std::string xml = MuscleArmXml(force, kH);
      EXPECT_TRUE(StableFrom(xml, true, false, 400, Activated(a))) << "flag " << a << " " << force;
      EXPECT_TRUE(StableFrom(xml, true, true, 400, Activated(a))) << "weighted " << a << " " << force;
      if (a == 0 && force >= 1e5) {
        EXPECT_FALSE(StableFrom(xml, false, false, 400, Activated(a))) << "stock " << force;
      }
    }
  }
}

// Catches: weights that take the muscles' terms at backward Euler's where stock is stable and
// more accurate, or weigh them from a wrong damping (a muscle's is its velocity curve's). On the
// arm at peak forces where stock is stable (1e2 to 3e4), at 5 and 2.5 ms, relaxed under gravity,
// co-contracted at 0.5, and co-contracted with a step of the agonists to full control: the
// largest angle error against stock at h/50 is within 1.05x stock's with the weights, where
// backward Euler's is up to 10x stock's (printed).
TEST_F(ImplicitPosMuscle, WeightedNoLessAccurateThanStock) {
  int worse = 0;
  for (double h : {kH, kH / 2}) {
    for (double force : {1e2, 1e3, 1e4, 3e4}) {
      std::string xml = MuscleArmXml(force, h);
      for (double a : {0.0, 0.5}) {
        for (bool step : {false, true}) {
          if (a == 0 && step) continue;
          std::vector<double> ref = Trajectory(xml, h / 50, false, false, Activated(a), step);
          double stock = MaxError(Trajectory(xml, h, false, false, Activated(a), step), ref);
          double flag = MaxError(Trajectory(xml, h, true, false, Activated(a), step), ref);
          double weighted = MaxError(Trajectory(xml, h, true, true, Activated(a), step), ref);
          std::printf("h %g force %g act %g step %d: stock %.3g flag %.3g weighted %.3g\n", h,
                      force, a, step, stock, flag, weighted);
          EXPECT_LE(weighted, 1.05 * stock) << "h " << h << " force " << force << " act " << a
                                            << " step " << step;
          worse += flag > 1.5 * stock;
        }
      }
    }
  }
  EXPECT_GT(worse, 0);  // the comparison can see backward Euler's error
}

// Catches: a bad peak force taken into K. A NaN, infinite or 1e300 force (gainprm[2] and
// biasprm[2], as MJCF sets both) gives a slope that is not finite or too stiff for the
// factorization: every muscle is left out and 20 steps of the activated arm are stock's bit for
// bit. A negative force is 2.2.2's own request to scale the force by acc0 (mju_muscleGain): the
// muscles are then valid, in K, and the arm stays finite without a warning.
TEST_F(ImplicitPosMuscle, BadForceIsStocks) {
  for (double force : {std::nan(""), HUGE_VAL, 1e300, -1e3, -HUGE_VAL}) {
    ModelPtr m = LoadModelOrFail(MuscleArmXml(100, kH));
    ASSERT_NE(m, nullptr);
    for (int i = 0; i < m->nu; ++i) {
      m->actuator_gainprm[mjNGAIN * i + 2] = m->actuator_biasprm[mjNBIAS * i + 2] = force;
    }
    std::vector<mjtNum> state[2];
    for (bool flag : {false, true}) {
      SetEnable(m.get(), mjENBL_IMPLICITPOS, flag);
      DataPtr d(mj_makeData(m.get()));
      Activated(0.5)(m.get(), d.get());
      d->qpos[0] = 0.3;  // the muscles off their balance
      mj_forward(m.get(), d.get());
      if (flag) {
        for (int i = 0; i < m->nu; ++i) {
          int scope = mjd_actuatorPosScope(m.get(), d.get(), i, nullptr);
          EXPECT_EQ(scope == mjPOSSCOPE_NONRESTORING, !(force < 0)) << force << " actuator " << i;
        }
      }
      WarningCapture capture;
      for (int t = 0; t < 20; ++t) mj_step(m.get(), d.get());
      if (force < 0) EXPECT_THAT(capture.messages(), ::testing::IsEmpty()) << force;
      state[flag].assign(d->qpos, d->qpos + m->nq);
      state[flag].insert(state[flag].end(), d->qvel, d->qvel + m->nv);
    }
    EXPECT_EQ(BitIdentical(state[0], state[1]), !(force < 0)) << force;
    if (force < 0) {
      for (mjtNum x : state[1]) EXPECT_TRUE(std::isfinite(x)) << force;
    }
  }
}

}  // namespace
}  // namespace mjpos
