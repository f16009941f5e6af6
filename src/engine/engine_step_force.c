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

#include <stddef.h>

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_derivative.h"
#include "engine/engine_derivative_pos.h"
#include "engine/engine_io.h"
#include "engine/engine_macro.h"
#include "engine/engine_support.h"
#include "engine/engine_util_blas.h"
#include "engine/engine_util_solve.h"

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
                          const mjtNum* kact, const mjtNum* kspring, const int* isheld,
                          const mjtNum* held) {
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
    const mjtNum* moment = d->actuator_moment + i*nv;

    // held at its bound (mj_stepForceLimit): its force, without its velocity term in qDeriv
    if (isheld && isheld[i]) {
      mjtNum df = held[i] - d->actuator_force[i];
      mjtNum mdv = h * mju_dot(moment, qacc, nv);
      d->actuator_force_step[i] = held[i];
      mju_addToScl(d->qfrc_actuator_step, moment, df, nv);
      mju_addToScl(d->qfrc_smooth_step, moment, df - dfdv*mdv, nv);
      continue;
    }
    if (dfdv==0 && k==0) {
      continue;
    }

    // moment times h*qacc and v+: one dof, or the dense row
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



// 1 if actuator i can be held at its forcerange by mj_stepForceLimit: force-limited and in K
// (kact[i] > 0: an actuator outside K, one clamped at the step's start among them, is stock's)
static int limitable(const mjModel* m, int i, const mjtNum* kact) {
  return m->actuator_forcelimited[i] && kact[i] > 0;
}



// add coef * m'm to the D-sparse mat, m the moment of actuator i (limitable: in K, so its
// moment is on one hinge or slide or on a fixed tendon along one chain)
static void addOuter(const mjModel* m, const mjData* d, mjtNum* mat, int i, mjtNum coef) {
  const mjtNum* moment = d->actuator_moment + i*m->nv;
  int dof = momentDof(m, i), id = m->actuator_trnid[2*i];
  int adr = dof >= 0 ? 0 : m->tendon_adr[id], num = dof >= 0 ? 1 : m->tendon_num[id];
  for (int a=adr; a<adr+num; a++) {
    int da = dof >= 0 ? dof : m->jnt_dofadr[m->wrap_objid[a]];
    for (int b=adr; b<adr+num; b++) {
      int db = dof >= 0 ? dof : m->jnt_dofadr[m->wrap_objid[b]];
      int end = d->D_rowadr[da] + d->D_rownnz[da];
      for (int k=d->D_rowadr[da]; k<end; k++) {
        if (d->D_colind[k]==db) {
          mat[k] += coef * moment[da] * moment[db];
          break;
        }
      }
    }
  }
}



// 1 if an actuator that is not held yet (isheld NULL: none is) can be held and its applied force
// is beyond its forcerange; with held, the bound it crossed is marked held
static int crossing(const mjModel* m, const mjData* d, const mjtNum* kact, int* isheld,
                    mjtNum* held) {
  int any = 0;
  for (int i=0; i<m->nu; i++) {
    if ((isheld && isheld[i]) || !limitable(m, i, kact)) {
      continue;
    }
    mjtNum f = d->actuator_force_step[i];
    const mjtNum* range = m->actuator_forcerange + 2*i;
    if (f < range[0] || f > range[1]) {
      if (!isheld) {
        return 1;
      }
      isheld[i] = 1;
      held[i] = f < range[0] ? range[0] : range[1];
      any = 1;
    }
  }
  return any;
}



// the step's forces within forcerange, mjENBL_IMPLICITPOS: hold at its bound each actuator whose
// applied force crosses its range, and solve the step again, until none does
void mj_stepForceLimit(const mjModel* m, mjData* d, mjtNum* qacc,
                       const mjtNum* kact, const mjtNum* kspring) {
  int nv = m->nv, nu = m->nu;
  mjtNum h = m->opt.timestep;

  // none crosses: nothing to do
  if (!kact || !crossing(m, d, kact, NULL, NULL)) {
    return;
  }

  mjMARKSTACK;
  int* isheld = (int*)mj_stackAlloc(d, nu);
  mjtNum* held = mj_stackAlloc(d, nu);
  mjtNum* mat = mj_stackAlloc(d, m->nD);
  mjtNum* rhs = mj_stackAlloc(d, nv);
  int* scratch = (int*)mj_stackAlloc(d, nv);
  for (int i=0; i<nu; i++) {
    isheld[i] = 0;
  }

  // each pass holds the actuators that cross, at most nu passes
  while (crossing(m, d, kact, isheld, held)) {
    // the step's matrix and right side (mj_implicitSkip), with K (in scratch, qLU is kept)
    mj_setMSparse(m, d, mat, d->D_rownnz, d->D_rowadr, d->D_colind);
    mju_addToScl(mat, d->qDeriv, -h, m->nD);
    mju_add(rhs, d->qfrc_smooth, d->qfrc_constraint, nv);
    mj_implicitPosTerms(m, d, mat, h*h, rhs, -h, NULL, NULL);

    // held actuators: velocity slope and term of K out, force at the bound
    for (int i=0; i<nu; i++) {
      if (!isheld[i]) {
        continue;
      }
      const mjtNum* moment = d->actuator_moment + i*nv;
      mjtNum dfdv = mjd_actuatorVel(m, d, i);
      mjtNum k = kact ? kact[i] : 0;
      addOuter(m, d, mat, i, h*dfdv - h*h*k);
      mjtNum mv = mju_dot(moment, d->qvel, nv);
      mju_addToScl(rhs, moment, h*k*mv + held[i] - d->actuator_force[i], nv);
    }

    // solve again, and the forces of this solution
    mju_factorLUSparse(mat, nv, scratch, d->D_rownnz, d->D_rowadr, d->D_colind);
    mju_solveLUSparse(qacc, mat, rhs, nv, d->D_rownnz, d->D_rowadr, d->D_colind);
    mj_stepForceImplicit(m, d, qacc, kact, kspring, isheld, held);
  }

  mjFREESTACK;
}



// the step's forces, RK4: those at the start of the step
void mj_stepForceStart(const mjModel* m, mjData* d) {
  mju_copy(d->actuator_force_step, d->actuator_force, m->nu);
  mju_copy(d->qfrc_actuator_step, d->qfrc_actuator, m->nv);
  mju_copy(d->qfrc_smooth_step, d->qfrc_smooth, m->nv);
}
