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

// Real robots (real/README.md) side by side with upstream MuJoCo 4.0's `discrete` integrator
// (peer/peer.h): made stiff servos, the flag is bounded wherever discrete is.

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "peer/peer.h"
#include "real/models.h"
#include "real/real_peer.h"
#include "support/models.h"
#include "support/motion.h"
#include "support/one_dof.h"

namespace mjpos::real {
namespace {

const std::string kDir = MJPOS_REAL_MODELS;

// Catches: the flag diverging where upstream's discrete stays bounded, on kMotionModels made
// servos of f_n 100 Hz and zeta 0 (kv 0), 200 steps of 10 ms under random targets every 40 ms
// from the start state, contact on (stock implicit is unstable there on one dof:
// h^2 kp = 39 I > 4 I).
TEST(RealPeer, FlagBoundedWhereDiscreteIs) {
  const auto& ids = kMotionModels;
  const double h = 0.010;
  const int steps = 200;
  MotionSetting s;  // random targets every 40 ms, seed 0
  peer::Json jobs = peer::Json::array();
  std::vector<bool> flag;
  std::vector<std::string> names;
  for (const RealModel& r : RealModels(kDir)) {
    bool wanted = false;
    for (const char* id : ids) wanted = wanted || r.Id() == id;
    if (!wanted) continue;
    std::string error;
    ModelPtr m(LoadReal(kDir, r, &error));
    ASSERT_NE(m, nullptr) << r.Id() << ": " << error;
    MakeRealServos(m.get(), 100, 0);
    jobs.push_back(RealJob(kDir, r, m.get(), s, "discrete", h, steps));
    flag.push_back(RunReal(m.get(), s, Scheme::kBackwardEuler, h, steps).bounded);
    names.push_back(r.Id());
  }
  ASSERT_EQ(names.size(), std::size(ids));
  peer::Json results = peer::Run(jobs);
  int discrete = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_FALSE(results[i].contains("error")) << names[i] << ": " << results[i].dump();
    bool bounded = PeerBounded(results[i], steps);
    discrete += bounded;
    if (bounded) EXPECT_TRUE(flag[i]) << names[i] << ": discrete is bounded, the flag is not";
  }
  EXPECT_GT(discrete, 0);  // the comparison is not empty
}

}  // namespace
}  // namespace mjpos::real
