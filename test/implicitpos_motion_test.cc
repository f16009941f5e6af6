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

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "support/models.h"  // OnEveryCore
#include "support/motion.h"
#include "test/fixture.h"

namespace mjpos {
namespace {

class ImplicitPosMotion : public MujocoTest {};

// one setting of part 8
struct Case {
  const char* subject;
  bool contact;
  Command command;
  double period, fn, zeta, h;
};

// the setting of c
MotionSetting SettingOf(const Case& c) {
  MotionSetting s;
  s.subject = c.subject;
  s.contact = c.contact;
  s.command = c.command;
  s.period = c.period;
  s.fn = c.fn;
  s.zeta = c.zeta;
  s.h = c.h;
  return s;
}

// c measured (MeasureMotion); where: its name for the failure messages
MotionResult Measure(const Case& c, std::string* where) {
  MotionSetting s = SettingOf(c);
  *where = std::string(c.subject) + (c.contact ? "" : " (contact off)") + ", " +
           CommandName(c.command) + ", f_n " + std::to_string(c.fn) + ", h " +
           std::to_string(c.h);
  return MeasureMotion(s, MJPOS_MODEL_DIR);
}

// c measured: it loads, its reference is bounded, and so is the flag
MotionResult ExpectFlagBounded(const Case& c, std::string* where) {
  MotionResult r = Measure(c, where);
  EXPECT_TRUE(r.loaded && r.reference_bounded) << *where;
  EXPECT_TRUE(r.flag.bounded) << *where << ": diverged at " << r.flag.t_div << " s";
  return r;
}

// Catches: the flag losing its stability under a step across the joints' whole range, on
// MuJoCo's humanoid on its floor and with contact off, and on arm7 tracking sinusoids across
// +-1.5 rad (its hinges have no range); stock at h diverges on each (checked, so that the
// settings stay ones where the flag is what holds). The reference (stock at MotionReferenceStep
// and at half of it) is bounded on each.
TEST_F(ImplicitPosMotion, BoundedWhereTheReferenceIs) {
  const Case cases[] = {
      {"humanoid", true, Command::kStep, kMotionSeconds, 300, 0, 0.010},
      {"humanoid", false, Command::kStep, kMotionSeconds, 300, 0.3, 0.005},
      {"arm7", false, Command::kTrack, 0.5, 300, 0.3, 0.010},
  };
  WarningCapture capture;  // stock diverges
  for (const Case& c : cases) {
    std::string where;
    MotionResult r = ExpectFlagBounded(c, &where);
    EXPECT_FALSE(r.stock.bounded) << where;
  }
}

// Catches: the flag's step diverging where it turns joints by a radian or more per step (the
// substeps of mj_step, doc/scope.md): settings of part 8 on which the step without substeps
// diverges, one per subject: the humanoid on its floor under random targets every 40 ms (the
// setting of the issue's table: f_n 100 Hz, zeta 0.7, 10 ms), with contact off tracking
// sinusoids, chain12 after one step to a random point of its range and under random targets at
// 300 Hz (a substep's jump from a slow start to 1e3 rad/s leaves the next substep too far a
// turn for one more level of division, not for two), arm7 under random targets. The reference
// is bounded on each; the flag's step is taken as substeps in each.
TEST_F(ImplicitPosMotion, BoundedWhereTheStepTurnsTooFar) {
  const Case cases[] = {
      {"humanoid", true, Command::kRandom, 0.04, 100, 0.7, 0.010},
      {"humanoid", false, Command::kTrack, 0.5, 100, 0.3, 0.010},
      {"chain12", false, Command::kStep, kMotionSeconds, 100, 0.3, 0.010},
      {"chain12", false, Command::kRandom, 0.04, 300, 0.7, 0.010},
      {"arm7", false, Command::kRandom, 0.04, 30, 0.3, 0.010},
  };
  WarningCapture capture;  // stock diverges
  for (const Case& c : cases) {
    std::string where;
    MotionResult r = ExpectFlagBounded(c, &where);
    EXPECT_GT(r.flag.substepped, 0) << where;
  }
}

// A double pendulum whose lower hinge is under a weak servo (its step hardly changes the
// velocity) and whose upper hinge is heavy (armature 10), flag on: the plain step's turn of the
// lower hinge, h*|v+|, is about its qvel * h.
// floating: the same pendulum hanging from a free body (no armature), whose rotation turns the
// lower hinge's subtree and whose translation does not change M.
static ModelPtr Pendulum(double h, bool floating) {
  std::string upper = floating ? R"(
          <freejoint/>
          <geom type="box" size="0.1 0.1 0.1" mass="1"/>
          <body pos="0 0 -0.1">)"
                               : R"(
          <joint name="upper" type="hinge" axis="0 1 0" armature="10"/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03" mass="1"/>
          <body pos="0 0 -0.3">)";
  ModelPtr m = LoadModelOrFail(R"(
    <mujoco>
      <option integrator="implicit"><flag implicitpos="enable"/></option>
      <worldbody>
        <body>)" + upper + R"(
            <joint name="lower" type="hinge" axis="0 1 0"/>
            <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03" mass="1"/>
          </body>
        </body>
      </worldbody>
      <actuator><position name="servo" joint="lower" kp="0.5"/></actuator>
      <sensor><actuatorfrc actuator="servo"/></sensor>
    </mujoco>)");
  if (m) m->opt.timestep = h;
  return m;
}

// Catches: a step that turns a joint below another by more than mjMAXTURN at its slower end
// while its speed changes by more than that end's, or by more than mjMAXTURNSTEADY at an even
// speed, not taken as ceil(turn / mjMAXTURN) steps of h/n (at most 64, a substep that turns too
// far divided again, twice at most), each as mj_step's at h/n bit for bit; its time not advanced
// by exactly h, or its MuJoCo stack not given back; its *_step outputs not the substeps' mean, or
// its acceleration-stage sensors not the last substep's (a substep not run late); a
// step substepped that turns less than that, turns only a root joint, or turns far only at its
// end. The lower hinge at an even speed: 87.5 rad/s turning about 0.875 rad (n 6 at mjMAXTURN
// 0.15), 30 rad/s 0.3 rad (one step: below mjMAXTURNSTEADY), 10 rad/s 0.1 rad (one step), 2000
// rad/s 20 rad (64 substeps of 0.31 rad, steady: not divided again), 2.5e5 rad/s 2500 rad (64 of
// 39 rad, each 64 of 0.61 rad, each 5); from rest under 300 N m to about 100 rad/s (one step),
// from 20 to about 45 rad/s under 75 N m (2 substeps, by the slower end: the faster would take
// 3), from 20 to about 32 rad/s under 36 N m (one step: steady, 0.2 rad), from 29 to about 12
// rad/s under -51 N m (one step: the start alone would take 2); the upper at 87.5 rad/s (one
// step). Below a free body: its rotation about x at 87.5 rad/s (n 6), its translation at 87.5
// m/s (one step). After bad-state warnings of earlier steps (their counts 1 and 2), the time
// still advances by exactly h.
TEST_F(ImplicitPosMotion, TooFarATurnIsTakenAsSubsteps) {
  struct Case {
    int dof;  // the hinge that turns: 1 the lower, 0 the upper (a root: M does not change)
    double qvel, force;       // its speed and the force applied to it at the step's start
    std::vector<int> levels;  // substeps, the substeps of each, and of those
    bool floating = false;    // Pendulum's free body: dof 0-2 its translation, 3-5 its rotation
    int warned = 0;           // the bad qpos, qvel and qacc warnings of earlier steps: each count
  };
  const Case cases[] = {{1, 87.5, 0, {6}},      {1, 30, 0, {1}},         {1, 10, 0, {1}},
                        {1, 2000, 0, {64}},     {1, 2.5e5, 0, {64, 64, 5}},
                        {0, 87.5, 0, {1}},      {1, 0, 300, {1}},        {1, 20, 75, {2}},
                        {1, 20, 36, {1}},       {1, 29, -51, {1}},       {3, 87.5, 0, {6}, true},
                        {0, 87.5, 0, {1}, true},   {1, 87.5, 0, {6}, false, 1},
                        {1, 87.5, 0, {6}, false, 2}};
  const double h = 0.01;
  for (const Case& c : cases) {
    ModelPtr m = Pendulum(h, c.floating);
    ASSERT_TRUE(m);
    auto init = [&](mjData* d) {
      // the upper turning: the lower hanging straight out
      d->qpos[m->jnt_qposadr[m->njnt - 1]] = c.dof || c.floating ? 0.3 : 0;
      d->qvel[c.dof] = c.qvel;
      d->qfrc_applied[c.dof] = c.force;
      d->ctrl[0] = -0.2;
      for (int w : {mjWARN_BADQPOS, mjWARN_BADQVEL, mjWARN_BADQACC}) {
        d->warning[w].number = c.warned;
      }
    };
    DataPtr one(mj_makeData(m.get())), many(mj_makeData(m.get()));
    const double time = 1.37;  // a sum of substeps' h/n onto it is not time + h
    for (mjData* d : {one.get(), many.get()}) {
      d->time = time;
      init(d);
    }
    mj_step(m.get(), one.get());

    // by hand: the innermost steps of h / (the levels' product), the outputs averaged level by
    // level
    int total = 1;
    for (int n : c.levels) total *= n;
    ModelPtr sub(mj_copyModel(nullptr, m.get()));
    sub->opt.timestep = h / total;
    const size_t size = m->nu + 2 * m->nv;
    std::function<std::vector<double>(size_t)> level = [&](size_t k) {
      std::vector<double> mean(size, 0.0);
      for (int i = 0; i < c.levels[k]; ++i) {
        std::vector<double> force;
        if (k + 1 < c.levels.size()) {
          force = level(k + 1);
        } else {
          mj_step(sub.get(), many.get());
          force.assign(many->actuator_force_step, many->actuator_force_step + m->nu);
          force.insert(force.end(), many->qfrc_actuator_step, many->qfrc_actuator_step + m->nv);
          force.insert(force.end(), many->qfrc_smooth_step, many->qfrc_smooth_step + m->nv);
        }
        mju_addToScl(mean.data(), force.data(), 1.0 / c.levels[k], size);
      }
      return mean;
    };
    std::vector<double> force = level(0);
    std::string where = std::string(c.floating ? "floating, " : "") + "dof " +
                        std::to_string(c.dof) + ", qvel " + std::to_string(c.qvel) + ", force " +
                        std::to_string(c.force) + ", warned " + std::to_string(c.warned);
    for (int i = 0; i < m->nv; ++i) {
      EXPECT_EQ(one->qpos[i], many->qpos[i]) << where;
      EXPECT_EQ(one->qvel[i], many->qvel[i]) << where;
    }
    EXPECT_EQ(one->time, time + h) << where;
    EXPECT_EQ(one->pstack, 0) << where;  // the substeps' stack given back
    // the acceleration-stage sensors: the last substep's, each substep's solve run late
    EXPECT_EQ(one->sensordata[0], many->sensordata[0]) << where;
    std::vector<double> reported(one->actuator_force_step, one->actuator_force_step + m->nu);
    reported.insert(reported.end(), one->qfrc_actuator_step, one->qfrc_actuator_step + m->nv);
    reported.insert(reported.end(), one->qfrc_smooth_step, one->qfrc_smooth_step + m->nv);
    for (size_t i = 0; i < force.size(); ++i) {
      EXPECT_NEAR(reported[i], force[i], 1e-12 * (1 + std::abs(force[i]))) << where << " " << i;
    }

  // the same step as a single step at h/2 x 2 is not it: the count matters
    DataPtr two(mj_makeData(m.get()));
    init(two.get());
    sub->opt.timestep = h / (2 * total);
    for (int i = 0; i < 2 * total; ++i) mj_step(sub.get(), two.get());
    bool differs = false;
    for (int i = 0; i < m->nv; ++i) {
      differs |= one->qpos[i] != two->qpos[i] || one->qvel[i] != two->qvel[i];
    }
    EXPECT_TRUE(differs) << where;
  }
}

// Catches: the weighted mode (mjENBL_POSWEIGHT) diverging where the flag alone stays bounded,
// or less accurate than stock where stock is bounded, on its motion suite (support/motion.h,
// WeightedMotionSettings; doc/posweight.md "Under motion"). Without the flag's substeps the mode
// diverges in hundreds of its 1344 settings, with substeps that stay weighted in tens; a few are
// open (a step at stock's weights that ends at 1e3 rad/s), so the mode may diverge in at most
// 1 % of the settings where the flag is bounded. Accuracy, where stock's error is judged
// (MotionJudged): the mode within 1.05x stock's error in at least 98 % of those settings. With
// K whole on every dof whenever a constraint is active, the joint limits of the humanoid without
// contact made it the flag, within 1.05x in 90 %; the open rest: chain2, where the substeps'
// backward Euler damps a transient that stock keeps.
TEST_F(ImplicitPosMotion, WeightedBoundedAndAccurateWhereTheFlagAndStockAre) {
  std::vector<MotionSetting> settings = WeightedMotionSettings();
  std::vector<WeightedMotionResult> rows(settings.size());
  WarningCapture capture;  // stock diverges
  OnEveryCore(settings.size(), [&](size_t i) {
    rows[i] = MeasureWeightedMotion(settings[i], MJPOS_MODEL_DIR, true);
  });
  int flag = 0, weighted = 0, nlost = 0, judged = 0, within = 0;
  std::string lost, over;
  for (const WeightedMotionResult& r : rows) {
    const MotionSetting& s = r.setting;
    ASSERT_TRUE(r.loaded) << s.subject;
    flag += r.flag.bounded;
    weighted += r.weighted.bounded;
    if (r.flag.bounded && !r.weighted.bounded) {
      nlost++;
      lost += MotionSettingName(s) + ": diverged at " + std::to_string(r.weighted.t_div) + " s\n";
    }
    if (r.judged) {
      judged++;
      if (WithinStock(r.weighted_error, r.stock_error)) {
        within++;
      } else {
        over += MotionSettingName(s) + ": " + std::to_string(r.weighted_error / r.stock_error) +
                "x stock's error\n";
      }
    }
  }
  EXPECT_LE(nlost, flag / 100) << "the flag bounded, the weighted mode not:\n" << lost;
  ASSERT_GT(judged, 0);
  EXPECT_GE(within, 0.98 * judged) << within << " of " << judged << "; over 1.05x:\n" << over;
  RecordProperty("settings", static_cast<int>(rows.size()));
  RecordProperty("flag_bounded", flag);
  RecordProperty("weighted_bounded", weighted);
  RecordProperty("weighted_diverged_flag_bounded", nlost);
  RecordProperty("judged", judged);
  RecordProperty("weighted_within_105_stock", within);
}

// Catches: the weighted mode taking its substeps from its own threshold (mjMAXTURNWEIGHTED) where
// every term is weighted 1 and its step is the flag's; there it takes them from the flag's and
// follows the flag. Servos far above their caps (every weight 1, checked at qpos0) under random
// targets, off the suite's grid; the flag substeps in each.
TEST_F(ImplicitPosMotion, WeightedFollowsTheFlagWhereEveryWeightIsOne) {
  const Case cases[] = {
      {"chain5", false, Command::kRandom, 0.03, 250, 0, 0.007},
      {"chain9", false, Command::kRandom, 0.02, 400, 0.05, 0.004},
      {"arm7", false, Command::kRandom, 0.025, 300, 0, 0.008},
  };
  WarningCapture capture;
  for (const Case& c : cases) {
    MotionSetting s = SettingOf(c);
    std::string where = MotionSettingName(s);
    mjModel* m = LoadMotionSubject(s, MJPOS_MODEL_DIR);
    ASSERT_NE(m, nullptr) << where;
    SetScheme(m, Scheme::kWeighted);
    m->opt.timestep = s.h;
    mjData* d = mj_makeData(m);
    mj_forward(m, d);
    for (int i = 0; i < m->nu; i++) {
      ASSERT_EQ(mjd_posWeight(m, d, mjOBJ_ACTUATOR, i), 1) << where << ", actuator " << i;
    }
    mj_deleteData(d);
    MotionRun flag = RunMotion(m, s, Scheme::kBackwardEuler, s.h);
    MotionRun weighted = RunMotion(m, s, Scheme::kWeighted, s.h);
    mj_deleteModel(m);
    ASSERT_TRUE(flag.bounded) << where;
    EXPECT_GT(flag.substepped, 0) << where;
    EXPECT_TRUE(weighted.bounded) << where << ": diverged at " << weighted.t_div << " s";
    EXPECT_EQ(weighted.substepped, flag.substepped) << where;
    EXPECT_LT(MotionError(weighted, flag), 1e-6) << where;
  }
}

// Catches: the substep threshold of a weighted step whose servo has a moment row (a tendon on
// two hinges) read as the flag's where its term is weighted below 1, or as the mode's where it is
// weighted 1. A motor whips the child hinge from each speed of a scan (the root turning back,
// so that the tendon's length is held and the servo resists no turn); a step that was not
// substepped (one forward pass) turned it by h min(|v0|, |v1|), whipped (|v1 - v0| above the
// slower): with the servo below its cap some such step turns it by more than the flag's 0.15 rad
// (the mode's threshold is 0.2 rad), with the servo far above it none does.
TEST_F(ImplicitPosMotion, WeightedRowServoSubstepsFromItsThreshold) {
  const char* xml = R"(
  <mujoco>
    <option timestep="0.01" integrator="implicit" gravity="0 0 0"/>
    <worldbody>
      <body>
        <joint name="a" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -.3" size=".03" mass="1"/>
        <body pos="0 0 -.3">
          <joint name="b" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0 0 -.3" size=".03" mass="1"/>
        </body>
      </body>
    </worldbody>
    <tendon>
      <fixed name="t"><joint joint="a" coef="1"/><joint joint="b" coef="1"/></fixed>
    </tendon>
    <actuator>
      <position name="servo" tendon="t" kp="1"/>
      <motor name="whip" joint="b"/>
    </actuator>
  </mujoco>)";
  for (double kp : {1.0, 1e5}) {
    ModelPtr m = LoadModelOrFail(xml);
    ASSERT_NE(m, nullptr);
    m->actuator_gainprm[0] = kp;
    m->actuator_biasprm[1] = -kp;
    m->opt.enableflags |= mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT;
    DataPtr d(mj_makeData(m.get()));
    mj_forward(m.get(), d.get());
    double weight = mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, 0);
    bool below = weight < 1;
    EXPECT_EQ(below, kp == 1.0) << "kp " << kp << ": weight " << weight;
    double h = m->opt.timestep, widest = 0;
    int b = m->jnt_dofadr[1];
    for (double v0 = 12; v0 <= 24; v0 += 0.25) {
      for (double force = -2; force >= -400; force -= 2) {
        mj_resetData(m.get(), d.get());
        d->qvel[b] = v0;
        d->qvel[m->jnt_dofadr[0]] = -v0;  // the tendon's length held: the servo resists no turn
        d->ctrl[1] = force;
        int forward = d->timer[mjTIMER_FORWARD].number;
        mj_step(m.get(), d.get());
        double v1 = d->qvel[b], slower = std::min(std::abs(v0), std::abs(v1));
        if (d->timer[mjTIMER_FORWARD].number - forward == 1 && std::abs(v1 - v0) > slower) {
          widest = std::max(widest, h * slower);
        }
      }
    }
    if (below) {
      EXPECT_GT(widest, 0.15) << "kp " << kp << ": the mode's threshold is 0.2 rad";
      EXPECT_LE(widest, 0.2 + 1e-12) << "kp " << kp;
    } else {
      EXPECT_LE(widest, 0.15) << "kp " << kp << ": every term weighted 1, the flag's 0.15 rad";
    }
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
