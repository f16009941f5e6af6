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

// Real robots no one here wrote (real/README.md): dm_control's and Gymnasium's models load in
// 2.2.2; their motors become the servos MakeRealServos promises; made servos, they stay bounded
// under the flag and the weighted mode under random targets; held in contact with servos stock
// cannot run, they rest where the converged reference does; with the flag off their steps are
// stock's bit for bit.

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "real/models.h"
#include "support/contact.h"
#include "support/models.h"
#include "support/motion.h"
#include "support/one_dof.h"
#include "support/state_hash.h"
#include "test/fixture.h"

namespace mjpos::real {
namespace {

class RealModelsTest : public MujocoTest {};

const std::string kDir = MJPOS_REAL_MODELS;

RealModel Find(const std::string& id) {
  for (const RealModel& r : RealModels(kDir)) {
    if (r.Id() == id) return r;
  }
  ADD_FAILURE() << "no real model " << id;
  return {};
}

// r loaded, its motors made servos of f_n fn and damping ratio zeta; *made: how many
ModelPtr LoadServos(const RealModel& r, double fn, double zeta, int* made = nullptr) {
  std::string error;
  ModelPtr m(LoadReal(kDir, r, &error));
  EXPECT_NE(m, nullptr) << r.Id() << ": " << error;
  int n = m ? static_cast<int>(MakeRealServos(m.get(), fn, zeta).size()) : 0;
  if (made) *made = n;
  return m;
}

// Catches: the flag's contact off the converged reference on robots that stand on their floor,
// or the flag no more stable than stock there: dm_control's walker, Gymnasium's half_cheetah
// and hopper, their motors made servos at 100 Hz, zeta 0 (kv 0), held from qpos0 at h 5 ms (the
// real table's contact setting), where stock diverges; the flag's summed normal force and
// penetration over the last 0.5 s within kContactTol of the reference's (ContactReference, as
// the table runs it).
TEST_F(RealModelsTest, StandsWhereTheReferenceDoes) {
  WarningCapture capture;  // stock diverges
  for (const char* id : {"dm_control/walker", "Gymnasium/half_cheetah", "Gymnasium/hopper"}) {
    ModelPtr m = LoadServos(Find(id), 100, kRealContactZeta);
    ASSERT_TRUE(m) << id;
    m->opt.integrator = mjINT_IMPLICIT;
    m->opt.timestep = kRealContactH;
    SetScheme(m.get(), Scheme::kStock);
    double seconds = 2, h_ref = 0;
    ContactMetrics reference = ContactReference(m.get(), &seconds, kRealContactRefSeconds,
                                                kContactWindow, -1, kContactTol,
                                                kRealContactRefHmin, &h_ref);
    ASSERT_GT(h_ref, 0) << id;
    ASSERT_TRUE(reference.stable) << id;
    EXPECT_FALSE(MeasureContact(m.get(), seconds, kContactWindow, -1).stable) << id;
    SetScheme(m.get(), Scheme::kBackwardEuler);
    ContactMetrics flag = MeasureContact(m.get(), seconds, kContactWindow, -1);
    ASSERT_TRUE(flag.stable) << id;
    EXPECT_LE(RelDiff(flag.force, reference.force), kContactTol) << id;
    EXPECT_LE(RelDiff(flag.penetration, reference.penetration), kContactTol) << id;
  }
}

// Catches: a model of the pinned wheels that 2.2.2 does not load (a Menagerie robot whose
// conversion is missing), a scan that misses a folder or lists a file that is not a task
// (dm_control's common/): the 19 Control Suite XMLs, the 14 of Gymnasium and Menagerie's 6
// robots, each loading.
TEST_F(RealModelsTest, EveryModelLoads) {
  std::vector<RealModel> models = RealModels(kDir);
  std::map<std::string, int> per_source;
  int loaded = 0;
  for (const RealModel& r : models) {
    per_source[r.source]++;
    std::string error;
    ModelPtr m(LoadReal(kDir, r, &error));
    EXPECT_NE(m, nullptr) << r.Id() << ": " << error;
    loaded += m != nullptr;
  }
  EXPECT_EQ(per_source["dm_control"], 19);
  EXPECT_EQ(per_source["Gymnasium"], 14);
  EXPECT_EQ(per_source["Menagerie"], 6);
  EXPECT_EQ(loaded, static_cast<int>(models.size()));
}

// Catches: a motor not converted or converted wrong (gear, bias, gains from the wrong inertia,
// the control range) and a model's own actuator retuned: every converted servo's kp is
// I (2 pi f_n)^2 and kv 2 zeta I 2 pi f_n with I the joint's reflected inertia at qpos0
// (DofReflectedInertia), its ctrlrange the joint's range or kMotionSpan either side of qpos0, its
// activation dynamics the file's (the dog's filter); every other actuator is as the file has it
// (fish, quadruped, the Panda, the UR5e and ALOHA keep their servos).
TEST_F(RealModelsTest, MotorsBecomeTunedServos) {
  const double fn = 30, zeta = 0.7, w = 2 * M_PI * fn;
  int converted = 0, models = 0;
  for (const RealModel& r : RealModels(kDir)) {
    ModelPtr file(LoadReal(kDir, r));
    ModelPtr m(LoadReal(kDir, r));
    if (!m) continue;
    std::set<int> motors;
    for (int i = 0; i < m->nu; ++i) {
      if (IsConvertibleMotor(m.get(), i)) motors.insert(i);
    }
    std::vector<TunedServo> servos = MakeRealServos(m.get(), fn, zeta);
    EXPECT_EQ(servos.size(), motors.size()) << r.Id();
    models += !servos.empty();
    DataPtr d(mj_makeData(m.get()));
    mj_forward(m.get(), d.get());
    for (const TunedServo& sv : servos) {
      int i = sv.actuator, jnt = m->actuator_trnid[2 * i];
      EXPECT_EQ(motors.count(i), 1) << r.Id() << " actuator " << i;
      double inertia = DofReflectedInertia(m.get(), d.get(), m->jnt_dofadr[jnt]);
      double kp = inertia * w * w, kv = 2 * zeta * inertia * w;
      std::string where = r.Id() + " actuator " + std::to_string(i);
      EXPECT_EQ(m->actuator_gaintype[i], mjGAIN_FIXED) << where;
      EXPECT_EQ(m->actuator_biastype[i], mjBIAS_AFFINE) << where;
      EXPECT_EQ(m->actuator_gear[6 * i], 1) << where;
      EXPECT_EQ(m->actuator_dyntype[i], file->actuator_dyntype[i]) << where;  // the dog's filter
      EXPECT_LT(RelDiff(m->actuator_gainprm[mjNGAIN * i], kp), 1e-9) << where;
      EXPECT_LT(RelDiff(-m->actuator_biasprm[mjNBIAS * i + 1], kp), 1e-9) << where;
      EXPECT_LT(RelDiff(-m->actuator_biasprm[mjNBIAS * i + 2], kv), 1e-9) << where;
      EXPECT_EQ(m->actuator_forcelimited[i], 0) << where;
      ASSERT_EQ(m->actuator_ctrllimited[i], 1) << where;
      double q0 = m->qpos0[m->jnt_qposadr[jnt]];
      double lo = m->jnt_limited[jnt] ? m->jnt_range[2 * jnt] : q0 - kMotionSpan;
      double hi = m->jnt_limited[jnt] ? m->jnt_range[2 * jnt + 1] : q0 + kMotionSpan;
      EXPECT_EQ(m->actuator_ctrlrange[2 * i], lo) << where;
      EXPECT_EQ(m->actuator_ctrlrange[2 * i + 1], hi) << where;
      converted++;
    }
    for (int i = 0; i < m->nu; ++i) {
      if (motors.count(i)) continue;
      std::string where = r.Id() + " actuator " + std::to_string(i) + " (its own)";
      EXPECT_EQ(m->actuator_biastype[i], file->actuator_biastype[i]) << where;
      for (int k = 0; k < mjNGAIN; ++k) {
        EXPECT_EQ(m->actuator_gainprm[mjNGAIN * i + k], file->actuator_gainprm[mjNGAIN * i + k])
            << where;
      }
      for (int k = 0; k < mjNBIAS; ++k) {
        EXPECT_EQ(m->actuator_biasprm[mjNBIAS * i + k], file->actuator_biasprm[mjNBIAS * i + k])
            << where;
      }
    }
  }
  // the motors of the pinned files: 31 models, all but fish's, quadruped's, the Panda's, the
  // UR5e's and ALOHA's (own servos), point_mass's, the dog's spine and the grasps of manipulator
  // and stacker (tendons); the dog's are filtered; Go1, G1 and YAM have the motors menagerie.py
  // adds
  EXPECT_EQ(models, 31);
  EXPECT_EQ(converted, 274);
}

// Catches: the flag or the weighted mode diverging, or warning of a bad state, on real robots
// made servos under random targets across their joints' ranges every 40 ms from the start state
// (keyframe 0, else qpos0), contact on: 200 steps at f_n 30 Hz, zeta 0.7, h 5 ms, and at
// f_n 100 Hz, zeta 0.7, h 10 ms, where stock diverges on each but quadruped and the Panda, whose
// own servos keep their gains (checked, so that the setting stays one where the flag is what
// holds).
TEST_F(RealModelsTest, BoundedUnderTheFlagAndTheWeightedMode) {
  struct Setting {
    double fn, zeta, h;
    bool stock_diverges;
  };
  const Setting settings[] = {{30, 0.7, 0.005, false}, {100, 0.7, 0.010, true}};
  MotionSetting s;  // random targets every 40 ms, seed 0
  WarningCapture capture;  // stock diverges
  for (const Setting& setting : settings) {
    for (const char* id : kMotionModels) {
      int made = 0;
      ModelPtr m = LoadServos(Find(id), setting.fn, setting.zeta, &made);
      if (!m) continue;
      std::string where = std::string(id) + ", f_n " + std::to_string(setting.fn) + " Hz, h " +
                          std::to_string(setting.h);
      for (Scheme scheme : {Scheme::kBackwardEuler, Scheme::kWeighted}) {
        MotionRun run = RunReal(m.get(), s, scheme, setting.h, 200);
        EXPECT_TRUE(run.bounded) << where << (scheme == Scheme::kWeighted ? " weighted" : " flag")
                                 << ": diverged at " << run.t_div << " s";
        EXPECT_EQ(run.steps, 200) << where;
      }
      if (setting.stock_diverges && made > 0) {
        EXPECT_FALSE(RunReal(m.get(), s, Scheme::kStock, setting.h, 200).bounded) << where;
      }
    }
  }
}

// Catches: state the flag leaves behind in the model or the engine: with the flag cleared
// after a run with it, 200 steps of those models are bit-identical to a model that never had
// the flag's bit set (stock `implicit`), or diverge at the same step where that one does (the
// G1), and they differ from the flag's own run (the flag acts).
TEST_F(RealModelsTest, FlagOffIsNeverFlagged) {
  MotionSetting s;
  WarningCapture capture;  // stock diverges on the G1
  for (const char* id : kMotionModels) {
    ModelPtr never = LoadServos(Find(id), 30, 0.7);
    ModelPtr cleared = LoadServos(Find(id), 30, 0.7);
    if (!never || !cleared) continue;
    std::vector<mjtNum> stock, flag, off;
    never->opt.integrator = mjINT_IMPLICIT;
    cleared->opt.integrator = mjINT_IMPLICIT;
    never->opt.timestep = 0.005;
    std::vector<double> ctrl = MotionControls(never.get(), s, 0.005);
    DataPtr d(mj_makeData(never.get()));
    ResetToStart(never.get(), d.get());
    const int warnings = BadStateWarnings(d.get());
    int steps = 0;
    while (steps < 200) {
      mju_copy(d->ctrl, ctrl.data() + static_cast<size_t>(steps) * never->nu, never->nu);
      mj_step(never.get(), d.get());
      steps++;
      if (MotionDiverged(never.get(), d.get(), warnings)) break;
    }
    stock.assign(d->qpos, d->qpos + never->nq);
    RunReal(cleared.get(), s, Scheme::kBackwardEuler, 0.005, 200, &flag);
    MotionRun run = RunReal(cleared.get(), s, Scheme::kStock, 0.005, 200, &off);
    EXPECT_EQ(cleared->opt.enableflags, never->opt.enableflags) << id;
    // stock diverges on the G1 here: the cleared model at the same step
    EXPECT_EQ(run.steps, steps) << id;
    if (steps < 200) continue;
    EXPECT_TRUE(BitIdentical(off, stock)) << id;
    EXPECT_FALSE(BitIdentical(flag, stock)) << id;
  }
}

#ifdef MJPOS_STOCK_STATEDUMP
// model path -> hash line of one statedump binary over every real model, 200 steps of implicit
std::map<std::string, std::string> Dump(const std::string& tool) {
  std::string cmd = "'" + tool + "' --steps 200 --integrator implicit";
  std::set<std::string> paths;
  for (const RealModel& r : RealModels(kDir)) {
    paths.insert(kDir + "/" + r.path);
    cmd += " '" + kDir + "/" + r.path + "'";
  }
  cmd += " 2>/dev/null </dev/null";
  std::map<std::string, std::string> out;
  EXPECT_TRUE(RunStatedump(cmd, &paths, &out)) << cmd;
  return out;
}

// Catches: a flag-off change to the engine on the real models as their files have them (motors,
// random controls in their ranges, contact on): mjpos_statedump's hash of the full state after
// 200 implicit steps, built against the stock library and against ours, is the same for each.
TEST_F(RealModelsTest, FlagOffIsStockLibrary) {
  std::map<std::string, std::string> stock = Dump(MJPOS_STOCK_STATEDUMP);
  std::map<std::string, std::string> patched = Dump(MJPOS_PATCHED_STATEDUMP);
  EXPECT_EQ(stock.size(), RealModels(kDir).size());
  for (const auto& [path, hash] : stock) {
    EXPECT_NE(hash, "load-error") << path;
    EXPECT_EQ(hash.rfind("mju_error", 0), std::string::npos) << path << ": " << hash;
    EXPECT_EQ(patched[path], hash) << path;
  }
}
#endif

}  // namespace
}  // namespace mjpos::real
