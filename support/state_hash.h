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

// The state hash of the bit-identity tests, one definition for the tool that prints it
// (test/statedump, built against the stock and the patched library alike: this file uses stock
// 2.2.2's API only) and for the tests that compare it in process or read the tool's output.

#ifndef MJPOS_SUPPORT_STATE_HASH_H_
#define MJPOS_SUPPORT_STATE_HASH_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include <mujoco/mujoco.h>

namespace mjpos {

// FNV-1a over the bytes of the state, its derivatives and every output of mj_step a user reads:
// time, qpos, qvel, act, qacc, qacc_warmstart, act_dot, qfrc_actuator, qfrc_passive,
// qfrc_constraint, actuator_force, sensordata, xpos, xquat, energy, ncon, ne, nefc and the
// warning counters.
std::uint64_t HashState(const mjModel* m, const mjData* d);

// Runs command, which prints lines "<result> <path>" or "<result> <path>:" (mjpos_statedump), and
// fills out with path -> result. Where known is not null, lines whose path it does not hold are
// skipped (MuJoCo's own messages on stdout). Returns false if the command could not be started
// or exited with a non-zero status.
bool RunStatedump(const std::string& command, const std::set<std::string>* known,
                  std::map<std::string, std::string>* out);

}  // namespace mjpos

#endif  // MJPOS_SUPPORT_STATE_HASH_H_
