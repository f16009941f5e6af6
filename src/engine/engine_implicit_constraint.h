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

#ifndef MUJOCO_SRC_ENGINE_ENGINE_IMPLICIT_CONSTRAINT_H_
#define MUJOCO_SRC_ENGINE_ENGINE_IMPLICIT_CONSTRAINT_H_

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>

#ifdef __cplusplus
extern "C" {
#endif

// the constraints (d->nefc > 0) solved in the step's metric on the kinematic trees K acts on
//  (kact: K's actuator terms, kspring: its spring terms or NULL) and in M on the others (mat:
//  the step's matrix, qLU its LU factors)
int mj_implicitConstraint(const mjModel* m, mjData* d, const mjtNum* mat, mjtNum* qfrc,
                          const mjtNum* kact, const mjtNum* kspring, int solved);

#ifdef __cplusplus
}
#endif

#endif  // MUJOCO_SRC_ENGINE_ENGINE_IMPLICIT_CONSTRAINT_H_
