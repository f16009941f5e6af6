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

#ifndef MUJOCO_SRC_ENGINE_ENGINE_POSBRANCH_H_
#define MUJOCO_SRC_ENGINE_ENGINE_POSBRANCH_H_

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>

#ifdef __cplusplus
extern "C" {
#endif

// the terms of K on several branches in a solve: res = A^-1 b updated by Woodbury; 0 if singular
int mj_branchSolve(const mjModel* m, mjData* d, mjtNum* res, const mjtNum* LU,
                   const mjtNum* mat, const mjtNum* vec, const mjtNum* kact, mjtNum scl);

// res += sum_i (scl kact[i] - h dfdv_i) m_i' m_i vec over the terms on several branches
void mj_branchMul(const mjModel* m, const mjData* d, mjtNum* res, const mjtNum* vec,
                  const mjtNum* kact, mjtNum scl);

// res += scl * sum_i dfdv_i (m_i' m_i - P_i) vec, P_i the part on the pattern of M
void mj_branchVelocity(const mjModel* m, const mjData* d, mjtNum* res, const mjtNum* kact,
                       const mjtNum* vec, mjtNum scl);

#ifdef __cplusplus
}
#endif

#endif  // MUJOCO_SRC_ENGINE_ENGINE_POSBRANCH_H_
