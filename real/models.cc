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

#include "real/models.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include "support/accuracy.h"
#include "support/motion.h"
#include "support/one_dof.h"

namespace mjpos::real {
namespace {

// the *.xml files directly in dir/sub, sorted, as RealModels of source
void Scan(const std::string& dir, const std::string& sub, const std::string& source,
          std::vector<RealModel>* out) {
  std::vector<RealModel> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/" + sub, ec)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".xml") continue;
    std::string file = entry.path().filename().string();
    found.push_back({entry.path().stem().string(), source, sub + "/" + file});
  }
  std::sort(found.begin(), found.end(),
            [](const RealModel& a, const RealModel& b) { return a.path < b.path; });
  out->insert(out->end(), found.begin(), found.end());
}

// the robots of dir/kMenagerieDir's conversions.tsv (robot, wheel, conversions; tab-separated)
void ScanMenagerie(const std::string& dir, std::vector<RealModel>* out) {
  std::ifstream tsv(dir + "/" + kMenagerieDir + "/conversions.tsv");
  std::string line;
  while (std::getline(tsv, line)) {
    size_t tab1 = line.find('\t'), tab2 = line.find('\t', tab1 + 1);
    if (tab2 == std::string::npos) continue;
    std::string robot = line.substr(0, tab1);
    out->push_back({robot, "Menagerie", std::string(kMenagerieDir) + "/" + robot + "/scene.xml",
                    "from " + line.substr(tab1 + 1, tab2 - tab1 - 1) + ": " +
                        line.substr(tab2 + 1)});
  }
}

}  // namespace

std::vector<RealModel> RealModels(const std::string& dir) {
  std::vector<RealModel> models;
  Scan(dir, kDmControlDir, "dm_control", &models);
  Scan(dir, kGymnasiumDir, "Gymnasium", &models);
  ScanMenagerie(dir, &models);
  return models;
}

mjModel* LoadReal(const std::string& dir, const RealModel& r, std::string* error) {
  char err[1000] = "";
  mjModel* m = mj_loadXML((dir + "/" + r.path).c_str(), nullptr, err, sizeof(err));
  if (!m && error) {
    std::string text = err;
    *error = text.substr(0, text.find('\n'));
    if (error->empty()) *error = "does not load";
  }
  return m;
}

bool IsConvertibleMotor(const mjModel* m, int i) {
  int dyn = m->actuator_dyntype[i];
  if (m->actuator_gaintype[i] != mjGAIN_FIXED || m->actuator_biastype[i] != mjBIAS_NONE ||
      (dyn != mjDYN_NONE && dyn != mjDYN_FILTER) || m->actuator_trntype[i] != mjTRN_JOINT) {
    return false;
  }
  int type = m->jnt_type[m->actuator_trnid[2 * i]];
  return type == mjJNT_HINGE || type == mjJNT_SLIDE;
}

std::vector<TunedServo> MakeRealServos(mjModel* m, double fn, double zeta) {
  // the motors become servos of gear 1 on their joints, without force limits
  std::vector<bool> convert(m->nu);
  for (int i = 0; i < m->nu; ++i) {
    convert[i] = IsConvertibleMotor(m, i);
    if (!convert[i]) continue;
    mjtNum* gainprm = m->actuator_gainprm + mjNGAIN * i;
    mjtNum* biasprm = m->actuator_biasprm + mjNBIAS * i;
    std::fill(gainprm, gainprm + mjNGAIN, 0);
    std::fill(biasprm, biasprm + mjNBIAS, 0);
    m->actuator_biastype[i] = mjBIAS_AFFINE;
    m->actuator_forcelimited[i] = 0;
    m->actuator_gear[6 * i] = 1;
    std::fill(m->actuator_gear + 6 * i + 1, m->actuator_gear + 6 * i + 6, 0);
  }

  // TuneServos tunes every servo: the model's own keep the gains they had
  std::vector<int> gaintype(m->actuator_gaintype, m->actuator_gaintype + m->nu);
  std::vector<mjtNum> gainprm(m->actuator_gainprm, m->actuator_gainprm + mjNGAIN * m->nu);
  std::vector<mjtNum> biasprm(m->actuator_biasprm, m->actuator_biasprm + mjNBIAS * m->nu);
  std::vector<TunedServo> tuned = TuneServos(m, {fn}, zeta), servos;
  for (int i = 0; i < m->nu; ++i) {
    if (convert[i]) continue;
    m->actuator_gaintype[i] = gaintype[i];
    std::copy_n(gainprm.begin() + mjNGAIN * i, mjNGAIN, m->actuator_gainprm + mjNGAIN * i);
    std::copy_n(biasprm.begin() + mjNBIAS * i, mjNBIAS, m->actuator_biasprm + mjNBIAS * i);
  }

  // the control range: the joint's range, else kMotionSpan either side of its qpos0
  for (const TunedServo& sv : tuned) {
    if (!convert[sv.actuator]) continue;
    servos.push_back(sv);
    int i = sv.actuator, jnt = m->actuator_trnid[2 * i];
    m->actuator_ctrllimited[i] = 1;
    if (m->jnt_limited[jnt]) {
      m->actuator_ctrlrange[2 * i] = m->jnt_range[2 * jnt];
      m->actuator_ctrlrange[2 * i + 1] = m->jnt_range[2 * jnt + 1];
    } else {
      m->actuator_ctrlrange[2 * i] = sv.target - kMotionSpan;
      m->actuator_ctrlrange[2 * i + 1] = sv.target + kMotionSpan;
    }
  }
  return servos;
}

void ResetToStart(const mjModel* m, mjData* d) {
  if (m->nkey > 0) {
    mj_resetDataKeyframe(m, d, 0);
  } else {
    mj_resetData(m, d);
  }
}

MotionRun RunReal(mjModel* m, const MotionSetting& s, Scheme scheme, double h, int steps,
                  std::vector<mjtNum>* qpos_end) {
  m->opt.integrator = mjINT_IMPLICIT;
  m->opt.timestep = h;
  SetScheme(m, scheme);
  std::vector<double> ctrl = MotionControls(m, s, h);
  int rows = m->nu ? static_cast<int>(ctrl.size()) / m->nu : std::lround(kMotionSeconds / h);
  if (steps < 0 || steps > rows) steps = rows;
  mjData* d = mj_makeData(m);
  ResetToStart(m, d);
  MotionRun run = RunMotionFrom(m, d, ctrl, steps);
  if (qpos_end) {
    qpos_end->clear();
    if (run.bounded) qpos_end->assign(d->qpos, d->qpos + m->nq);
  }
  mj_deleteData(d);
  return run;
}

}  // namespace mjpos::real
