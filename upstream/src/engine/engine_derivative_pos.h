// Copyright 2026 DeepMind Technologies Limited
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

// Position stiffness used by mjENBL_IMPLICITPOS: K = -d (qfrc_actuator + qfrc_passive) / d qpos,
// restricted to the forces whose derivative is exact, restoring, finite and no stiffer than the
// factorization can resolve (h^2 * stiffness <= mjMAXVAL): hinge/slide joint stiffness, and SISO
// actuators with fixed, affine or PID gain and no or affine bias on hinge/slide joints, on fixed
// tendons along one kinematic chain, or on translational site transmissions whose refsite is on
// the site's chain (hinges and slides between them), not on a forcerange, jnt_actfrcrange or
// tendon_actfrcrange clamp. For site transmissions, whose moment depends on qpos, the geometric
// term force * d moment / d qpos is left out. K is symmetric, positive semidefinite and has the
// sparsity of M. Sleeping actuators and joints are skipped.
// Requires mj_fwdActuation on the same state: slopes and clamps are read from its outputs; uses
// the stack of d. Adds sclK * K to matD (D pattern, as qLU) and sclKv * K * qvel to vec; either
// may be NULL.
MJAPI void mjd_implicitPos(const mjModel* m, mjData* d,
                           mjtNum* matD, mjtNum sclK, mjtNum* vec, mjtNum sclKv);

// As mjd_implicitPos, but adds the lower triangle of sclK * K to matM (lower M pattern, as qH).
MJAPI void mjd_implicitPosM(const mjModel* m, mjData* d,
                            mjtNum* matM, mjtNum sclK, mjtNum* vec, mjtNum sclKv);

// scope of mjENBL_IMPLICITPOS for one actuator
typedef enum mjtPosScope_ {
  mjPOSSCOPE_RESTORING = 0,       // in scope, restoring slope: contributes to K
  mjPOSSCOPE_ZERO,                // in scope, zero slope (e.g. a motor): nothing to add
  mjPOSSCOPE_NONRESTORING,        // in scope, slope positive, not finite or beyond the bound
                                  // -h^2 * slope <= mjMAXVAL: left explicit
  mjPOSSCOPE_CLAMPED,             // on a forcerange or actfrcrange clamp: left explicit
  mjPOSSCOPE_GAINBIAS,            // muscle, dcmotor, user or plugin gain/bias, delayed input
                                  // to a position-dependent gain, PID integral with actearly
  mjPOSSCOPE_TRANSMISSION,        // ball/free joint (also in a fixed tendon), spatial tendon,
                                  // body, slider-crank, SO3, site without refsite or with
                                  // rotational gear
  mjPOSSCOPE_BRANCH,              // fixed tendon of hinges/slides or site-refsite not on one
                                  // kinematic chain, or on several dofs of a simple body (off
                                  // the lower M pattern)
  mjPOSSCOPE_DISABLED             // actuation or actuator group disabled
} mjtPosScope;

// Scope of actuator i under mjENBL_IMPLICITPOS (mjtPosScope). If slope is not NULL, it receives
// d actuator_force / d actuator_length when the gain and bias types are in scope, and 0
// otherwise. Requires mj_fwdActuation (d->actuator_force, d->qfrc_actuator). Uses the stack of d.
MJAPI int mjd_actuatorPosScope(const mjModel* m, mjData* d, int i, mjtNum* slope);

#ifdef __cplusplus
}
#endif

#endif  // MUJOCO_SRC_ENGINE_ENGINE_DERIVATIVE_POS_H_
