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

#ifndef MUJOCO_SRC_ENGINE_ENGINE_STEP_FORCE_H_
#define MUJOCO_SRC_ENGINE_ENGINE_STEP_FORCE_H_

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>

#ifdef __cplusplus
extern "C" {
#endif

// the force the step applied, linearised at the end of the step (doc/engine.md)

// the force the Euler step applied
void mj_stepForceEuler(const mjModel* m, mjData* d, const mjtNum* qacc);

// the force the implicit step applied; 1 if an actuator in K crosses forcerange
int mj_stepForceImplicit(const mjModel* m, mjData* d, const mjtNum* qacc,
                         const mjtNum* kact, const mjtNum* kspring, const int* isheld,
                         const mjtNum* held);

// hold at its bound each actuator that crosses its forcerange, solve again
void mj_stepForceLimit(const mjModel* m, mjData* d, mjtNum* qacc,
                       mjtNum* kact, const mjtNum* kspring, int onpattern);

// RK4: the forces at the start of the step
void mj_stepForceStart(const mjModel* m, mjData* d);

#ifdef __cplusplus
}
#endif

#endif  // MUJOCO_SRC_ENGINE_ENGINE_STEP_FORCE_H_
