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

// The force the step applied, linearised at the end of the step (v+ = qvel + h*qacc), into
// d->actuator_force_step, d->qfrc_actuator_step and d->qfrc_smooth_step; qacc is the acceleration
// the integrator advances with. Called before mj_advance, while d->qvel is still the step's start.

// Euler: the joint damping is implicit, qfrc_smooth_step = qfrc_smooth - h*diag(dof_damping)*qacc;
// the actuator forces are the explicit ones.
void mj_stepForceEuler(const mjModel* m, mjData* d, const mjtNum* qacc);

// implicit: the forces linearised in velocity (qDeriv) and, with mjENBL_IMPLICITPOS, in position
// (the terms kact, kspring of mj_implicitMatrix, NULL for none):
//   actuator_force_step = actuator_force + dfdv*(moment*(v+ - v)) - kact*h*(moment*v+)
//   qfrc_smooth_step    = qfrc_smooth + h*qDeriv*qacc - h*K*v+
// except for an actuator held at a bound (isheld[i], NULL for none), whose force is held[i]. A
// term of K on several branches has its whole velocity term in the step, qDeriv only its part on
// the pattern of M: the step adds the rest to qfrc_smooth_step (mj_branchVelocity).
// Returns 1 if an actuator in K (kact > 0) that is not held and is force-limited applied a force
// beyond its forcerange: mj_stepForceLimit then holds it.
int mj_stepForceImplicit(const mjModel* m, mjData* d, const mjtNum* qacc,
                         const mjtNum* kact, const mjtNum* kspring, const int* isheld,
                         const mjtNum* held);

// mjENBL_IMPLICITPOS within forcerange, when mj_stepForceImplicit returned 1: an actuator whose
// applied force is beyond its forcerange is held at the bound it crossed, with its velocity slope
// and its term of K out of the step's matrix, and the step is solved again into qacc, until no
// other crosses.
// Only actuators in K are held (kact > 0): one outside it, one clamped at the step's start among
// them, is left as stock's step has it; so is one whose velocity term the step cannot take out of
// its matrix (mjd_actuatorVelResolvable), its applied force reported as it is. The matrix is
// factored in scratch: d->qLU is kept.
// onpattern: the step left the terms on several branches out (mj_implicitSolveOnPattern), and
// so does each solve here; after a singular update of them here, the step is solved again without
// them (kact 0 for them) and the hold starts again from its forces.
void mj_stepForceLimit(const mjModel* m, mjData* d, mjtNum* qacc,
                       mjtNum* kact, const mjtNum* kspring, int onpattern);

// RK4: the forces at the start of the step, from the first stage (the four stages' forces act
// through four mass matrices, so no single force gives the step's change of velocity).
void mj_stepForceStart(const mjModel* m, mjData* d);

#ifdef __cplusplus
}
#endif

#endif  // MUJOCO_SRC_ENGINE_ENGINE_STEP_FORCE_H_
