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

#ifndef MUJOCO_SRC_ENGINE_ENGINE_POSWEIGHT_H_
#define MUJOCO_SRC_ENGINE_ENGINE_POSWEIGHT_H_

#include <mujoco/mjdata.h>
#include <mujoco/mjexport.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_posscope.h"

#ifdef __cplusplus
extern "C" {
#endif

// accuracy weight of the term of an actuator or of a scalar joint's dof under mjENBL_POSWEIGHT
MJAPI mjtNum mjd_posWeight(const mjModel* m, mjData* d, int objtype, int id);

// the table of mjd_posWeight
MJAPI void mjd_posWeightTable(int* nzeta, int* ns, mjtNum* ds, mjtNum* below,
                              const mjtNum** zeta, const mjtNum** theta);

// restoring slope of each actuator (0: none), stiffness and damping on each dof (kdof, then
// cdof), every term's weight (wdof after them, wten), the springs' stiffness on each dof in
// kspring (if given) and their number in nspring; return 1 if a term is weighted below 1
int mjd_posWeightTerms(const mjModel* m, mjData* d, ctrlState* controls, mjtNum* slope,
                       mjtNum* kdof, mjtNum* kspring, int* nspring, mjtNum* cache,
                       mjtNum* wten);

#ifdef __cplusplus
}
#endif

#endif  // MUJOCO_SRC_ENGINE_ENGINE_POSWEIGHT_H_
