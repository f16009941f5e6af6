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

// Part 7: stiff servos in contact against the converged reference (doc/contact.md).

#include <string>
#include <vector>

#include <mujoco/mujoco.h>

#include "benchmark/mjpos_bench.h"
#include "support/contact.h"
#include "support/models.h"
#include "support/one_dof.h"

namespace mjpos::bench {
namespace {

constexpr double kWindow = 0.5;  // the metrics' window, the last 0.5 s
constexpr double kTol = 0.01;    // the reference's convergence
constexpr double kHmin = 2.5e-7;

struct ContactModel {
  const char* name;
  std::string (*xml)(double kp, double kv, double h);
  const char* body;  // the held body whose slip is measured, or null
};

std::string Gripper(double kp, double kv, double h) { return GripperXml(kp, kv, h); }
std::string Standing(double kp, double kv, double h) {
  return LeggedXml(kp, kv, h, "implicit", 0, 0);
}
std::string Squeeze(double kp, double kv, double h) { return FingerSqueezeXml(kp, kv, h); }

const ContactModel kModels[] = {
    {"gripper (box held by friction)", Gripper, "object"},
    {"quadruped standing", Standing, nullptr},
    {"finger squeeze (box on the floor)", Squeeze, "box"},
};

ContactMetrics Measure(const std::string& xml, int flags, double seconds, const char* body) {
  ModelPtr m(LoadXmlString(xml));
  if (!m) return {};
  m->opt.enableflags |= flags;
  int b = body ? mj_name2id(m.get(), mjOBJ_BODY, body) : -1;
  return MeasureContact(m.get(), seconds, kWindow, b);
}

}  // namespace

std::vector<Part7Row> ContactStudy(const Options& opt) {
  std::vector<Part7Row> rows;
  const double seconds = opt.smoke ? 1 : 2;
  for (const ContactModel& cm : kModels) {
    if (opt.smoke && cm.xml != Standing) continue;
    for (double kp : {1e3, 1e5, 1e7}) {
      if (opt.smoke && kp != 1e5) continue;
      for (double kv : {0.0, kp / 100}) {
        if (opt.smoke && kv) continue;

        // the reference, from the smallest timestep of the grid
        double h_ref = 0;
        ModelPtr m(LoadXmlString(cm.xml(kp, kv, 0.002)));
        if (!m) continue;
        int b = cm.body ? mj_name2id(m.get(), mjOBJ_BODY, cm.body) : -1;
        ContactMetrics ref = ContactReference(m.get(), seconds, kWindow, b, kTol, kHmin, &h_ref);
        for (double h : {0.002, 0.005, 0.01}) {
          if (opt.smoke && h != 0.005) continue;
          Part7Row row{cm.name, kp, kv, h, h_ref, ref, {}, {}, {}};
          std::string xml = cm.xml(kp, kv, h);
          row.stock = Measure(xml, 0, seconds, cm.body);
          row.flag = Measure(xml, mjENBL_IMPLICITPOS, seconds, cm.body);
          row.weighted = Measure(xml, mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT, seconds, cm.body);
          rows.push_back(row);
        }
      }
    }
  }
  return rows;
}

}  // namespace mjpos::bench
