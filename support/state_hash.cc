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

#include "support/state_hash.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <mujoco/mujoco.h>

namespace mjpos {
namespace {

// FNV-1a over raw bytes
void Hash(std::uint64_t* h, const void* data, std::size_t nbytes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < nbytes; ++i) {
    *h ^= p[i];
    *h *= 1099511628211ULL;
  }
}

void HashNum(std::uint64_t* h, const mjtNum* x, int n) {
  if (n > 0) Hash(h, x, sizeof(mjtNum) * n);
}

}  // namespace

std::uint64_t HashState(const mjModel* m, const mjData* d) {
  std::uint64_t h = 14695981039346656037ULL;
  HashNum(&h, &d->time, 1);
  HashNum(&h, d->qpos, m->nq);
  HashNum(&h, d->qvel, m->nv);
  HashNum(&h, d->act, m->na);
  HashNum(&h, d->qacc, m->nv);
  HashNum(&h, d->qacc_warmstart, m->nv);
  HashNum(&h, d->act_dot, m->na);
  HashNum(&h, d->qfrc_actuator, m->nv);
  HashNum(&h, d->qfrc_passive, m->nv);
  HashNum(&h, d->qfrc_constraint, m->nv);
  HashNum(&h, d->actuator_force, m->nu);
  HashNum(&h, d->sensordata, m->nsensordata);
  HashNum(&h, d->xpos, 3 * m->nbody);
  HashNum(&h, d->xquat, 4 * m->nbody);
  HashNum(&h, d->energy, 2);
  Hash(&h, &d->ncon, sizeof(d->ncon));
  Hash(&h, &d->ne, sizeof(d->ne));
  Hash(&h, &d->nefc, sizeof(d->nefc));
  for (int i = 0; i < mjNWARNING; ++i) {
    Hash(&h, &d->warning[i].number, sizeof(d->warning[i].number));
  }
  return h;
}

bool RunStatedump(const std::string& command, const std::set<std::string>* known,
                  std::map<std::string, std::string>* out) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return false;
  std::array<char, 4096> buf;
  while (std::fgets(buf.data(), buf.size(), pipe)) {
    std::istringstream line(buf.data());
    std::string result, path;
    line >> result >> path;
    if (!path.empty() && path.back() == ':') path.pop_back();
    if (path.empty() || (known && !known->count(path))) continue;
    (*out)[path] = result;
  }
  return pclose(pipe) == 0;
}

}  // namespace mjpos
