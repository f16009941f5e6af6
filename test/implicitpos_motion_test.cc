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

// The violent-motion suite's fast subset (support/motion.h; the whole suite is part 8 of the main
// job, doc/scope.md): the commands under which the flag is bounded wherever the converged
// reference is, on settings where stock at h is not.

#include <string>

#include "support/motion.h"
#include "test/fixture.h"

namespace mjpos {
namespace {

class ImplicitPosMotion : public MujocoTest {};

// Catches: the flag losing its stability under a step across the joints' whole range, on
// MuJoCo's humanoid on its floor and with contact off, and on arm7 tracking sinusoids across
// +-1.5 rad (its hinges have no range); stock at h diverges on each (checked, so that the
// settings stay ones where the flag is what holds). The reference (stock at MotionReferenceStep
// and at half of it) is bounded on each.
TEST_F(ImplicitPosMotion, BoundedWhereTheReferenceIs) {
  struct Case {
    const char* subject;
    bool contact;
    Command command;
    double period, fn, zeta, h;
  };
  const Case cases[] = {
      {"humanoid", true, Command::kStep, kMotionSeconds, 300, 0, 0.010},
      {"humanoid", false, Command::kStep, kMotionSeconds, 300, 0.3, 0.005},
      {"arm7", false, Command::kTrack, 0.5, 300, 0.3, 0.010},
  };
  WarningCapture capture;  // stock diverges
  for (const Case& c : cases) {
    MotionSetting s;
    s.subject = c.subject;
    s.contact = c.contact;
    s.command = c.command;
    s.period = c.period;
    s.fn = c.fn;
    s.zeta = c.zeta;
    s.h = c.h;
    std::string where = std::string(c.subject) + (c.contact ? "" : " (contact off)") + ", " +
                        CommandName(c.command) + ", f_n " + std::to_string(c.fn) + ", h " +
                        std::to_string(c.h);
    MotionResult r = MeasureMotion(s, MJPOS_MODEL_DIR);
    ASSERT_TRUE(r.loaded) << where;
    ASSERT_TRUE(r.reference_bounded) << where;
    EXPECT_FALSE(r.stock.bounded) << where;
    EXPECT_TRUE(r.flag.bounded) << where << ": diverged at " << r.flag.t_div << " s";
  }
}

// Catches: the suite's reference too coarse for the servo (h_ref * 2 pi f_n above 0.2) or
// finer than it need be (more than one halving below it), and not at most h/10.
TEST_F(ImplicitPosMotion, ReferenceResolvesTheServo) {
  for (double h : {0.002, 0.005, 0.010, 0.0033}) {
    for (double fn : {10.0, 100.0, 1000.0, 47.0}) {
      double h_ref = MotionReferenceStep(h, fn);
      double w = 2 * M_PI * fn;
      EXPECT_LE(h_ref, h / 10) << h << " " << fn;
      EXPECT_LE(h_ref * w, kMotionRefResolution) << h << " " << fn;
      EXPECT_TRUE(h_ref == h / 10 || 2 * h_ref * w > kMotionRefResolution) << h << " " << fn;
    }
  }
}

}  // namespace
}  // namespace mjpos
