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

// Bit identity with stock MuJoCo 2.2.2: mjpos_statedump, built once against the stock library and
// once against the patched one, hashes the full state after 1000 steps of every model in the
// source's model/ and test/ directories. Two libmujoco builds cannot share a process, hence the
// two programs.

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "support/state_hash.h"

namespace {

using mjpos::RunStatedump;

std::string ModelArgs() {
  std::vector<std::string> paths;
  for (const char* dir : {MJPOS_MODEL_DIR, MJPOS_SOURCE_TEST_DIR}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (entry.path().extension() == ".xml") paths.push_back(entry.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  std::string args;
  for (const std::string& p : paths) args += " '" + p + "'";
  return args;
}

// model path -> hash (or error) line of one run of a statedump binary
std::map<std::string, std::string> RunDump(const std::string& tool, const std::string& options) {
  std::string cmd = "'" + tool + "' " + options + ModelArgs() + " 2>/dev/null </dev/null";
  std::map<std::string, std::string> out;
  EXPECT_TRUE(RunStatedump(cmd, nullptr, &out)) << cmd;
  return out;
}

int Hashed(const std::map<std::string, std::string>& run) {
  int n = 0;
  for (const auto& [path, result] : run) n += result != "load-error" && result != "mju_error";
  return n;
}

const std::string kFlag = "--enable " + std::to_string(mjENBL_IMPLICITPOS);

void ExpectIdentical(const std::string& stock_options, const std::string& patched_options) {
  auto stock = RunDump(MJPOS_STOCK_STATEDUMP, stock_options);
  auto patched = RunDump(MJPOS_PATCHED_STATEDUMP, patched_options);
  EXPECT_GE(Hashed(stock), 50);  // the comparison covers most models, not only errors
  EXPECT_EQ(stock.size(), patched.size());
  for (const auto& [path, result] : stock) {
    EXPECT_EQ(patched[path], result) << path;
  }
}

// flag off: patched = stock, under each model's own integrator and under implicit
// Catches: any flag-off change to the engine, under each model's integrator.
TEST(BitIdentity, FlagOffModelIntegrator) {
  ExpectIdentical("--integrator model", "--integrator model");
}

// Catches: any flag-off change to the implicit integrator.
TEST(BitIdentity, FlagOffImplicit) {
  ExpectIdentical("--integrator implicit", "--integrator implicit");
}

// flag on under Euler and RK4: patched = stock
// Catches: the flag acting under Euler.
TEST(BitIdentity, FlagOnEuler) {
  ExpectIdentical("--integrator euler", "--integrator euler " + kFlag);
}

// Catches: the flag acting under RK4.
TEST(BitIdentity, FlagOnRk4) {
  ExpectIdentical("--steps 1000 --integrator rk4", "--steps 1000 --integrator rk4 " + kFlag);
}

// the comparison can fail: with the flag on under implicit, models with springs or servos differ
// Catches: a comparison that cannot fail (a flag that does nothing passes the others).
TEST(BitIdentity, FlagOnImplicitDiffers) {
  auto stock = RunDump(MJPOS_STOCK_STATEDUMP, "--steps 100 --integrator implicit");
  auto patched = RunDump(MJPOS_PATCHED_STATEDUMP, "--steps 100 --integrator implicit " + kFlag);
  int differ = 0;
  for (const auto& [path, result] : stock) differ += patched[path] != result;
  EXPECT_GE(differ, 3);
  std::string humanoid = std::string(MJPOS_MODEL_DIR) + "/humanoid/humanoid.xml";
  EXPECT_NE(patched[humanoid], stock[humanoid]);  // joint stiffness
}

}  // namespace
