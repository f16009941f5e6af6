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

// mjpos_servo_report: per actuator and joint spring, whether its position gain is stable for the
// timestep and integrator, and what mjENBL_IMPLICITPOS would deliver. See servo_report/README.md.
//
// Exit status: 0 all stable (or near), 1 something unstable, 2 usage error, 3 model not loaded.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <mujoco/mujoco.h>
#include "servo_report/servo_report.h"
#include "support/models.h"  // LoadWithServos

namespace {

constexpr char kUsage[] =
    "usage: mjpos_servo_report MODEL.xml [--timestep H] [--integrator euler|implicit|rk4]\n"
    "                          [--key N] [--json] [--servo-kp KP [--servo-kv KV]]\n"
    "                          [--system-max-nv N] [--posweight]\n"
    "  --posweight    the flag columns: mjENBL_IMPLICITPOS with mjENBL_POSWEIGHT's weights\n"
    "  --servo-kp KP  first replace every actuator by a position servo on the same joint\n"
    "                 (gear 1, gain KP, bias [0, -KP, -KV]), as the tests' servo humanoid\n"
    "exit status: 0 stable, 1 unstable actuator/spring/system, 2 usage, 3 model not loaded\n";

int Usage(const char* msg) {
  if (msg) std::fprintf(stderr, "mjpos_servo_report: %s\n", msg);
  std::fputs(kUsage, stderr);
  return 2;
}

bool ParseDouble(const char* s, double* x) {
  char* end = nullptr;
  *x = std::strtod(s, &end);
  return end != s && *end == '\0';
}

bool ParseInt(const char* s, int* x) {
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  *x = static_cast<int>(v);
  return end != s && *end == '\0';
}

// the command line: the model, the analysis options and the output
struct Args {
  std::string path;
  mjpos::ServoOptions options;
  bool json = false;
  double servo_kp = -1, servo_kv = 0;  // servo_kp >= 0: every actuator a servo (LoadWithServos)
};

// parses the command line into args; the exit status if the program is to stop now (help, or a
// usage error), -1 otherwise
int ParseArgs(int argc, char** argv, Args* args) {
  mjpos::ServoOptions& options = args->options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool has_value = i + 1 < argc;
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--json") {
      args->json = true;
    } else if (a == "--posweight") {
      options.posweight = true;
    } else if (a == "--timestep") {
      if (!has_value || !ParseDouble(argv[++i], &options.timestep) || !(options.timestep > 0)) {
        return Usage("--timestep needs a positive number");
      }
    } else if (a == "--integrator") {
      if (!has_value) return Usage("--integrator needs euler, implicit or rk4");
      std::string v = argv[++i];
      if (v == "euler") {
        options.integrator = mjINT_EULER;
      } else if (v == "implicit") {
        options.integrator = mjINT_IMPLICIT;
      } else if (v == "rk4") {
        options.integrator = mjINT_RK4;
      } else {
        return Usage(("unknown integrator: " + v).c_str());
      }
    } else if (a == "--key") {
      if (!has_value || !ParseInt(argv[++i], &options.key) || options.key < 0) {
        return Usage("--key needs a keyframe index >= 0");
      }
    } else if (a == "--servo-kp") {
      if (!has_value || !ParseDouble(argv[++i], &args->servo_kp) || !(args->servo_kp >= 0)) {
        return Usage("--servo-kp needs a number >= 0");
      }
    } else if (a == "--servo-kv") {
      if (!has_value || !ParseDouble(argv[++i], &args->servo_kv) || !(args->servo_kv >= 0)) {
        return Usage("--servo-kv needs a number >= 0");
      }
    } else if (a == "--system-max-nv") {
      if (!has_value || !ParseInt(argv[++i], &options.system_max_nv)) {
        return Usage("--system-max-nv needs an integer");
      }
    } else if (!a.empty() && a[0] == '-') {
      return Usage(("unknown option: " + a).c_str());
    } else if (args->path.empty()) {
      args->path = a;
    } else {
      return Usage("more than one model given");
    }
  }
  if (args->path.empty()) return Usage("no model given");
  return -1;
}

// the model of args, its actuators made servos if asked; nullptr (and error) if it does not load
mjModel* LoadModel(const Args& args, std::string* error) {
  if (args.servo_kp >= 0) {
    return mjpos::LoadWithServos(args.path, args.servo_kp, args.servo_kv, error);
  }
  char err[1000] = "";
  mjModel* m = mj_loadXML(args.path.c_str(), nullptr, err, sizeof(err));
  *error = err;
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  int status = ParseArgs(argc, argv, &args);
  if (status >= 0) return status;

  std::string error;
  mjModel* m = LoadModel(args, &error);
  if (!m) {
    std::fprintf(stderr, "mjpos_servo_report: cannot load %s: %s\n", args.path.c_str(),
                 error.empty() ? "unknown error" : error.c_str());
    return 3;
  }

  mjpos::ServoReport report;
  if (!mjpos::AnalyzeServos(m, args.options, &report, &error)) {
    std::fprintf(stderr, "mjpos_servo_report: %s: %s\n", args.path.c_str(), error.c_str());
    mj_deleteModel(m);
    return 2;
  }
  report.model = args.path;
  std::string out = args.json ? mjpos::FormatJson(report) : mjpos::FormatText(report);
  std::fputs(out.c_str(), stdout);
  mj_deleteModel(m);
  return report.unstable ? 1 : 0;
}
