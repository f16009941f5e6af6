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
// test/models.h).

#ifndef MJPOS_TEST_FIXTURE_H_
#define MJPOS_TEST_FIXTURE_H_

#include <string>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "test/models.h"

namespace mjpos {

// Compiles an MJCF string; if it does not compile, the test fails with the compiler's message
// and the model text, and the result is null.
inline ModelPtr LoadModelOrFail(const std::string& xml) {
  std::string error;
  ModelPtr m(LoadXmlString(xml, &error));
  EXPECT_NE(m, nullptr) << error << "\n" << xml;
  return m;
}

// Sets (on) or clears the enable flags `bits` of m.
inline void SetEnable(mjModel* m, int bits, bool on) {
  if (on) {
    m->opt.enableflags |= bits;
  } else {
    m->opt.enableflags &= ~bits;
  }
}

}  // namespace mjpos

#endif  // MJPOS_TEST_FIXTURE_H_
