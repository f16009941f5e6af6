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

#include "engine/engine_inverse_discrete.h"

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_core_smooth.h"
#include "engine/engine_derivative.h"
#include "engine/engine_forward.h"
#include "engine/engine_implicit_step.h"
#include "engine/engine_io.h"
#include "engine/engine_macro.h"
#include "engine/engine_posbranch.h"
#include "engine/engine_support.h"
#include "engine/engine_util_blas.h"
#include "engine/engine_util_errmem.h"
#include "engine/engine_util_sparse.h"

// convert the discrete-time qacc of one mj_step to the continuous-time qacc, in place
void mj_discreteAcc(const mjModel* m, mjData* d) {
  int nv = m->nv, nu = m->nu, na = m->na;
  mjtNum h = m->opt.timestep;
  mjtNum* qacc = d->qacc;

  mjMARKSTACK;
  mjtNum* qfrc = mj_stackAlloc(d, nv);

  switch ((mjtIntegrator) m->opt.integrator) {
  case mjINT_EULER:
    {
      // no dof damping: explicit velocity integration, qacc is unchanged
      int i;
      for (i=0; i<nv; i++) {
        if (m->dof_damping[i]>0) {
          break;
        }
      }
      if (i>=nv) {
        mjFREESTACK;
        return;
      }

      // qfrc = (M + h*diag(dof_damping)) * qacc
      mj_mulM(m, d, qfrc, qacc);
      for (i=0; i<nv; i++) {
        qfrc[i] += h * m->dof_damping[i] * qacc[i];
      }
    }
    break;

  case mjINT_IMPLICIT:
    {
      mjtNum* MhD = mj_stackAlloc(d, m->nD);
      mjtNum* kact = mj_stackAlloc(d, nu);
      mjtNum* save = NULL;

      // construct sparse structure in d->D_xxx, compute qDeriv
      mj_makeMSparse(m, d, d->D_rownnz, d->D_rowadr, d->D_colind);
      mjd_smooth_vel(m, d);

      // the scope of K reads actuator_force: compute it, keep the caller's actuation outputs
      if (mjENABLED(mjENBL_IMPLICITPOS)) {
        save = mj_stackAlloc(d, nu + nv + na);
        mju_copy(save, d->actuator_force, nu);
        mju_copy(save+nu, d->qfrc_actuator, nv);
        mju_copy(save+nu+nv, d->act_dot, na);
        mj_fwdActuation(m, d);
      }

      // MhD = qM - h*qDeriv (+ h^2*K) and qfrc = -h*K*qvel, as the step has them
      mju_zero(qfrc, nv);
      int nbranch = mj_implicitMatrix(m, d, MhD, qfrc, kact, NULL, NULL, NULL, 0);
      if (save) {
        mju_copy(d->actuator_force, save, nu);
        mju_copy(d->qfrc_actuator, save+nu, nv);
        mju_copy(d->act_dot, save+nu+nv, na);
      }

      // qfrc = MhD*qacc + h*K*qvel, and the terms of K on several branches (outside MhD) times qacc
      mjtNum* Mqacc = mj_stackAlloc(d, nv);
      mju_mulMatVecSparse(Mqacc, MhD, qacc, nv, d->D_rownnz, d->D_rowadr, d->D_colind, NULL);
      mju_sub(qfrc, Mqacc, qfrc, nv);
      if (nbranch) {
        mj_branchMul(m, d, qfrc, qacc, kact, h*h);
      }
    }
    break;

  default:
    // RK4: the update is not linear in a single acceleration
    mjFREESTACK;
    mju_error("mj_inverse: invdiscrete is not defined for the RK4 integrator");
    return;
  }

  // solve M*qacc = qfrc, M factorized in mj_invPosition
  mj_solveM(m, d, qacc, qfrc, 1);

  mjFREESTACK;
}
