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

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include <valgrind/callgrind.h>

#include "benchmark/mjpos_bench.h"
#include "support/contact.h"
#include "support/models.h"

namespace mjpos::bench {
namespace {


// a case's model at kp, kv, h with flags enabled
ModelPtr Load(const ContactCase& c, double kp, double kv, double h, int flags) {
  ModelPtr m(LoadContactCase(c, ModelPath(""), kp, kv, h));
  if (m) m->opt.enableflags |= flags;
  return m;
}

int Body(const mjModel* m, const ContactCase& c) {
  return c.body ? mj_name2id(m, mjOBJ_BODY, c.body) : -1;
}

constexpr int kSchemes[] = {0, mjENBL_IMPLICITPOS, mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT};

}  // namespace

std::vector<Part7Row> ContactStudy(const Options& opt) {
  std::vector<Part7Row> rows;
  for (const ContactCase& c : StandingCases()) {
    if (opt.smoke && std::string(c.name) != "quadruped standing") continue;
    for (double kp : {1e3, 1e5, 1e7}) {
      if (opt.smoke && kp != 1e5) continue;
      for (double kv : {0.0, kp / 100}) {
        if (opt.smoke && kv) continue;

        // the reference, from the smallest timestep of the grid; again at a timestep whose
        // refsafe changes the model's constraints
        double h_ref = 0, seconds = 0;
        bool have_ref = false;
        ContactMetrics ref;
        for (double h : {0.002, 0.005, 0.01}) {
          if (opt.smoke && h != 0.005) continue;
          ModelPtr m = Load(c, kp, kv, h, 0);
          if (!m) break;
          if (!have_ref || ApplyRefsafe(m.get(), h)) {
            have_ref = true;
            seconds = opt.smoke ? 1 : c.seconds;
            ref = ContactReference(m.get(), &seconds, opt.smoke ? 4 : kContactMaxSeconds,
                                   kContactWindow, Body(m.get(), c), kContactTol, kContactHmin,
                                   &h_ref);
          }
          Part7Row row{c.name, kp, kv, h, h_ref, seconds, ref, {}, {}, {}};
          ContactMetrics* out[] = {&row.stock, &row.flag, &row.weighted};
          for (int s = 0; s < 3; ++s) {
            ModelPtr run = Load(c, kp, kv, h, kSchemes[s]);
            *out[s] = MeasureContact(run.get(), seconds, kContactWindow, Body(run.get(), c));
          }
          rows.push_back(row);
        }
      }
    }
  }
  return rows;
}

std::vector<Part7DropRow> DropStudy(const Options& opt) {
  std::vector<Part7DropRow> rows;
  const ContactCase c = DropCase();
  for (double kp : {1e3, 1e5, 1e7}) {
    if (opt.smoke && kp != 1e5) continue;
    for (double kv : {0.0, kp / 100}) {
      if (opt.smoke && !kv) continue;
      ModelPtr m = Load(c, kp, kv, 0.002, 0);
      if (!m) continue;
      double h_ref = 0;
      DropMetrics ref =
          DropReference(m.get(), c.seconds, Body(m.get(), c), kContactTol, kContactHmin, &h_ref);
      for (double h : {0.002, 0.005, 0.01}) {
        if (opt.smoke && h != 0.005) continue;
        Part7DropRow row{kp, kv, h, h_ref, ref, {}, {}, {}};
        DropMetrics* out[] = {&row.stock, &row.flag, &row.weighted};
        for (int s = 0; s < 3; ++s) {
          ModelPtr run = Load(c, kp, kv, h, kSchemes[s]);
          *out[s] = MeasureDrop(run.get(), c.seconds, Body(run.get(), c));
        }
        rows.push_back(row);
      }
    }
  }
  return rows;
}

int ProfileContact(const Options& opt) {
  const std::string& p = opt.profile_contact;
  size_t a = p.find(':'), b = p.rfind(':');
  for (const ContactCase& c : StandingCases()) {
    std::string name = Underscored(std::string(c.name).substr(0, std::string(c.name).find(" (")));
    if (a == b || name != p.substr(0, a)) continue;
    ModelPtr m = Load(c, 1e3, 10, 0.002, 0);
    DataPtr d(mj_makeData(m.get()));
    for (int k = 0; k < 500; ++k) mj_step(m.get(), d.get());
    if (p.substr(a + 1, b - a - 1) == "on") m->opt.enableflags |= mjENBL_IMPLICITPOS;
    const int steps = std::atoi(p.c_str() + b + 1);
    CALLGRIND_START_INSTRUMENTATION;
    for (int k = 0; k < steps; ++k) mj_step(m.get(), d.get());
    CALLGRIND_STOP_INSTRUMENTATION;
    std::printf("mjpos_bench: %s, flag %s, %d steps, %d constraint rows\n", name.c_str(),
                p.substr(a + 1, b - a - 1).c_str(), steps, d->nefc);
    return 0;
  }
  std::fprintf(stderr, "mjpos_bench: --profile_contact=CASE:on|off:STEPS, CASE of part 7\n");
  return 2;
}

}  // namespace mjpos::bench
