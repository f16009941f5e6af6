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

// Helpers the GoogleTest tests share (the model builders, usable without GoogleTest, are in
// support/models.h), and upstream's fixture: mujoco::MujocoTest, the base of the tests that must
// not make MuJoCo warn or fail, and mujoco::SaveAndReadXml. Tests that make MuJoCo warn on purpose
// hold a WarningCapture.

#ifndef MJPOS_TEST_FIXTURE_H_
#define MJPOS_TEST_FIXTURE_H_

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "engine/engine_support.h"
#include "support/one_dof.h"
#include "support/models.h"

// upstream's test/fixture.h, by its full path: its relative name is this file's
#include MJPOS_UPSTREAM_FIXTURE_H

namespace mjpos {

using ::mujoco::MujocoTest;

// Records MuJoCo's warnings while in scope instead of letting them print (MuJoCo's default
// handler writes "WARNING: ..." to stdout and to MUJOCO_LOG.TXT) or fail the test (MujocoTest's
// handler): for code that drives the engine into divergence on purpose. The previous handler is
// restored at the end of the scope, so that under MujocoTest a warning outside it still fails
// the test. Scopes nest; the innermost records.
class WarningCapture {
 public:
  WarningCapture() : previous_(mju_user_warning), outer_(active_) {
    active_ = this;
    mju_user_warning = &Record;
  }
  ~WarningCapture() {
    mju_user_warning = previous_;
    active_ = outer_;
  }
  WarningCapture(const WarningCapture&) = delete;
  WarningCapture& operator=(const WarningCapture&) = delete;

  // the warnings raised in scope, in order
  const std::vector<std::string>& messages() const { return messages_; }

  // how many of them contain `text` (all of them if empty)
  int Count(const std::string& text = "") const {
    return static_cast<int>(std::count_if(messages_.begin(), messages_.end(),
                                          [&](const std::string& m) {
                                            return m.find(text) != std::string::npos;
                                          }));
  }

 private:
  static void Record(const char* msg) {
    std::lock_guard<std::mutex> lock(mutex_);
    active_->messages_.push_back(msg);
  }

  void (*previous_)(const char*);
  WarningCapture* outer_;
  std::vector<std::string> messages_;
  static inline WarningCapture* active_ = nullptr;
  static inline std::mutex mutex_;  // warnings from OnEveryCore's threads
};

// Compiles an MJCF string; if it does not compile, the test fails with the compiler's message
// and the model text, and the result is null.
inline ModelPtr LoadModelOrFail(const std::string& xml) {
  std::string error;
  ModelPtr m(LoadXmlString(xml, &error));
  EXPECT_NE(m, nullptr) << error << "\n" << xml;
  return m;
}

// mj_saveLastXML of the last loaded model, read back (upstream's SaveAndReadXml); fails the test
// if no model was written, so that a test of what the text lacks cannot pass on an empty file.
inline std::string SaveLastXml(const mjModel* m) {
  std::string xml = ::mujoco::SaveAndReadXml(m);
  EXPECT_THAT(xml, ::testing::HasSubstr("<mujoco")) << "mj_saveLastXML wrote no model";
  return xml;
}

// The one-step map of (q, v) of a one-dof model, target 0 (ctrl 0), recovered from mj_step:
// column c from the reset state with qpos[0] (c = 0) or qvel[0] (c = 1) set to delta, divided by
// delta. The engine's side of the tests of the servo report's one-dof map.
inline Map2 EngineStepMap(const mjModel* m, double delta) {
  Map2 map;
  DataPtr d(mj_makeData(m));
  for (int c = 0; c < 2; ++c) {
    mj_resetData(m, d.get());
    (c ? d->qvel : d->qpos)[0] = delta;
    mj_step(m, d.get());
    map.a[0][c] = d->qpos[0] / delta;
    map.a[1][c] = d->qvel[0] / delta;
  }
  return map;
}

// K of mjd_implicitPos as a dense nv x nv matrix (row-major), and its vector output K*qvel; sets
// the D pattern of d (mj_makeMSparse), which mjd_implicitPos needs.
inline void EngineK(const mjModel* m, mjData* d, std::vector<double>* k,
                    std::vector<double>* kv) {
  int nv = m->nv;
  mj_makeMSparse(m, d, d->D_rownnz, d->D_rowadr, d->D_colind);
  std::vector<mjtNum> matD(m->nD, 0.0);
  kv->assign(nv, 0.0);
  mjd_implicitPos(m, d, matD.data(), 1, kv->data(), 1);
  k->assign(nv * nv, 0.0);
  for (int r = 0; r < nv; ++r) {
    for (int j = 0; j < d->D_rownnz[r]; ++j) {
      int adr = d->D_rowadr[r] + j;
      (*k)[r * nv + d->D_colind[adr]] = matD[adr];
    }
  }
}

// The engine's K and K*qvel against the central difference FiniteDifferenceK of step eps at the
// state of d (after mj_forward): their relative errors (RelDiff), and the largest |element| of the
// difference, 0 when there is nothing to compare.
struct KError {
  double k, kv, scale;
};
inline KError KAgainstFiniteDifference(const mjModel* m, mjData* d, double eps) {
  int nv = m->nv;
  std::vector<double> k, kv;
  EngineK(m, d, &k, &kv);
  std::vector<double> fd = FiniteDifferenceK(m, d, eps);
  std::vector<double> fdv(nv, 0.0);
  for (int r = 0; r < nv; ++r) {
    for (int c = 0; c < nv; ++c) fdv[r] += fd[r * nv + c] * d->qvel[c];
  }
  KError error = {RelDiff(k.data(), fd.data(), nv * nv), RelDiff(kv.data(), fdv.data(), nv), 0};
  for (double x : fd) error.scale = std::max(error.scale, std::abs(x));
  return error;
}

// The model of xml after n steps from the state start(m, d) sets, flag on or off, with the
// accuracy weights or not; false if it warned (inside a WarningCapture) or left a non-finite
// state (StepStable).
template <typename Start>
bool StableFrom(const std::string& xml, bool flag, bool weighted, int n, Start start) {
  ModelPtr m = LoadModelOrFail(xml);
  if (!m) return false;
  SetEnable(m.get(), mjENBL_IMPLICITPOS, flag);
  SetEnable(m.get(), mjENBL_POSWEIGHT, weighted);
  DataPtr d(mj_makeData(m.get()));
  start(m.get(), d.get());
  WarningCapture capture;
  return StepStable(m.get(), d.get(), n);
}

// A general actuator on target (e.g. joint="a"): affine gain [g0 g1 0], (g0 + g1*length)*input,
// and affine bias [0 b1 b2], b1*length + b2*velocity; extra: more attributes.
inline std::string AffineActuator(const std::string& target, double g0, double g1, double b1,
                                  double b2, const std::string& extra = "") {
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "<general %s gaintype=\"affine\" gainprm=\"%.17g %.17g 0\" biastype=\"affine\" "
                "biasprm=\"0 %.17g %.17g\" %s/>\n",
                target.c_str(), g0, g1, b1, b2, extra.c_str());
  return buf;
}

}  // namespace mjpos

#endif  // MJPOS_TEST_FIXTURE_H_
