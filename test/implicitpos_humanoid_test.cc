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

// The servo humanoid: model/humanoid/humanoid.xml with its 21 motors replaced by position servos
// (gear 1, gain kp, no velocity gain) holding the initial pose, h = 5 ms, implicit integrator.
// The largest stable kp on a decade grid, stock against the flag, contact disabled and enabled.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "test/fixture.h"
#include "support/models.h"

namespace mjpos {
namespace {

const char kHumanoid[] = MJPOS_MODEL_DIR "/humanoid/humanoid.xml";

// stable: 2 s (400 steps) from small joint velocities without MuJoCo's bad-state warnings (which
// are recorded, not printed: the search goes up to the gain that diverges)
bool Stable(double kp, bool flag, bool contact) {
  std::string error;
  mjModel* m = LoadWithServos(kHumanoid, kp, 0, &error);
  EXPECT_NE(m, nullptr) << error;
  if (!m) return false;
  m->opt.timestep = 0.005;
  m->opt.integrator = mjINT_IMPLICIT;
  SetEnable(m, mjENBL_IMPLICITPOS, flag);
  if (!contact) m->opt.disableflags |= mjDSBL_CONTACT;
  mjData* d = mj_makeData(m);
  HoldPose(m, d);
  for (int i = 6; i < m->nv; ++i) d->qvel[i] = 0.1 * std::sin(3.0 * i);
  WarningCapture warnings;
  bool stable = StepStable(m, d, 400);
  if (stable) EXPECT_THAT(warnings.messages(), ::testing::IsEmpty()) << "kp=" << kp;
  mj_deleteData(d);
  mj_deleteModel(m);
  return stable;
}

// largest kp = 10^k, k = 0..12, below which every grid point is stable (0 if none)
double LargestStableKp(bool flag, bool contact) {
  double largest = 0;
  for (int k = 0; k <= 12; ++k) {
    double kp = std::pow(10.0, k);
    if (!Stable(kp, flag, contact)) break;
    largest = kp;
  }
  return largest;
}

// fails on a MuJoCo warning outside a WarningCapture
class ImplicitPosHumanoid : public MujocoTest {};

// Catches: a flag that does not raise the stability limit of the coupled servo humanoid (matrix
// term missing or out of scope), with contact disabled and enabled.
TEST_F(ImplicitPosHumanoid, FlagRaisesLargestStableGain) {
  {
    char error[1000];
    mjModel* m = mj_loadXML(kHumanoid, nullptr, error, sizeof(error));
    ASSERT_NE(m, nullptr) << error;
    EXPECT_EQ(m->nu, 21);
    mj_deleteModel(m);
  }
  double stock_free = LargestStableKp(false, false), flag_free = LargestStableKp(true, false);
  double stock_contact = LargestStableKp(false, true), flag_contact = LargestStableKp(true, true);
  RecordProperty("stock_contact_disabled", std::to_string(stock_free));
  RecordProperty("flag_contact_disabled", std::to_string(flag_free));
  RecordProperty("stock_contact_enabled", std::to_string(stock_contact));
  RecordProperty("flag_contact_enabled", std::to_string(flag_contact));

  // contact disabled: the smooth dynamics, where the flag's stability argument holds
  EXPECT_GT(stock_free, 0);
  EXPECT_GE(flag_free, 1000 * stock_free);

  // contact enabled: the step solves the constraints in its own metric (doc/contact.md), so
  // contact does not lower the flag's gain below the smooth dynamics' margin
  EXPECT_GE(flag_contact, 1000 * stock_contact);
}

// Catches: the right-hand-side shift h*K*v missing. Without it the matrix term alone is also
// stable at kv = 0, but conserves the servos' oscillation energy instead of damping it: backward
// Euler in q and v settles a stiff undamped servo within a few steps.
TEST_F(ImplicitPosHumanoid, FlagSettlesStiffUndampedServos) {
  std::string error;
  ModelPtr m(LoadWithServos(kHumanoid, 1e6, 0, &error));
  ASSERT_NE(m, nullptr) << error;
  m->opt.timestep = 0.005;
  m->opt.integrator = mjINT_IMPLICIT;
  SetEnable(m.get(), mjENBL_IMPLICITPOS, true);
  m->opt.disableflags |= mjDSBL_CONTACT;
  DataPtr d(mj_makeData(m.get()));
  HoldPose(m.get(), d.get());
  double start = 0;
  for (int i = 6; i < m->nv; ++i) {
    d->qvel[i] = 0.1 * std::sin(3.0 * i);
    start = std::max(start, std::abs(d->qvel[i]));
  }
  ASSERT_TRUE(StepStable(m.get(), d.get(), 100));
  double end = 0;
  for (int i = 6; i < m->nv; ++i) end = std::max(end, std::abs(d->qvel[i]));
  EXPECT_LT(end, 1e-3 * start);
}

}  // namespace
}  // namespace mjpos
