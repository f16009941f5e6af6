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

// mjpos_statedump: steps models with deterministic pseudo-random controls and prints, per model, a
// 64-bit FNV-1a hash of the bytes of the full simulation state after the last step. Built against
// the stock and against the patched library, its output compares the two bit for bit (two
// libmujoco builds cannot share one process).
//
//   mjpos_statedump [--steps N] [--integrator model|euler|rk4|implicit] [--enable MASK]
//                   [--disable MASK] MODEL.xml...
//
// Output: one line per model, "<hash> <model>"; "load-error <model>" if it does not load, and
// "mju_error <model>: <message>" if the engine raised an error while stepping (e.g. a stack
// overflow of the implicit integrator's dense derivative on large models).

#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include "support/state_hash.h"

namespace {

// mju_error during stepping: report and go on with the next model
std::jmp_buf error_jump;
char error_message[1000];

void ErrorHandler(const char* msg) {
  std::snprintf(error_message, sizeof(error_message), "%s", msg);
  std::longjmp(error_jump, 1);
}

// MuJoCo warnings (models that diverge under Euler or RK4): counted in mjData.warning, which the
// hash covers, and not printed, as MuJoCo's default handler would, into the result lines on
// stdout and into MUJOCO_LOG.TXT in the working directory
void WarningHandler(const char*) {}

void Usage() {
  std::fprintf(stderr,
               "usage: mjpos_statedump [--steps N] [--integrator model|euler|rk4|implicit]"
               " [--enable MASK] [--disable MASK] MODEL.xml...\n");
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 1000;
  int integrator = -1;
  int enable = 0, disable = 0;
  std::vector<std::string> models;

  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--steps" && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (a == "--integrator" && i + 1 < argc) {
      std::string v = argv[++i];
      if (v == "model") integrator = -1;
      else if (v == "euler") integrator = mjINT_EULER;
      else if (v == "rk4") integrator = mjINT_RK4;
      else if (v == "implicit") integrator = mjINT_IMPLICIT;
      else Usage();
    } else if (a == "--enable" && i + 1 < argc) {
      enable = std::atoi(argv[++i]);
    } else if (a == "--disable" && i + 1 < argc) {
      disable = std::atoi(argv[++i]);
    } else if (!a.empty() && a[0] == '-') {
      Usage();
    } else {
      models.push_back(a);
    }
  }
  if (models.empty()) Usage();
  mju_user_warning = WarningHandler;

  for (const std::string& path : models) {
    char error[1000] = "";
    mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof(error));
    if (!m) {
      std::printf("load-error %s\n", path.c_str());
      continue;
    }
    if (integrator >= 0) m->opt.integrator = integrator;
    m->opt.enableflags |= enable;
    m->opt.disableflags |= disable;
    mjData* d = mj_makeData(m);
    if (setjmp(error_jump)) {
      std::printf("mju_error %s: %s\n", path.c_str(), error_message);
      mju_user_error = nullptr;
      mj_deleteData(d);
      mj_deleteModel(m);
      continue;
    }
    mju_user_error = ErrorHandler;

    // deterministic controls in the control range (or [-1, 1]), new every step
    std::uint64_t rng = 12345;
    for (int t = 0; t < steps; ++t) {
      for (int u = 0; u < m->nu; ++u) {
        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
        double r = static_cast<double>(rng >> 11) / 9007199254740992.0;
        double lo = -1, hi = 1;
        if (m->actuator_ctrllimited[u]) {
          lo = m->actuator_ctrlrange[2 * u];
          hi = m->actuator_ctrlrange[2 * u + 1];
        }
        d->ctrl[u] = lo + r * (hi - lo);
      }
      mj_step(m, d);
    }
    mju_user_error = nullptr;
    std::printf("%016llx %s\n", static_cast<unsigned long long>(mjpos::HashState(m, d)), path.c_str());
    mj_deleteData(d);
    mj_deleteModel(m);
  }
  return 0;
}
