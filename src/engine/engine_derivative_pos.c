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

#include "engine/engine_derivative_pos.h"

#include <stddef.h>

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_derivative.h"
#include "engine/engine_io.h"
#include "engine/engine_macro.h"
#include "engine/engine_posscope.h"
#include "engine/engine_posweight.h"
#include "engine/engine_util_blas.h"
#include "engine/engine_util_errmem.h"

//------------------------------ the pattern of M -------------------------------------------------

// address of the diagonal element of row r in the D-sparse layout
static inline int diagD(const mjModel* m, const mjData* d, int r) {
  int end = r < m->nv - 1 ? m->dof_Madr[r+1] : m->nM;
  return d->D_rowadr[r] + end - m->dof_Madr[r] - 1;
}



// add val to the diagonal element of row r of the D-sparse matrix matD
static inline void addDiagD(const mjModel* m, const mjData* d, mjtNum* matD, int r, mjtNum val) {
  matD[diagD(m, d, r)] += val;
}



// add val to element (r, c) of matD (D sparsity); an element outside the pattern is an error
static void addD(const mjData* d, mjtNum* matD, int r, int c, mjtNum val) {
  int adr = sparseAdr(d->D_rownnz, d->D_rowadr, d->D_colind, r, c);
  if (adr < 0) {
    mju_error_i("mjd_implicitPos: an element of K in row %d is outside the pattern of M", r);
    return;
  }
  matD[adr] += val;
}



// add scl*(k*moment)'*moment on the chain that ends at leaf (-1: its part on M's pattern)
static void addChainTerm(const mjModel* m, const mjData* d, mjtNum* matD, const mjtNum* moment,
                         int leaf, mjtNum scl, mjtNum k) {
  for (int a=rowFirst(m, leaf); a>=0; a=rowNext(m, leaf, a)) {
    if (moment[a]==0) {
      continue;
    }
    mjtNum km = k * moment[a];
    addDiagD(m, d, matD, a, scl * (km * moment[a]));
    for (int b=m->dof_parentid[a]; b>=0; b=m->dof_parentid[b]) {
      if (moment[b]) {
        addD(d, matD, a, b, scl * (km * moment[b]));
        addD(d, matD, b, a, scl * (k * moment[b] * moment[a]));
      }
    }
  }
}



// add scl*(k*moment)'*moment of actuator i to matD, on the pattern of M
void mjd_addActuatorTerm(const mjModel* m, const mjData* d, mjtNum* matD, int i,
                         mjtNum scl, mjtNum k) {
  const mjtNum* moment = d->actuator_moment + i*m->nv;
  int leaf = d->actuator_posdof[i];

  // one dof: one diagonal element
  if (leaf >= 0) {
    addDiagD(m, d, matD, leaf, scl * (k * moment[leaf] * moment[leaf]));
    return;
  }

  // a chain, or every dof
  addChainTerm(m, d, matD, moment, rowLeaf(m, i), scl, k);
}



//------------------------------ terms of K -------------------------------------------------------

// add the term of stiffness k of actuator i whose moment is a row; 1 if on several branches
static int actuatorRowTerm(const mjModel* m, const mjData* d, int i, mjtNum k, mjtNum* matD,
                           mjtNum sclK, mjtNum* vec, mjtNum sclKv, mjtNum* kact,
                           mjtBranchMode branch) {
  const mjtNum *moment = d->actuator_moment + i*m->nv, *qvel = d->qvel;
  int leaf, chain = mjd_actuatorLeaf(m, i, &leaf);

  // on several branches: walked over every dof (leaf -1, as a row on no dof, whose moment is
  // zero), or left out: mjBRANCH_OMIT, or a velocity term too large to take back out of matD
  // (mjd_actuatorVelResolvable; kact stays 0, and mjd_actuatorPosScope reports it NONRESTORING)
  if (!chain) {
    if (branch==mjBRANCH_OMIT || !mjd_actuatorVelResolvable(m, d, i)) {
      return 0;
    }
    leaf = -1;
  }
  if (kact) {
    kact[i] = k;
  }

  // its velocity, then the shift on its dofs
  if (vec) {
    mjtNum mv = 0;
    for (int a=rowFirst(m, leaf); a>=0; a=rowNext(m, leaf, a)) {
      mv += moment[a] * qvel[a];
    }
    for (int a=rowFirst(m, leaf); a>=0; a=rowNext(m, leaf, a)) {
      vec[a] += sclKv * ((k * moment[a]) * mv);
    }
  }

  // the dense block on one chain's dofs, within the D pattern; on several branches, outside
  // it: applied in the solve with the row's whole velocity term (mj_branchSolve), whose
  // part on the pattern (from qDeriv: M - h qDeriv holds -h dfdv P) is taken out of matD
  if (!chain) {
    if (matD && branch==mjBRANCH_SWAP) {
      addChainTerm(m, d, matD, moment, -1, m->opt.timestep, mjd_actuatorVel(m, d, i));
    }
    return 1;
  }
  if (matD) {
    addChainTerm(m, d, matD, moment, leaf, sclK, k);
  }
  return 0;
}



// add the term of stiffness k of actuator i on one dof, at its diagonal address diag
static inline void addDofTerm(const mjModel* m, const mjData* d, mjtNum* matD, int diag,
                              mjtNum sclK, mjtNum* vec, mjtNum sclKv, mjtNum* kact, int i,
                              int dof, mjtNum k) {
  if (kact) {
    kact[i] = k;
  }
  mjtNum gear = d->actuator_moment[i*m->nv + dof];
  mjtNum km = k * gear;
  if (matD) {
    matD[diag] += sclK * (km * gear);
  }
  if (vec) {
    vec[dof] += sclKv * (km * (gear * d->qvel[dof]));
  }
}



// add the actuators' terms of K; return the number on several branches
static int actuatorTerms(const mjModel* m, mjData* d, ctrlState* controls, mjtNum* matD,
                         mjtNum sclK, mjtNum* vec, mjtNum sclKv, mjtNum* kact,
                         mjtBranchMode branch) {
  int nbranch = 0;
  if (mjDISABLED(mjDSBL_ACTUATION)) {
    if (kact) {
      mju_zero(kact, m->nu);
    }
    return 0;
  }
  for (int i=0; i<m->nu; i++) {
    int dof = d->actuator_posdof[i], diag = d->actuator_posdiag[i];
    mjtNum slope;

    // a servo of fixed gain and affine bias on one dof (actuator_posdiag, found by mj_resetData
    // with its structure's scope): its bias's slope and its force's scope, its dof's diagonal
    // element at that address
    if (diag >= 0) {
      if (servoRestoring(m, d, i, &slope)) {
        addDofTerm(m, d, matD, diag, sclK, vec, sclKv, kact, i, dof, -slope);
      } else if (kact) {
        kact[i] = 0;
      }
      continue;
    }

    // any other: its slope and scope (actuatorRestoring)
    if (!actuatorRestoring(m, d, i, &slope, controls)) {
      if (kact) {
        kact[i] = 0;
      }
      continue;
    }

    // a moment row (kact 0 if it is left out), or one dof: one diagonal element
    if (dof < 0) {
      if (kact) {
        kact[i] = 0;
      }
      nbranch += actuatorRowTerm(m, d, i, -slope, matD, sclK, vec, sclKv, kact, branch);
    } else {
      addDofTerm(m, d, matD, matD ? diagD(m, d, dof) : -1, sclK, vec, sclKv, kact, i, dof,
                 -slope);
    }
  }
  return nbranch;
}



// add the joint springs' terms of K, diagonal; return the number of springs
static int springTerms(const mjModel* m, const mjData* d,
                       mjtNum* matD, mjtNum sclK, mjtNum* vec, mjtNum sclKv,
                       mjtNum* kspring) {
  int nspring = 0;
  if (mjDISABLED(mjDSBL_PASSIVE)) {
    return 0;
  }
  for (int j=0; j<m->njnt; j++) {
    // most joints have no spring
    if (m->jnt_stiffness[j]==0 || springScope(m, j)!=mjPOSSCOPE_RESTORING) {
      continue;
    }
    mjtNum stiffness = m->jnt_stiffness[j];
    if (kspring && !nspring) {
      mju_zero(kspring, m->nv);
    }
    nspring++;
    for (int dof=m->jnt_dofadr[j]; dof<m->jnt_dofadr[j]+jointDofs(m, j); dof++) {
      if (kspring) {
        kspring[dof] = stiffness;
      }
      if (matD) {
        addDiagD(m, d, matD, dof, sclK * stiffness);
      }
      if (vec) {
        vec[dof] += sclKv * (stiffness * d->qvel[dof]);
      }
    }
  }
  return nspring;
}



//------------------------------ weighted terms of K ----------------------------------------------

// add the weighted terms on one dof alone: its servos and its spring, whose stiffness in kspring
// (if given) is weighted
static void weightedDofTerms(const mjModel* m, const mjData* d, const mjtNum* kdof,
                             const mjtNum* weight, mjtNum* matD, mjtNum sclK, mjtNum* vec,
                             mjtNum sclKv, mjtNum* kspring) {
  for (int dof=0; dof<m->nv; dof++) {
    if (!(kdof[dof] > 0)) {
      continue;
    }
    if (kspring) {
      kspring[dof] *= weight[dof];
    }
    mjtNum k = weight[dof] * kdof[dof];
    if (matD) {
      addDiagD(m, d, matD, dof, sclK * k);
    }
    if (vec) {
      vec[dof] += sclKv * (k * d->qvel[dof]);
    }
  }
}



// add the weighted terms of the servos whose moment is a row; the stiffness in kact (if given) of
// each servo's weighted term on one dof (wdof), 0 for the others; return the number on several
// branches
static int weightedServoTerms(const mjModel* m, mjData* d, const mjtNum* slope,
                              const mjtNum* wdof, const mjtNum* wten, mjtNum* matD, mjtNum sclK,
                              mjtNum* vec, mjtNum sclKv, mjtNum* kact, mjtBranchMode branch) {
  int nbranch = 0;
  for (int i=0; i<m->nu; i++) {
    int dof = d->actuator_posdof[i];
    if (kact) {
      kact[i] = slope[i] < 0 && dof >= 0 ? -slope[i] * wdof[dof] : 0;
    }
    if (slope[i] < 0 && dof < 0) {
      nbranch += actuatorRowTerm(m, d, i, -(slope[i] * wten[i]), matD, sclK, vec, sclKv, kact,
                                 branch);
    }
  }
  return nbranch;
}



//------------------------------ K ----------------------------------------------------------------

int mjd_stiffnessTerms(const mjModel* m, mjData* d, mjtNum* matD, mjtNum sclK,
                       mjtNum* vec, mjtNum sclKv, mjtNum* kact, mjtNum* kspring,
                       int* nspring, int* weighted, mjtBranchMode branch) {
  ctrlState controls = CTRL_UNCHECKED;  // their check (gainInput)
  int nbranch = 0;

  // unweighted: by force class (actuatorTerms sets kact of every actuator)
  if (!mjENABLED(mjENBL_POSWEIGHT)) {
    nbranch = actuatorTerms(m, d, &controls, matD, sclK, vec, sclKv, kact, branch);
    int n = springTerms(m, d, matD, sclK, vec, sclKv, kspring);
    if (nspring) {
      *nspring = n;
    }
    if (weighted) {
      *weighted = 0;
    }
    return nbranch;
  }

  // weighted: the slopes found once, the terms on each dof summed, every term's weight (the
  // table's, cached per dof in d->dof_posweightcache, then the stability gate), each term added
  int nv = m->nv, nu = m->nu, n;
  mjMARKSTACK;
  mjtNum* slope = mj_stackAlloc(d, 2*nu + 3*nv);
  mjtNum* wten = slope + nu;
  mjtNum* kdof = wten + nu;    // kdof, cdof, wdof (mjd_posWeightTerms)
  int below = mjd_posWeightTerms(m, d, &controls, slope, kdof, kspring, &n,
                                 d->dof_posweightcache, wten);
  weightedDofTerms(m, d, kdof, kdof + 2*nv, matD, sclK, vec, sclKv, n ? kspring : NULL);
  nbranch = weightedServoTerms(m, d, slope, kdof + 2*nv, wten, matD, sclK, vec, sclKv, kact,
                               branch);
  if (nspring) {
    *nspring = n;
  }
  if (weighted) {
    *weighted = below;
  }
  mjFREESTACK;
  return nbranch;
}



// add sclK*K to matD (D sparsity) and sclKv*K*qvel to vec, K = -d(qfrc_actuator+qfrc_passive)/dq
void mjd_implicitPos(const mjModel* m, mjData* d,
                     mjtNum* matD, mjtNum sclK, mjtNum* vec, mjtNum sclKv) {
  mjd_stiffnessTerms(m, d, matD, sclK, vec, sclKv, NULL, NULL, NULL, NULL, mjBRANCH_SOLVE);
}
