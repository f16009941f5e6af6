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

#include "engine/engine_implicit_step.h"

#include <stddef.h>

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_derivative_pos.h"
#include "engine/engine_io.h"
#include "engine/engine_macro.h"
#include "engine/engine_support.h"
#include "engine/engine_util_blas.h"
#include "engine/engine_util_solve.h"
#include "engine/engine_util_sparse.h"

// mat = M - h*qDeriv + h^2*K (D sparsity; NULL: none) and rhs -= h*K*qvel, K only with the flag
int mj_implicitMatrix(const mjModel* m, mjData* d, mjtNum* mat, mjtNum* rhs, mjtNum* kact,
                      mjtNum* kspring, int* nspring, int* weighted, int onpattern) {
  mjtNum h = m->opt.timestep;

  // M - h*qDeriv
  if (mat) {
    mj_setMSparse(m, d, mat, d->D_rownnz, d->D_rowadr, d->D_colind);
    mju_addToScl(mat, d->qDeriv, -h, m->nD);
  }

  // implicit in position: the terms of K, those on several branches left to the solve or out
  if (!mjENABLED(mjENBL_IMPLICITPOS)) {
    return 0;
  }
  return mjd_stiffnessTerms(m, d, mat, h*h, rhs, -h, kact, kspring, nspring, weighted,
                            onpattern ? mjBRANCH_OMIT : mjBRANCH_SWAP);
}



// the step's solve with the terms of K on the pattern of M only, qLU kept
void mj_implicitSolveOnPattern(const mjModel* m, mjData* d, mjtNum* qacc, mjtNum* kact,
                               mjtNum* kspring) {
  int nv = m->nv;
  mjMARKSTACK;
  mjtNum* lu = mj_stackAlloc(d, m->nD);
  mjtNum* rhs = mj_stackAlloc(d, nv);
  int* scratch = (int*)mj_stackAlloc(d, nv);

  // the step's matrix and right side, factorized in scratch, and the solve
  mju_add(rhs, d->qfrc_smooth, d->qfrc_constraint, nv);
  mj_implicitMatrix(m, d, lu, rhs, kact, kspring, NULL, NULL, 1);
  mju_factorLUSparse(lu, nv, scratch, d->D_rownnz, d->D_rowadr, d->D_colind);
  mju_solveLUSparse(qacc, lu, rhs, nv, d->D_rownnz, d->D_rowadr, d->D_colind);
  mjFREESTACK;
}
