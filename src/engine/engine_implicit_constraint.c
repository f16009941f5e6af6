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

#include "engine/engine_implicit_constraint.h"

#include <string.h>

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_core_constraint.h"
#include "engine/engine_core_smooth.h"
#include "engine/engine_forward.h"
#include "engine/engine_io.h"
#include "engine/engine_macro.h"
#include "engine/engine_support.h"
#include "engine/engine_util_blas.h"
#include "engine/engine_util_solve.h"

// stiff[i]: whether K acts on dof i's kinematic tree (kact: K's actuator terms, kspring: its
//  spring terms or NULL)
static void stiffTrees(const mjModel* m, mjData* d, const mjtNum* kact, const mjtNum* kspring,
                       int* stiff) {
  int nv = m->nv;
  mjMARKSTACK;
  int* root = (int*)mj_stackAlloc(d, m->nbody);
  memset(root, 0, m->nbody*sizeof(int));
  for (int i=0; i<m->nu; i++) {
    int type = m->actuator_trntype[i], id = m->actuator_trnid[2*i];
    if (!kact[i]) {
      continue;
    } else if (type == mjTRN_JOINT || type == mjTRN_JOINTINPARENT) {
      root[m->body_rootid[m->jnt_bodyid[id]]] = 1;
    } else {
      for (int j=0; j<nv; j++) {
        if (d->actuator_moment[i*nv + j]) {
          root[m->body_rootid[m->dof_bodyid[j]]] = 1;
        }
      }
    }
  }
  for (int j=0; j<nv && kspring; j++) {
    if (kspring[j]) {
      root[m->body_rootid[m->dof_bodyid[j]]] = 1;
    }
  }
  for (int j=0; j<nv; j++) {
    stiff[j] = root[m->body_rootid[m->dof_bodyid[j]]];
  }
  mjFREESTACK;
}



// dst = (mat + mat')/2 on the pattern of qM, mat with D sparsity; qM's rows where stiff is 0
//  (stiff NULL: none)
static void symmetricOnM(const mjModel* m, mjData* d, mjtNum* dst, const mjtNum* mat,
                         const int* stiff) {
  int nv = m->nv;
  const int* rowadr = d->D_rowadr;
  mjMARKSTACK;
  int* remaining = (int*)mj_stackAlloc(d, nv);

  // the traversal of mj_setMSparse: (i, j) and (j, i) at their places in row i and row j
  memcpy(remaining, d->D_rownnz, nv*sizeof(int));
  for (int i=nv-1; i>=0; i--) {
    int adr = m->dof_Madr[i], step = !stiff || stiff[i];
    remaining[i]--;
    dst[adr] = step ? mat[rowadr[i] + remaining[i]] : d->qM[adr];
    adr++;
    int j = i;
    while ((j = m->dof_parentid[j]) >= 0) {
      remaining[i]--;
      remaining[j]--;
      dst[adr] = step ? 0.5*(mat[rowadr[i] + remaining[i]] + mat[rowadr[j] + remaining[j]]) :
                        d->qM[adr];
      adr++;
    }
  }
  mjFREESTACK;
}



// the constraints (d->nefc > 0) solved in the step's metric on the kinematic trees K acts on and
//  in M on the others; qfrc: the step's right side, with mj_forward's constraint force if
//  solved, with the step's on return; 0: the metric not spd, nothing changed
int mj_implicitConstraint(const mjModel* m, mjData* d, const mjtNum* mat, mjtNum* qfrc,
                          const mjtNum* kact, const mjtNum* kspring, int solved) {
  int nv = m->nv, nM = m->nM;
  mjMARKSTACK;
  mjtNum* metric = mj_stackAlloc(d, nM);
  mjtNum* ld = mj_stackAlloc(d, nM);
  mjtNum* diaginv = mj_stackAlloc(d, nv);
  mjtNum* diagsqrtinv = mj_stackAlloc(d, nv);
  mjtNum* acc0 = mj_stackAlloc(d, nv);
  mjtNum* rhs = mj_stackAlloc(d, nv);

  // the metric: the step's matrix made symmetric on K's trees (all of them if the first and the
  //  last dof share a root, the dofs being in tree order), M on the others, factorized; not spd:
  //  constraints left in M
  int* stiff = NULL;
  if (m->body_rootid[m->dof_bodyid[0]] != m->body_rootid[m->dof_bodyid[nv-1]]) {
    stiff = (int*)mj_stackAlloc(d, nv);
    stiffTrees(m, d, kact, kspring, stiff);
  }
  symmetricOnM(m, d, metric, mat, stiff);
  mjWarningStat warning = d->warning[mjWARN_INERTIA];
  d->warning[mjWARN_INERTIA].number = 1;  // counted, not printed
  mj_factorI(m, d, metric, ld, diaginv, diagsqrtinv);
  int spd = d->warning[mjWARN_INERTIA].number == 1;
  d->warning[mjWARN_INERTIA] = warning;
  if (!spd) {
    mjFREESTACK;
    return 0;
  }

  // the step's right side without constraint force
  if (solved) {
    mju_sub(rhs, qfrc, d->qfrc_constraint, nv);
  } else {
    mju_copy(rhs, qfrc, nv);
  }

  // the solver of mj_fwdConstraint with the metric in place of M, unconstrained: metric^-1 * rhs
  mjtNum* qM = d->qM;
  mjtNum* qLD = d->qLD;
  mjtNum* qLDiagInv = d->qLDiagInv;
  mjtNum* qLDiagSqrtInv = d->qLDiagSqrtInv;
  mjtNum* qacc_smooth = d->qacc_smooth;
  mjtNum* qfrc_smooth = d->qfrc_smooth;
  d->qM = metric;
  d->qLD = ld;
  d->qLDiagInv = diaginv;
  d->qLDiagSqrtInv = diagsqrtinv;
  mj_solveM(m, d, acc0, rhs, 1);
  d->qacc_smooth = acc0;
  d->qfrc_smooth = rhs;
  if (mj_isDual(m)) {
    mj_projectConstraint(m, d);
  }
  mj_fwdConstraint(m, d);
  d->qM = qM;
  d->qLD = qLD;
  d->qLDiagInv = qLDiagInv;
  d->qLDiagSqrtInv = qLDiagSqrtInv;
  d->qacc_smooth = qacc_smooth;
  d->qfrc_smooth = qfrc_smooth;

  // qacc as mj_forward's: the smooth acceleration and M^-1 times the constraint force
  mj_solveM(m, d, d->qacc, d->qfrc_constraint, 1);
  mju_addTo(d->qacc, d->qacc_smooth, nv);

  // the step's right side with the step's constraint force
  mju_add(qfrc, rhs, d->qfrc_constraint, nv);
  mjFREESTACK;
  return 1;
}
