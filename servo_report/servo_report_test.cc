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

// Servo report against simulation: the caps it predicts are where mj_step actually diverges;
// excluded transmissions carry the right reason; the tool runs on every shipped model.

#include "servo_report/servo_report.h"

#include <sys/wait.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "test/fixture.h"
#include "support/models.h"

namespace mjpos {
namespace {

using ::testing::HasSubstr;

// MuJoCo's fixture: an unexpected MuJoCo warning fails the test; the tests that bisect a
// divergence record theirs (WarningCapture)
class ServoReportTest : public MujocoTest {};

ServoReport Analyze(const mjModel* m) {
  ServoReport report;
  std::string error;
  EXPECT_TRUE(AnalyzeServos(m, ServoOptions(), &report, &error)) << error;
  return report;
}

// Smallest value of a positive parameter at which stable(x) fails, by doubling from x0 and then
// bisecting to a relative width (the servo report's bracketing and bisection, on simulation).
double BisectDivergence(double x0, const std::function<bool(double)>& stable,
                        double width = 1e-6) {
  double lo, hi;
  bool diverged = BracketByDoubling(stable, x0, 80, &lo, &hi);
  EXPECT_GT(lo, 0) << "unstable already at " << x0;
  EXPECT_TRUE(diverged) << "never unstable";
  return Bisect(stable, INT_MAX, width, false, &lo, &hi);
}

// StepStable in chunks of 100 steps, and the velocities bounded by limit: near a coupled cap the
// divergence can saturate in a bounded period-2 oscillation (the velocity terms of the implicit
// integrator grow with it), which StepStable alone does not see; a small start and a bound keep
// the test in the linear regime the report describes
bool StableBounded(const mjModel* m, mjData* d, int n, double limit) {
  for (int t = 0; t < n; t += 100) {
    if (!StepStable(m, d, 100)) return false;
    for (int i = 0; i < m->nv; ++i) {
      if (std::abs(d->qvel[i]) > limit) return false;
    }
  }
  return true;
}

// steps of the one-dof bisections: enough for a 1e-3 growth per step to overflow
constexpr int kSteps = 40000;
constexpr int kChainSteps = 10000;

// kSteps of mj_step from a 0.1 offset of the first joint: stable by StepStable
bool StableFromOffset(const mjModel* m) {
  mjData* d = mj_makeData(m);
  d->qpos[0] = 0.1;
  bool ok = StepStable(m, d, kSteps);
  mj_deleteData(d);
  return ok;
}

//------------------------------ one hinge: servo ---------------------------------------------------

struct HingeCase {
  const char* integrator;
  double inertia, kv, damping, h;
};

class OneHingeCapTest : public MujocoTest, public ::testing::WithParamInterface<HingeCase> {};

// Catches: a wrong one-hinge cap formula for an integrator.
TEST_P(OneHingeCapTest, CapMatchesSimulatedDivergence) {
  WarningCapture diverging;
  const HingeCase& c = GetParam();
  ModelPtr model = LoadModelOrFail(OneHingeXml(c.inertia, 1.0, c.kv, c.h, c.integrator));
  mjModel* m = model.get();
  ASSERT_NE(m, nullptr);
  m->dof_damping[0] = c.damping;

  ServoReport report = Analyze(m);
  ASSERT_EQ(report.rows.size(), 1u);
  const ServoRow& row = report.rows[0];
  EXPECT_EQ(row.scope_name, "RESTORING");
  EXPECT_NEAR(row.inertia, c.inertia, 1e-9 * c.inertia);
  EXPECT_NEAR(row.kv, c.kv, 1e-12);
  EXPECT_NEAR(row.damping, c.damping, 1e-9 * (1 + c.damping));

  auto stable = [&](double kp) {
    m->actuator_gainprm[0] = kp;
    m->actuator_biasprm[1] = -kp;
    return StableFromOffset(m);
  };
  double measured = BisectDivergence(1e-3 * c.inertia / (c.h * c.h), stable);
  EXPECT_NEAR(row.cap, measured, 0.01 * measured)
      << c.integrator << ": report " << row.cap << ", simulation " << measured;
}

INSTANTIATE_TEST_SUITE_P(
    Integrators, OneHingeCapTest,
    ::testing::Values(HingeCase{"implicit", 0.01, 0.0, 0.0, 0.002},
                      HingeCase{"implicit", 0.01, 0.5, 0.2, 0.002},
                      HingeCase{"Euler", 0.01, 0.0, 0.0, 0.002},
                      HingeCase{"Euler", 0.01, 2.0, 0.0, 0.002},
                      HingeCase{"Euler", 0.01, 2.0, 3.0, 0.002},
                      HingeCase{"RK4", 0.01, 0.0, 0.0, 0.002},
                      HingeCase{"RK4", 0.05, 1.0, 1.0, 0.005}),
    [](const auto& info) {
      return std::string(info.param.integrator) + std::to_string(info.index);
    });

//------------------------------ one hinge: weighted mode -------------------------------------------

// the one hinge (0.01576 kg m^2, 5 ms) with a servo or a spring of gain kp (damping 0.1), and the
// report's one row of it (--posweight if weighted)
ModelPtr OneHingeRow(double kp, bool spring, bool weighted, ServoRow* row) {
  ModelPtr model = LoadModelOrFail(spring ? OneHingeSpringXml(0.01576, kp, 0.1, 0.005)
                                          : OneHingeXml(0.01576, kp, 0.1, 0.005));
  if (!model) return model;
  ServoOptions options;
  options.posweight = weighted;
  ServoReport report;
  EXPECT_TRUE(AnalyzeServos(model.get(), options, &report));
  EXPECT_EQ(report.rows.size(), 1u);
  if (!report.rows.empty()) *row = report.rows[0];
  return model;
}

// Catches: --posweight reporting weights the engine does not apply (or none): the flag columns'
// pole modulus of each one-hinge servo and spring equals that of the engine's weighted step.
TEST_F(ServoReportTest, PosWeightFlagColumnsAreTheEnginesWeightedStep) {
  for (double kp : {30.0, 300.0, 3000.0}) {
    for (bool spring : {false, true}) {
      ServoRow row;
      ModelPtr model = OneHingeRow(kp, spring, true, &row);
      mjModel* m = model.get();
      ASSERT_NE(m, nullptr);
      EXPECT_GT(row.theta, 0);
      EXPECT_LT(row.theta, 1);  // at these gains the weight is not backward Euler's

      m->opt.enableflags |= mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT;
      double weighted = SpectralRadius2(EngineStepMap(m, 1e-6));
      m->opt.enableflags &= ~mjENBL_POSWEIGHT;
      double backward_euler = SpectralRadius2(EngineStepMap(m, 1e-6));
      EXPECT_NEAR(row.flag.modulus, weighted, 1e-6) << "kp " << kp << " spring " << spring;
      EXPECT_GT(std::abs(weighted - backward_euler), 1e-3) << "kp " << kp;
    }
  }
}

// Catches: a "kp step" column that is not the force the flag's step applies: from a unit error
// at rest, one engine step's actuator_force_step (or, for a spring, qfrc_smooth_step), in and out
// of the weighted mode, below and far above the stock cap.
TEST_F(ServoReportTest, KpStepIsTheEnginesAppliedForce) {
  for (double kp : {30.0, 3000.0, 1e5}) {
    for (bool spring : {false, true}) {
      for (bool weighted : {false, true}) {
        ServoRow row;
        ModelPtr model = OneHingeRow(kp, spring, weighted, &row);
        mjModel* m = model.get();
        ASSERT_NE(m, nullptr);

        m->opt.enableflags |= mjENBL_IMPLICITPOS | (weighted ? mjENBL_POSWEIGHT : 0);
        DataPtr d(mj_makeData(m));
        if (spring) {
          d->qpos[0] = -1;  // the spring's rest is 0: a unit error
        } else {
          d->ctrl[0] = 1;
        }
        mj_step(m, d.get());
        double applied = spring ? d->qfrc_smooth_step[0] : d->actuator_force_step[0];
        EXPECT_LE(RelDiff(row.flag_kp_step, applied), 1e-10)
            << "kp " << kp << " spring " << spring << " weighted " << weighted;
      }
    }
  }
}

//------------------------------ one hinge: joint spring --------------------------------------------

class OneSpringCapTest : public MujocoTest, public ::testing::WithParamInterface<HingeCase> {};

// Catches: a wrong joint-spring cap formula for an integrator.
TEST_P(OneSpringCapTest, CapMatchesSimulatedDivergence) {
  WarningCapture diverging;
  const HingeCase& c = GetParam();
  ModelPtr model =
      LoadModelOrFail(OneHingeSpringXml(c.inertia, 1.0, c.damping, c.h, c.integrator));
  mjModel* m = model.get();
  ASSERT_NE(m, nullptr);

  ServoReport report = Analyze(m);
  ASSERT_EQ(report.rows.size(), 1u);
  const ServoRow& row = report.rows[0];
  EXPECT_TRUE(row.spring);
  EXPECT_TRUE(row.in_scope);
  EXPECT_NEAR(row.kp, 1.0, 1e-12);

  auto stable = [&](double k) {
    m->jnt_stiffness[0] = k;
    return StableFromOffset(m);
  };
  double measured = BisectDivergence(1e-3 * c.inertia / (c.h * c.h), stable);
  EXPECT_NEAR(row.cap, measured, 0.01 * measured)
      << c.integrator << ": report " << row.cap << ", simulation " << measured;
}

INSTANTIATE_TEST_SUITE_P(Integrators, OneSpringCapTest,
                         ::testing::Values(HingeCase{"implicit", 0.01, 0, 0.5, 0.002},
                                           HingeCase{"Euler", 0.01, 0, 0.5, 0.002},
                                           HingeCase{"RK4", 0.01, 0, 0.5, 0.002}),
                         [](const auto& info) {
                           return std::string(info.param.integrator) + std::to_string(info.index);
                         });

//------------------------------ chain: coupled system ----------------------------------------------

struct ChainCase {
  const char* integrator;
  int n;
  double kv, h;
};

class ChainCapTest : public MujocoTest, public ::testing::WithParamInterface<ChainCase> {};

// the chain's modes are coupled: its cap is the system margin, not any one actuator's
// Catches: a wrong coupled-system margin.
TEST_P(ChainCapTest, SystemMarginMatchesSimulatedDivergence) {
  WarningCapture diverging;
  const ChainCase& c = GetParam();
  const double kp_ref = 100;
  ModelPtr model = LoadModelOrFail(ChainXml(c.n, kp_ref, c.kv, c.h, c.integrator));
  mjModel* m = model.get();
  ASSERT_NE(m, nullptr);
  mju_zero3(m->opt.gravity);  // a start at rest, in the linear regime
  ServoReport report = Analyze(m);
  ASSERT_TRUE(report.system.analysed);
  ASSERT_EQ(report.rows.size(), static_cast<size_t>(c.n));
  double predicted = kp_ref * report.system.margin;

  auto stable = [&](double kp) {
    for (int i = 0; i < m->nu; ++i) {
      m->actuator_gainprm[mjNGAIN * i] = kp;
      m->actuator_biasprm[mjNBIAS * i + 1] = -kp;
    }
    mjData* d = mj_makeData(m);
    for (int i = 0; i < m->nv; ++i) d->qvel[i] = 1e-4 * std::cos(1.0 + i);
    bool ok = StableBounded(m, d, kChainSteps, 1);
    mj_deleteData(d);
    return ok;
  };
  double measured = BisectDivergence(0.01 * predicted, stable, 1e-3);
  EXPECT_NEAR(predicted, measured, 0.01 * measured)
      << c.integrator << " n=" << c.n << ": report " << predicted << ", simulation " << measured;

  // the one-dof rows see a heavier, single-joint inertia: none of them is below the system cap
  for (const ServoRow& row : report.rows) {
    EXPECT_GE(row.cap, predicted * 0.999) << row.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Integrators, ChainCapTest,
                         ::testing::Values(ChainCase{"implicit", 3, 0.5, 0.002},
                                           ChainCase{"implicit", 7, 0.0, 0.002},
                                           ChainCase{"Euler", 4, 0.2, 0.002},
                                           ChainCase{"RK4", 3, 0.5, 0.002}),
                         [](const auto& info) {
                           return std::string(info.param.integrator) + "_n" +
                                  std::to_string(info.param.n);
                         });

//------------------------------ excluded transmissions ---------------------------------------------

constexpr char kExcludedXml[] = R"(
<mujoco>
  <worldbody>
    <body name="a">
      <joint name="hinge" type="hinge" axis="0 0 1" limited="true" range="-1 1"/>
      <geom size="0.1" mass="1"/>
      <site name="s0" pos="0.1 0 0"/>
      <body name="b" pos="0.3 0 0">
        <joint name="branch1" type="hinge" axis="0 1 0"/>
        <geom size="0.1" mass="1"/>
        <site name="s1"/>
      </body>
      <body name="c" pos="-0.3 0 0">
        <joint name="branch2" type="hinge" axis="0 1 0"/>
        <geom size="0.1" mass="1"/>
      </body>
    </body>
    <body name="d" pos="1 0 0">
      <joint name="ball" type="ball"/>
      <geom size="0.1" mass="1" pos="0.2 0 0"/>
    </body>
  </worldbody>
  <tendon>
    <spatial name="spatial"><site site="s0"/><site site="s1"/></spatial>
    <fixed name="branches"><joint joint="branch1" coef="1"/><joint joint="branch2" coef="1"/></fixed>
  </tendon>
  <actuator>
    <position name="joint" joint="hinge" kp="10"/>
    <position name="site" site="s0" kp="10"/>
    <adhesion name="body" body="b" ctrlrange="0 1" gain="1"/>
    <position name="ball" joint="ball" kp="10"/>
    <position name="spatial" tendon="spatial" kp="10"/>
    <position name="branch" tendon="branches" kp="10"/>
    <motor name="motor" joint="branch1"/>
    <muscle name="muscle" joint="hinge"/>
  </actuator>
</mujoco>
)";

// Catches: a report whose scope disagrees with the engine's: a site without refsite and a body
// (no length) left out with their reasons; a ball joint's and a spatial tendon's servo in K,
// a fixed tendon's across branches, and a muscle that, inactive and short of its optimal
// length, has no slope.
TEST_F(ServoReportTest, ExcludedTransmissionsCarryTheirReason) {
  ModelPtr model = LoadModelOrFail(kExcludedXml);
  mjModel* m = model.get();
  ASSERT_NE(m, nullptr);
  ServoReport report = Analyze(m);
  ASSERT_EQ(report.rows.size(), 8u);
  struct Expect {
    const char* name;
    const char* scope;
    bool in_scope;
  } expect[] = {
      {"joint", "RESTORING", true},      {"site", "TRANSMISSION", false},
      {"body", "TRANSMISSION", false},   {"ball", "RESTORING", true},
      {"spatial", "RESTORING", true},    {"branch", "RESTORING", true},
      {"motor", "ZERO", false},          {"muscle", "ZERO", false},
  };
  for (int i = 0; i < 8; ++i) {
    const ServoRow& row = report.rows[i];
    EXPECT_EQ(row.name, expect[i].name);
    EXPECT_EQ(row.scope_name, expect[i].scope) << row.name;
    EXPECT_EQ(row.in_scope, expect[i].in_scope) << row.name;
    if (!row.in_scope) EXPECT_FALSE(row.why.empty()) << row.name;
  }
  EXPECT_EQ(report.rows[1].transmission, "site");
  EXPECT_EQ(report.rows[2].transmission, "body");
  EXPECT_THAT(report.rows[3].target, HasSubstr("ball"));
  EXPECT_EQ(report.rows[4].transmission, "spatial tendon");
  // the position servos' slopes are read whatever the scope
  EXPECT_NEAR(report.rows[1].kp, 10, 1e-12);
  EXPECT_NEAR(report.rows[4].kp, 10, 1e-12);
}

// Catches: a ball-joint spring reported as left out of K, which takes it (mjd_jointPosScope).
TEST_F(ServoReportTest, BallJointSpringIsInScope) {
  ModelPtr model = LoadModelOrFail(R"(
<mujoco>
  <worldbody>
    <body><joint type="ball" stiffness="5"/><geom size="0.1" pos="0.2 0 0"/></body>
    <body pos="1 0 0"><joint type="slide" stiffness="5" damping="1"/><geom size="0.1"/></body>
  </worldbody>
</mujoco>)");
  mjModel* m = model.get();
  ASSERT_NE(m, nullptr);
  ServoReport report = Analyze(m);
  ASSERT_EQ(report.rows.size(), 2u);
  EXPECT_EQ(report.rows[0].scope_name, "RESTORING");
  EXPECT_TRUE(report.rows[0].in_scope);
  EXPECT_EQ(report.rows[1].scope_name, "RESTORING");
  EXPECT_TRUE(report.rows[1].in_scope);
}

//------------------------------ servo humanoid -----------------------------------------------------

const std::string kHumanoid = std::string(MJPOS_MODEL_DIR) + "/humanoid/humanoid.xml";

// stable over n steps, holding the pose from a small kick; contact and gravity off (the report
// does not model constraints, and a free fall would leave the linear regime)
bool HumanoidStable(double kp, double kv, int integrator, int n) {
  WarningCapture diverging;  // a gain above the cap diverges on purpose
  mjModel* m = LoadWithServos(kHumanoid, kp, kv);
  if (!m) return false;
  m->opt.integrator = integrator;
  m->opt.disableflags |= mjDSBL_CONTACT;
  mju_zero3(m->opt.gravity);
  mjData* d = mj_makeData(m);
  HoldPose(m, d);
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = 1e-4 * std::cos(1.0 + i);
  bool ok = StableBounded(m, d, n, 1);
  mj_deleteData(d);
  mj_deleteModel(m);
  return ok;
}

// Catches: a scope read at the model's timestep rather than the analysed one. The engine leaves a
// slope explicit when h^2 |slope| > mjMAXVAL (1e10): kp 1e15 is inside at the model's 1 ms and
// outside at 10 ms, the timestep asked for.
TEST_F(ServoReportTest, ScopeAtTheAnalysedTimestep) {
  ModelPtr model = LoadModelOrFail(OneHingeXml(1, 1e15, 0, 1e-3, "implicit"));
  ASSERT_NE(model, nullptr);
  ServoOptions options;
  ServoReport report;
  ASSERT_TRUE(AnalyzeServos(model.get(), options, &report));
  ASSERT_EQ(report.rows.size(), 1u);
  EXPECT_EQ(report.rows[0].scope_name, "RESTORING");

  options.timestep = 1e-2;
  ASSERT_TRUE(AnalyzeServos(model.get(), options, &report));
  ASSERT_EQ(report.rows.size(), 1u);
  EXPECT_EQ(report.timestep, 1e-2);
  EXPECT_EQ(report.rows[0].scope_name, "NONRESTORING");
  EXPECT_EQ(model->opt.timestep, 1e-3);  // the caller's model is left as it was
}

// Catches: verdicts that disagree with simulation on the humanoid.
TEST_F(ServoReportTest, HumanoidServosInScopeAndVerdictMatchesSimulation) {
  const double kv = 1;
  std::string error;
  mjModel* m = LoadWithServos(kHumanoid, 100, kv, &error);
  ASSERT_NE(m, nullptr) << error;
  ASSERT_EQ(m->nu, 21);
  for (int integrator : {mjINT_IMPLICIT, mjINT_EULER}) {
    ServoOptions options;
    options.integrator = integrator;
    ServoReport report;
    ASSERT_TRUE(AnalyzeServos(m, options, &report, &error)) << error;
    ASSERT_GE(report.rows.size(), 21u);
    for (int i = 0; i < 21; ++i) {
      EXPECT_EQ(report.rows[i].scope_name, "RESTORING") << report.rows[i].name;
      EXPECT_EQ(report.rows[i].verdict, Verdict::kStable) << report.rows[i].name;
      EXPECT_GT(report.rows[i].inertia, 0);
    }
    ASSERT_TRUE(report.system.analysed);
    double cap = 100 * report.system.margin;
    EXPECT_EQ(report.system.flag_verdict, Verdict::kStable);
    // the simulated humanoid is stable a little below the predicted cap and not above it
    EXPECT_TRUE(HumanoidStable(0.95 * cap, kv, integrator, 3000)) << integrator << " " << cap;
    EXPECT_FALSE(HumanoidStable(1.05 * cap, kv, integrator, 3000)) << integrator << " " << cap;
  }
  mj_deleteModel(m);
}

//------------------------------ the command-line tool ----------------------------------------------

struct ToolRun {
  int status = -1;
  std::string out;
};

ToolRun RunTool(const std::string& args) {
  ToolRun run;
  std::string cmd = std::string(MJPOS_SERVO_REPORT) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return run;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.out.append(buf, n);
  int status = pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// Catches: an exit status that cannot gate a CI.
TEST_F(ServoReportTest, ToolExitStatus) {
  EXPECT_EQ(RunTool("").status, 2);
  EXPECT_EQ(RunTool(kHumanoid + " --integrator midpoint").status, 2);
  EXPECT_EQ(RunTool(kHumanoid + " --timestep -1").status, 2);
  EXPECT_EQ(RunTool(kHumanoid + " --key 3").status, 2);
  ToolRun missing = RunTool("no-such-model.xml");
  EXPECT_EQ(missing.status, 3);
  EXPECT_THAT(missing.out, HasSubstr("cannot load"));

  // far above and well below the humanoid's cap, as the simulation says
  ToolRun stiff = RunTool(kHumanoid + " --servo-kp 1e6 --integrator implicit");
  EXPECT_EQ(stiff.status, 1) << stiff.out;
  EXPECT_THAT(stiff.out, HasSubstr("UNSTABLE"));
  EXPECT_FALSE(HumanoidStable(1e6, 0, mjINT_IMPLICIT, 3000));
  ToolRun soft = RunTool(kHumanoid + " --servo-kp 10 --integrator implicit");
  EXPECT_EQ(soft.status, 0) << soft.out;
  EXPECT_TRUE(HumanoidStable(10, 0, mjINT_IMPLICIT, 3000));

  ToolRun json = RunTool(kHumanoid + " --servo-kp 100 --json");
  EXPECT_EQ(json.status, 0);
  EXPECT_THAT(json.out, HasSubstr("\"rows\": ["));
  EXPECT_THAT(json.out, HasSubstr("\"scope\": \"RESTORING\""));
}

// Catches: a crash or error on a shipped model.
TEST_F(ServoReportTest, ToolRunsOnEveryShippedModel) {
  std::vector<std::string> models;
  for (const auto& e : std::filesystem::recursive_directory_iterator(MJPOS_MODEL_DIR)) {
    if (e.path().extension() == ".xml") models.push_back(e.path().string());
  }
  std::sort(models.begin(), models.end());
  ASSERT_GE(models.size(), 10u);
  for (const std::string& path : models) {
    ToolRun run = RunTool(path);
    EXPECT_TRUE(run.status == 0 || run.status == 1) << path << " exit " << run.status << "\n"
                                                    << run.out;
    EXPECT_THAT(run.out, HasSubstr("coupled system")) << path;
  }
}

}  // namespace
}  // namespace mjpos
