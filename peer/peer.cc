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

#include "peer/peer.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include <nlohmann/json.hpp>
#include "support/callgrind.h"

namespace mjpos::peer {
namespace {

// a temporary file, removed when it goes out of scope
class TempFile {
 public:
  TempFile() {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/mjpos_peer_XXXXXX";
    int fd = mkstemp(path_.data());
    if (fd < 0) throw std::runtime_error("peer: cannot create a temporary file");
    close(fd);
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// runs the driver with input on stdin; its stdout
std::string Drive(const std::string& input, const std::string& args) {
  TempFile in, out;
  std::ofstream(in.path()) << input;
  std::string cmd = DriverCommand() + " " + args + " < " + ShellQuote(in.path()) + " > " +
                    ShellQuote(out.path());
  if (std::system(cmd.c_str()) != 0) {
    throw std::runtime_error("peer: the driver failed: " + cmd);
  }
  return ReadFile(out.path());
}

constexpr double kNoLimit = 1e30;  // a range bound that clamps nothing, finite in float32 (Warp)

Json Array(const mjtNum* x, int n) { return Json(std::vector<double>(x, x + n)); }

template <typename T>
Json IntArray(const T* x, int n) {
  return Json(std::vector<int>(x, x + n));
}

}  // namespace

std::string DriverCommand() {
  return ShellQuote(MJPOS_PEER_PYTHON) + " " + ShellQuote(MJPOS_PEER_DRIVER);
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("peer: cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

Json Run(const Json& jobs, const std::string& args) {
  Json out = Json::parse(Drive(Json{{"jobs", jobs}}.dump(), args));
  Json results = out.at("results");
  if (results.size() != jobs.size()) throw std::runtime_error("peer: result count differs");
  return results;
}

std::string Version(const std::string& args) {
  std::string v = Drive("", args + " --version");
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r')) v.pop_back();
  return v;
}

Json StateJob(const std::string& xml, const std::string& integrator, const mjModel* m,
              const mjData* d) {
  return Json{{"xml", xml},
              {"integrator", integrator},
              {"qpos", Array(d->qpos, m->nq)},
              {"qvel", Array(d->qvel, m->nv)},
              {"act", Array(d->act, m->na)},
              {"ctrl", Array(d->ctrl, m->nu)}};
}

Json ServoEdits(const mjModel* m) {
  // An unlimited control or force becomes a range that clamps nothing: the byte fields
  // (ctrllimited, forcelimited) and their defaults differ between MuJoCo versions.
  std::vector<double> ctrlrange(m->actuator_ctrlrange, m->actuator_ctrlrange + 2 * m->nu);
  std::vector<double> forcerange(m->actuator_forcerange, m->actuator_forcerange + 2 * m->nu);
  for (int i = 0; i < m->nu; ++i) {
    if (!m->actuator_ctrllimited[i]) {
      ctrlrange[2 * i] = -kNoLimit;
      ctrlrange[2 * i + 1] = kNoLimit;
    }
    if (!m->actuator_forcelimited[i]) {
      forcerange[2 * i] = -kNoLimit;
      forcerange[2 * i + 1] = kNoLimit;
    }
  }
  return Json{{"actuator_gaintype", IntArray(m->actuator_gaintype, m->nu)},
              {"actuator_biastype", IntArray(m->actuator_biastype, m->nu)},
              {"actuator_gainprm", Array(m->actuator_gainprm, mjNGAIN * m->nu)},
              {"actuator_biasprm", Array(m->actuator_biasprm, mjNBIAS * m->nu)},
              {"actuator_gear", Array(m->actuator_gear, 6 * m->nu)},
              {"actuator_ctrlrange", ctrlrange},
              {"actuator_forcerange", forcerange}};
}

Json MotionJob(const MotionSetting& s, const std::string& model_dir,
               const std::string& integrator, double h, int steps) {
  std::string xml;
  mjModel* m = LoadMotionSubject(s, model_dir, nullptr, &xml);
  if (!m) throw std::runtime_error("no motion subject " + s.subject);
  mjData* d = mj_makeData(m);
  Json job = StateJob(xml, integrator, m, d);
  job["model"] = ServoEdits(m);
  if (!s.contact) job["disable"] = Json::array({"contact"});
  job["timestep"] = h;
  std::vector<double> ctrl = MotionControls(m, s, h);
  const int all = static_cast<int>(ctrl.size()) / std::max(m->nu, 1);
  job["ctrls"] = ControlRows(ctrl, m->nu, all);
  job["steps"] = steps < 0 ? all : steps;
  job["vmax"] = kMotionVmax;
  mj_deleteData(d);
  mj_deleteModel(m);
  return job;
}

Json ControlRows(const std::vector<double>& ctrl, int nu, int steps) {
  auto row = [&](int k) {
    return std::vector<double>(ctrl.begin() + k * nu, ctrl.begin() + (k + 1) * nu);
  };

  // rows repeated every k steps: k the first step whose row differs from the first
  int every = 1;
  while (every < steps && row(every) == row(0)) ++every;
  for (int k = 0; k < steps && every > 1; ++k) {
    if (row(k) != row(k - k % every)) every = 1;
  }
  Json rows = Json::array();
  for (int k = 0; k < steps; k += every) rows.push_back(row(k));
  return Json{{"every", every}, {"rows", rows}};
}

std::vector<double> Numbers(const Json& array) {
  std::vector<double> x;
  if (array.is_number()) {
    x.push_back(array.get<double>());
    return x;
  }
  for (const Json& v : array) {
    x.push_back(v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>());
  }
  return x;
}

std::string Xpos(int body, int a) { return "xpos[" + std::to_string(3 * body + a) + "]"; }

ContactMetrics StandingOf(double seconds, int body, double h, const Json& r) {
  if (r.contains("error") || !r["stable"].get<bool>()) return {};
  const int stride = ContactStride(h);
  const int n = std::lround(seconds / h), first = n - std::lround(kContactWindow / h);
  std::vector<double> force, penetration, start(3, 0), end(3, 0);
  const Json& t = r["trace"];
  for (size_t i = 0; i < t["normalforce"].size(); ++i) {
    const int k = (i + 1) * stride;  // the step after which sample i was taken
    if (k <= first) continue;
    if (t["ncon"][i].get<double>() == 0) return {};
    force.push_back(t["normalforce"][i].get<double>());
    penetration.push_back(t["depth"][i].get<double>());
  }
  double moved = 0;
  if (body >= 0) {
    const size_t at_first = first / stride - 1, last = t["normalforce"].size() - 1;
    double delta[3];
    for (int a = 0; a < 3; ++a) {
      const Json& x = t[Xpos(body, a)];
      delta[a] = x[last].get<double>() - x[at_first].get<double>();
    }
    moved = mju_norm3(delta);
  }
  return ContactMetricsOf(force, penetration, moved, kContactWindow);
}

}  // namespace mjpos::peer
