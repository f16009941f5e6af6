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

// The implicitpos flag in MJCF: read, written, rejected when malformed, and consistent with the
// C enum and mjENABLESTRING.

#include <cctype>
#include <cstring>
#include <memory>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "test/fixture.h"
#include "support/models.h"

namespace {

using ::testing::HasSubstr;
using ::testing::IsNull;
using ::testing::NotNull;

std::string WithFlag(const std::string& attr) {
  return "<mujoco><option><flag " + attr + "/></option>"
         "<worldbody><body><joint/><geom size=\".1\"/></body></worldbody></mujoco>";
}

class ImplicitPosXml : public ::mujoco::MujocoTest {};

// Catches: the flag enabled by default.
TEST_F(ImplicitPosXml, DefaultIsDisabled) {
  mjModel* m = mjpos::LoadXmlString(WithFlag(""));
  ASSERT_THAT(m, NotNull());
  EXPECT_EQ(m->opt.enableflags & mjENBL_IMPLICITPOS, 0);
  EXPECT_THAT(mjpos::SaveLastXml(m), ::testing::Not(HasSubstr("implicitpos")));
  mj_deleteModel(m);
}

// Catches: the flag lost when reading or writing MJCF.
TEST_F(ImplicitPosXml, EnableDisableAndRoundTrip) {
  mjModel* m = mjpos::LoadXmlString(WithFlag("implicitpos=\"disable\""));
  ASSERT_THAT(m, NotNull());
  EXPECT_EQ(m->opt.enableflags & mjENBL_IMPLICITPOS, 0);
  mj_deleteModel(m);

  m = mjpos::LoadXmlString(WithFlag("implicitpos=\"enable\""));
  ASSERT_THAT(m, NotNull());
  EXPECT_EQ(m->opt.enableflags, mjENBL_IMPLICITPOS);  // this bit and no other
  std::string saved = mjpos::SaveLastXml(m);
  EXPECT_THAT(saved, HasSubstr("implicitpos=\"enable\""));
  mj_deleteModel(m);

  // load -> save -> load keeps it
  mjModel* again = mjpos::LoadXmlString(saved);
  ASSERT_THAT(again, NotNull());
  EXPECT_EQ(again->opt.enableflags & mjENBL_IMPLICITPOS, mjENBL_IMPLICITPOS);
  mj_deleteModel(again);
}

// Catches: a bad attribute value accepted silently.
TEST_F(ImplicitPosXml, BadValueIsAParserError) {
  for (const char* value : {"bogus", "true", "1", ""}) {
    std::string error;
    mjModel* m =
        mjpos::LoadXmlString(WithFlag(std::string("implicitpos=\"") + value + "\""), &error);
    EXPECT_THAT(m, IsNull()) << value;
    EXPECT_THAT(error, HasSubstr("invalid keyword")) << value;
    EXPECT_THAT(error, HasSubstr("Element 'flag'")) << value;
    if (m) mj_deleteModel(m);
  }
}

// enum bit, mjENABLESTRING and XML attribute agree, for this and every other enable flag
// Catches: enum bit, mjENABLESTRING and XML name out of step.
TEST_F(ImplicitPosXml, EnumStringAndAttributeAgree) {
  EXPECT_GE(mjNENABLE, 6);
  EXPECT_EQ(mjENBL_IMPLICITPOS, 1 << 5);  // the first free bit of 2.2.2
  EXPECT_STREQ(mjENABLESTRING[5], "ImplicitPos");
  for (int i = 0; i < mjNENABLE; ++i) {
    std::string name = mjENABLESTRING[i];
    for (char& c : name) c = std::tolower(static_cast<unsigned char>(c));
    std::string error;
    mjModel* m = mjpos::LoadXmlString(WithFlag(name + "=\"enable\""), &error);
    ASSERT_THAT(m, NotNull()) << name << ": " << error;
    EXPECT_EQ(m->opt.enableflags, 1 << i) << name;
    mj_deleteModel(m);
  }
}

}  // namespace
