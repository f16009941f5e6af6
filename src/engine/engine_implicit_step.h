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

#ifndef MUJOCO_SRC_ENGINE_ENGINE_IMPLICIT_STEP_H_
#define MUJOCO_SRC_ENGINE_ENGINE_IMPLICIT_STEP_H_

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>

#ifdef __cplusplus
extern "C" {
#endif

// the implicit step's matrix mat = M - h*qDeriv + h^2*K (NULL: none) and rhs -= h*K*qvel;
// weighted: 1 if a term of K is weighted below 1 (mjd_stiffnessTerms; set only with the flag)
int mj_implicitMatrix(const mjModel* m, mjData* d, mjtNum* mat, mjtNum* rhs, mjtNum* kact,
                      mjtNum* kspring, int* nspring, int* weighted, int onpattern);

// the step's solve with the terms of K on the pattern of M only, factorized in scratch
void mj_implicitSolveOnPattern(const mjModel* m, mjData* d, mjtNum* qacc, mjtNum* kact,
                               mjtNum* kspring);

#ifdef __cplusplus
}
#endif

#endif  // MUJOCO_SRC_ENGINE_ENGINE_IMPLICIT_STEP_H_
