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
#include "engine/engine_implicit_step.h"
#include "engine/engine_io.h"
#include "engine/engine_macro.h"
#include "engine/engine_posbranch.h"
#include "engine/engine_posscope.h"
#include "engine/engine_support.h"
#include "engine/engine_util_blas.h"
#include "engine/engine_util_solve.h"

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



// return 1 if actuator i is in K and its applied force is beyond its forcerange
static int crosses(const mjModel* m, const mjData* d, const mjtNum* kact, int i) {
  mjtNum f = d->actuator_force_step[i];
  const mjtNum* range = m->actuator_forcerange + 2*i;
  return m->actuator_forcelimited[i] && kact[i] > 0 && (f < range[0] || f > range[1]);
}



// moment times vec: on its one dof, or the dense row
static inline mjtNum momentDot(const mjtNum* moment, int dof, const mjtNum* vec, int nv) {
  return dof >= 0 ? moment[dof] * vec[dof] : mju_dot(moment, vec, nv);
}



// add scl*moment to vec: on its one dof, or the dense row
static inline void addMoment(mjtNum* vec, const mjtNum* moment, int dof, mjtNum scl, int nv) {
  if (dof >= 0) {
    vec[dof] += moment[dof] * scl;
  } else {
    mju_addToScl(vec, moment, scl, nv);
  }
}



// velocity slope of actuator i's force: a servo's (servoVel), or mjd_actuatorVel
static inline mjtNum velSlope(const mjModel* m, const mjData* d, int i) {
  return d->actuator_posdiag[i] >= 0 ? servoVel(m, i) : mjd_actuatorVel(m, d, i);
}



// the step's forces, implicit: linearised in velocity and, for the terms of K, in position
int mj_stepForceImplicit(const mjModel* m, mjData* d, const mjtNum* qacc,
                         const mjtNum* kact, const mjtNum* kspring, const int* isheld,
                         const mjtNum* held) {
  int nv = m->nv, nu = m->nu;
  mjtNum h = m->opt.timestep;
  const mjtNum *qvel = d->qvel, *velocity = d->actuator_velocity, *moments = d->actuator_moment;
  const mjtNum *force = d->actuator_force;
  const mjtByte* limited = m->actuator_forcelimited;
  const int *posdof = d->actuator_posdof, *posdiag = d->actuator_posdiag;
  mjtNum *fstep = d->actuator_force_step, *qstep = d->qfrc_actuator_step;
  mjtNum *sstep = d->qfrc_smooth_step;
  int cross = 0;

  // smooth forces, velocity terms: qfrc_smooth + h*qDeriv*qacc; a dense D (a chain) as one
  // matrix-vector product, else a row whose columns are consecutive (a dof's descendants after
  // it) as one dot product
  if ((size_t)nv*nv == m->nD) {
    mju_mulMatVec(sstep, d->qDeriv, qacc, nv, nv);
  } else {
    for (int r=0; r<nv; r++) {
      int adr = d->D_rowadr[r], nnz = d->D_rownnz[r];
      const int* col = d->D_colind + adr;
      mjtNum dq = 0;
      if (col[nnz-1] - col[0] == nnz - 1) {
        dq = mju_dot(d->qDeriv + adr, qacc + col[0], nnz);
      } else {
        for (int a=0; a<nnz; a++) {
          dq += d->qDeriv[adr+a] * qacc[col[a]];
        }
      }
      sstep[r] = dq;
    }
  }
  mju_addScl(sstep, d->qfrc_smooth, sstep, h, nv);

  // springs in K: -h*kspring*v+, v+ = qvel + h*qacc
  for (int i=0; i<nv && kspring; i++) {
    if (kspring[i]) {
      sstep[i] -= h * kspring[i] * (qvel[i] + h*qacc[i]);
    }
  }

  // actuators: velocity slope over the change of velocity (qDeriv has it in the smooth forces)
  mju_copy(qstep, d->qfrc_actuator, nv);
  if (mjDISABLED(mjDSBL_ACTUATION)) {
    mju_copy(fstep, force, nu);
    return 0;
  }
  if (!kact) {
    mju_copy(fstep, force, nu);
    for (int i=0; i<nu; i++) {
      mjtNum dfdv = velSlope(m, d, i);
      if (dfdv) {
        const mjtNum* moment = moments + i*nv;
        int dof = posdof[i];
        mjtNum df = dfdv * (h * momentDot(moment, dof, qacc, nv));
        fstep[i] += df;
        addMoment(qstep, moment, dof, df, nv);
      }
    }
    return 0;
  }

  // with K: the stiffness over h*v+ too, or the force held at its bound
  for (int i=0; i<nu; i++) {
    mjtNum k = kact[i];
    const mjtNum* moment = moments + i*nv;

    // held at its bound (mj_stepForceLimit): its force, without its velocity term in qDeriv
    if (isheld && isheld[i]) {
      mjtNum dfdv = velSlope(m, d, i);
      mjtNum df = held[i] - force[i];
      mjtNum mdv = h * mju_dot(moment, qacc, nv);
      fstep[i] = held[i];
      mju_addToScl(qstep, moment, df, nv);
      mju_addToScl(sstep, moment, df - dfdv*mdv, nv);
      continue;
    }

    // velocity slope: a servo's, any other's skipped without one and without K
    mjtNum dfdv;
    if (posdiag[i] >= 0) {
      dfdv = servoVel(m, i);
    } else {
      dfdv = mjd_actuatorVel(m, d, i);
      if (dfdv==0 && k==0) {
        fstep[i] = force[i];
        continue;
      }
    }

    // moment times h*qacc; moment times v+ from actuator_velocity
    int dof = posdof[i];
    mjtNum mdv = h * momentDot(moment, dof, qacc, nv);
    mjtNum df = dfdv*mdv;

    // a term of K: its stiffness over h*v+, also in the smooth forces (on one dof without the
    // test: 0 for none)
    if (dof >= 0 || k) {
      mjtNum dfk = -k * h * (velocity[i] + mdv);
      df += dfk;
      addMoment(sstep, moment, dof, dfk, nv);
    }
    fstep[i] = force[i] + df;
    if (limited[i] && crosses(m, d, kact, i)) {
      cross = 1;
    }
    addMoment(qstep, moment, dof, df, nv);
  }
  return cross;
}



// hold each actuator that crosses its forcerange; return the number held
static int holdCrossing(const mjModel* m, const mjData* d, const mjtNum* kact, int* isheld,
                        mjtNum* held) {
  int nheld = 0;
  for (int i=0; i<m->nu; i++) {
    if (!isheld[i] && crosses(m, d, kact, i) && mjd_actuatorVelResolvable(m, d, i)) {
      const mjtNum* range = m->actuator_forcerange + 2*i;
      isheld[i] = 1;
      held[i] = d->actuator_force_step[i] < range[0] ? range[0] : range[1];
      nheld++;
    }
  }
  return nheld;
}



// hold at its bound each actuator that crosses its forcerange, solve again
void mj_stepForceLimit(const mjModel* m, mjData* d, mjtNum* qacc,
                       mjtNum* kact, const mjtNum* kspring, int onpattern) {
  int nv = m->nv, nu = m->nu;
  mjtNum h = m->opt.timestep;
  mjMARKSTACK;
  int* isheld = (int*)mj_stackAlloc(d, nu);
  mjtNum* held = mj_stackAlloc(d, nu);
  mjtNum* kfree = mj_stackAlloc(d, nu);     // kact of the actuators not held
  mjtNum* mat = mj_stackAlloc(d, m->nD);
  mjtNum* unfactored = mj_stackAlloc(d, m->nD);
  mjtNum* rhs = mj_stackAlloc(d, nv);
  int* scratch = (int*)mj_stackAlloc(d, nv);
  for (int i=0; i<nu; i++) {
    isheld[i] = 0;
  }

  // each pass holds the actuators that cross, at most nu passes (and nu more without the terms
  // on several branches, if their update is singular); none left to hold ends it
  for (;;) {
    if (!holdCrossing(m, d, kact, isheld, held)) {
      break;
    }

    // the step's matrix and right side, with K (in scratch, qLU is kept)
    mju_add(rhs, d->qfrc_smooth, d->qfrc_constraint, nv);
    int nbranch = mj_implicitMatrix(m, d, mat, rhs, NULL, NULL, NULL, NULL, onpattern);

    // held actuators: velocity slope and term of K out (a term on several branches, both in the
    // solve's update, out with its kfree), force at the bound
    for (int i=0; i<nu; i++) {
      kfree[i] = isheld[i] ? 0 : kact[i];
      if (isheld[i]) {
        const mjtNum* moment = d->actuator_moment + i*nv;
        if (!mjd_actuatorBranches(m, i)) {
          mjd_addActuatorTerm(m, d, mat, i, 1, h*mjd_actuatorVel(m, d, i) - h*h*kact[i]);
        }
        mju_addToScl(rhs, moment, h*kact[i]*d->actuator_velocity[i] + held[i] -
                     d->actuator_force[i], nv);
      }
    }

    // solve again, and the forces of this solution
    if (nbranch) {
      mju_copy(unfactored, mat, m->nD);
    }
    mju_factorLUSparse(mat, nv, scratch, d->D_rownnz, d->D_rowadr, d->D_colind);
    mju_solveLUSparse(qacc, mat, rhs, nv, d->D_rownnz, d->D_rowadr, d->D_colind);

    // a singular update: the step again without the terms on several branches (kact 0 for
    // them), as mj_implicitSkip leaves them, and the hold started again from its forces
    if (nbranch && !mj_branchSolve(m, d, qacc, mat, unfactored, rhs, kfree, h*h)) {
      mj_implicitSolveOnPattern(m, d, qacc, kact, NULL);
      for (int i=0; i<nu; i++) {
        isheld[i] = 0;
      }
      onpattern = 1;
    }
    if (!mj_stepForceImplicit(m, d, qacc, kact, kspring, isheld, held)) {
      break;
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
