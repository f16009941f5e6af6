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

#include "engine/engine_step_force.h"

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_derivative.h"
#include "engine/engine_io.h"
#include "engine/engine_macro.h"
#include "engine/engine_util_blas.h"

// the dof of the moment of actuator i when it has one dof (a hinge or slide joint transmission),
// -1 otherwise
static int momentDof(const mjModel* m, int i) {
  int trn = m->actuator_trntype[i], id = m->actuator_trnid[2*i];
  if ((trn==mjTRN_JOINT || trn==mjTRN_JOINTINPARENT) &&
      (m->jnt_type[id]==mjJNT_HINGE || m->jnt_type[id]==mjJNT_SLIDE)) {
    return m->jnt_dofadr[id];
  }
  return -1;
}



// the step's forces, Euler: implicit joint damping, explicit actuators
void mj_stepForceEuler(const mjModel* m, mjData* d, const mjtNum* qacc) {
  int nv = m->nv;
  mjtNum h = m->opt.timestep;

  // actuators: as computed
  mju_copy(d->actuator_force_step, d->actuator_force, m->nu);
  mju_copy(d->qfrc_actuator_step, d->qfrc_actuator, nv);

  // smooth forces: the damping at the end of the step (mj_EulerSkip's M + h*diag(B))
  for (int i=0; i<nv; i++) {
    d->qfrc_smooth_step[i] = d->qfrc_smooth[i] - h * m->dof_damping[i] * qacc[i];
  }
}



// the step's forces, implicit: linearised in velocity and, for the terms of K, in position
void mj_stepForceImplicit(const mjModel* m, mjData* d, const mjtNum* qacc,
                          const mjtNum* kact, const mjtNum* kspring) {
  int nv = m->nv;
  mjtNum h = m->opt.timestep;
  mjMARKSTACK;
  mjtNum* vnew = mj_stackAlloc(d, nv);

  // v+ = qvel + h*qacc
  mju_addScl(vnew, d->qvel, qacc, h, nv);

  // smooth forces, velocity terms: qfrc_smooth + h*qDeriv*qacc (qDeriv: D sparsity)
  for (int r=0; r<nv; r++) {
    mjtNum dq = 0;
    int adr = d->D_rowadr[r], end = adr + d->D_rownnz[r];
    for (int a=adr; a<end; a++) {
      dq += d->qDeriv[a] * qacc[d->D_colind[a]];
    }
    d->qfrc_smooth_step[r] = d->qfrc_smooth[r] + h * dq;
  }

  // springs in K: -h*kspring*v+
  if (kspring) {
    for (int i=0; i<nv; i++) {
      d->qfrc_smooth_step[i] -= h * kspring[i] * vnew[i];
    }
  }

  // actuators: velocity slope over the change of velocity, stiffness in K over h*v+
  mju_copy(d->qfrc_actuator_step, d->qfrc_actuator, nv);
  for (int i=0; i<m->nu; i++) {
    mjtNum dfdv = mjDISABLED(mjDSBL_ACTUATION) ? 0 : mjd_actuatorVel(m, d, i);
    mjtNum k = kact ? kact[i] : 0;
    d->actuator_force_step[i] = d->actuator_force[i];
    if (dfdv==0 && k==0) {
      continue;
    }

    // moment times h*qacc and v+: one dof, or the dense row
    const mjtNum* moment = d->actuator_moment + i*nv;
    int dof = momentDof(m, i);
    mjtNum mdv, mv;
    if (dof >= 0) {
      mdv = h * moment[dof] * qacc[dof];
      mv = moment[dof] * vnew[dof];
    } else {
      mdv = h * mju_dot(moment, qacc, nv);
      mv = mju_dot(moment, vnew, nv);
    }
    mjtNum dfk = -k * h * mv;
    mjtNum df = dfdv*mdv + dfk;
    d->actuator_force_step[i] += df;

    // joint space; the position term also in the smooth forces (qDeriv has the velocity term)
    if (dof >= 0) {
      d->qfrc_actuator_step[dof] += moment[dof] * df;
      d->qfrc_smooth_step[dof] += moment[dof] * dfk;
    } else {
      mju_addToScl(d->qfrc_actuator_step, moment, df, nv);
      if (dfk) {
        mju_addToScl(d->qfrc_smooth_step, moment, dfk, nv);
      }
    }
  }

  mjFREESTACK;
}



// the step's forces, RK4: those at the start of the step
void mj_stepForceStart(const mjModel* m, mjData* d) {
  mju_copy(d->actuator_force_step, d->actuator_force, m->nu);
  mju_copy(d->qfrc_actuator_step, d->qfrc_actuator, m->nv);
  mju_copy(d->qfrc_smooth_step, d->qfrc_smooth, m->nv);
}
