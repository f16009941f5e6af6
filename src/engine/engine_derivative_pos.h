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

#ifndef MUJOCO_SRC_ENGINE_ENGINE_DERIVATIVE_POS_H_
#define MUJOCO_SRC_ENGINE_ENGINE_DERIVATIVE_POS_H_

#include <mujoco/mjdata.h>
#include <mujoco/mjexport.h>
#include <mujoco/mjmodel.h>

#ifdef __cplusplus
extern "C" {
#endif

// what becomes of a term of K whose moment is on several branches
typedef enum mjtBranchMode_ {
  mjBRANCH_SOLVE = 0,             // in vec, out of matD: the solve adds it
  mjBRANCH_SWAP,                  // also its velocity term's part on M's pattern out of matD
  mjBRANCH_OMIT                   // out of K altogether
} mjtBranchMode;

// add sclK*K to matD and sclKv*K*qvel to vec, the stiffness of each term to kact and kspring;
// weighted: 1 if a term is weighted below 1 (mjENBL_POSWEIGHT), else 0
int mjd_stiffnessTerms(const mjModel* m, mjData* d, mjtNum* matD, mjtNum sclK,
                       mjtNum* vec, mjtNum sclKv, mjtNum* kact, mjtNum* kspring,
                       int* nspring, int* weighted, mjtBranchMode branch);

// add scl*k*m'*m of actuator i to matD, on the pattern of M
void mjd_addActuatorTerm(const mjModel* m, const mjData* d, mjtNum* matD, int i,
                         mjtNum scl, mjtNum k);

// add sclK*K to matD (D sparsity) and sclKv*K*qvel to vec
MJAPI void mjd_implicitPos(const mjModel* m, mjData* d,
                           mjtNum* matD, mjtNum sclK, mjtNum* vec, mjtNum sclKv);

#ifdef __cplusplus
}
#endif

#endif  // MUJOCO_SRC_ENGINE_ENGINE_DERIVATIVE_POS_H_
