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

#include "engine/engine_posbranch.h"

#include <stddef.h>

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_derivative.h"
#include "engine/engine_derivative_pos.h"
#include "engine/engine_io.h"
#include "engine/engine_macro.h"
#include "engine/engine_posscope.h"
#include "engine/engine_util_blas.h"
#include "engine/engine_util_errmem.h"
#include "engine/engine_util_solve.h"
#include "engine/engine_util_sparse.h"

// res += scl*k*P*vec for the part P of moment'*moment on the pattern of M (addChainTerm's pairs)
static void mulChainTerm(const mjModel* m, mjtNum* res, const mjtNum* moment, int leaf,
                         const mjtNum* vec, mjtNum scl, mjtNum k) {
  for (int a=rowFirst(m, leaf); a>=0; a=rowNext(m, leaf, a)) {
    if (moment[a]==0) {
      continue;
    }
    mjtNum km = scl * k * moment[a];
    res[a] += km * moment[a] * vec[a];
    for (int b=m->dof_parentid[a]; b>=0; b=m->dof_parentid[b]) {
      if (moment[b]) {
        res[a] += km * moment[b] * vec[b];
        res[b] += km * moment[b] * vec[a];
      }
    }
  }
}



// 1 if actuator i has a term of K (kact[i] > 0) whose moment is on several branches
static int branchTerm(const mjModel* m, const mjtNum* kact, int i) {
  return kact[i] > 0 && mjd_actuatorBranches(m, i);
}



// coefficient of m'*m in the step's matrix for a term on several branches
static mjtNum branchCoef(const mjModel* m, const mjData* d, const mjtNum* kact, int i,
                         mjtNum scl) {
  return scl * kact[i] - m->opt.timestep * mjd_actuatorVel(m, d, i);
}



void mj_branchVelocity(const mjModel* m, const mjData* d, mjtNum* res, const mjtNum* kact,
                       const mjtNum* vec, mjtNum scl) {
  int nv = m->nv;
  for (int i=0; i<m->nu; i++) {
    if (branchTerm(m, kact, i)) {
      const mjtNum* moment = d->actuator_moment + i*nv;
      mjtNum dfdv = mjd_actuatorVel(m, d, i);
      mju_addToScl(res, moment, scl * dfdv * mju_dot(moment, vec, nv), nv);
      mulChainTerm(m, res, moment, -1, vec, -scl, dfdv);
    }
  }
}



// solve A*x = b in place by Gaussian elimination with partial pivoting; 0 if singular
static int solveDense(mjtNum* A, mjtNum* b, int n) {
  for (int k=0; k<n; k++) {
    // pivot: the largest element of column k at or below row k
    int p = k;
    for (int r=k+1; r<n; r++) {
      if (mju_abs(A[r*n+k]) > mju_abs(A[p*n+k])) {
        p = r;
      }
    }
    if (!(mju_abs(A[p*n+k]) > 0) || !isfinite(A[p*n+k])) {
      return 0;
    }
    if (p!=k) {
      for (int c=0; c<n; c++) {
        mjtNum tmp = A[k*n+c];
        A[k*n+c] = A[p*n+c];
        A[p*n+c] = tmp;
      }
      mjtNum tmp = b[k];
      b[k] = b[p];
      b[p] = tmp;
    }

    // eliminate column k below the pivot
    for (int r=k+1; r<n; r++) {
      mjtNum f = A[r*n+k] / A[k*n+k];
      for (int c=k; c<n; c++) {
        A[r*n+c] -= f * A[k*n+c];
      }
      b[r] -= f * b[k];
    }
  }

  // back substitution
  for (int k=n-1; k>=0; k--) {
    for (int c=k+1; c<n; c++) {
      b[k] -= A[k*n+c] * b[c];
    }
    b[k] /= A[k*n+k];
  }
  return 1;
}



void mj_branchMul(const mjModel* m, const mjData* d, mjtNum* res, const mjtNum* vec,
                  const mjtNum* kact, mjtNum scl) {
  int nv = m->nv;
  for (int i=0; i<m->nu; i++) {
    if (branchTerm(m, kact, i)) {
      const mjtNum* moment = d->actuator_moment + i*nv;
      mju_addToScl(res, moment, branchCoef(m, d, kact, i, scl) * mju_dot(moment, vec, nv), nv);
    }
  }
}



int mj_branchSolve(const mjModel* m, mjData* d, mjtNum* res, const mjtNum* LU,
                   const mjtNum* mat, const mjtNum* vec, const mjtNum* kact, mjtNum scl) {
  int nv = m->nv, nu = m->nu, n = 0, solved = 1;
  mjMARKSTACK;
  int* row = (int*)mj_stackAlloc(d, nu);

  // the terms: (scl*kact[i] - h dfdv_i) m_i m_i' = U C U', U the moments (columns), C the
  // diagonal
  for (int i=0; i<nu; i++) {
    if (branchTerm(m, kact, i)) {
      row[n++] = i;
    }
  }

  // Woodbury: with y = A^-1 b and Z = A^-1 U, (A + U C U')^-1 b = y - Z w, where
  // (I + C U' Z) w = C U' y; A + U C U' and A are nonsingular, so I + C U' Z is too
  if (n) {
    mjtNum* Z = mj_stackAlloc(d, n*nv);
    mjtNum* G = mj_stackAlloc(d, n*n);
    mjtNum* Gf = mj_stackAlloc(d, n*n);
    mjtNum* c = mj_stackAlloc(d, n);
    mjtNum* w = mj_stackAlloc(d, n);
    mjtNum* dx = mj_stackAlloc(d, nv);
    for (int j=0; j<n; j++) {
      mju_solveLUSparse(Z + j*nv, LU, d->actuator_moment + row[j]*nv, nv,
                        d->D_rownnz, d->D_rowadr, d->D_colind);
    }
    for (int j=0; j<n; j++) {
      const mjtNum* moment = d->actuator_moment + row[j]*nv;
      c[j] = branchCoef(m, d, kact, row[j], scl);
      for (int k=0; k<n; k++) {
        G[j*n+k] = (j==k) + c[j] * mju_dot(moment, Z + k*nv, nv);
      }
    }

    // the solution res, then with mat (A unfactorized) one step of iterative refinement: the
    // update subtracts nearly equal vectors where the terms are stiff, the residual
    // b - (A + U C U') x recovers what that rounding lost
    for (int pass=0; pass < (mat ? 2 : 1); pass++) {
      mjtNum* x = pass ? dx : res;
      if (pass) {
        mju_mulMatVecSparse(dx, mat, res, nv, d->D_rownnz, d->D_rowadr, d->D_colind, NULL);
        mju_sub(dx, vec, dx, nv);
        for (int j=0; j<n; j++) {
          const mjtNum* moment = d->actuator_moment + row[j]*nv;
          mju_addToScl(dx, moment, -c[j] * mju_dot(moment, res, nv), nv);
        }
        mju_solveLUSparse(dx, LU, dx, nv, d->D_rownnz, d->D_rowadr, d->D_colind);
      }
      for (int j=0; j<n; j++) {
        w[j] = c[j] * mju_dot(d->actuator_moment + row[j]*nv, x, nv);
      }
      mju_copy(Gf, G, n*n);
      if (!solveDense(Gf, w, n)) {
        mju_warning("mj_branchSolve: singular update, terms on several branches left out");
        solved = 0;
        break;
      }
      for (int k=0; k<n; k++) {
        mju_addToScl(x, Z + k*nv, -w[k], nv);
      }
      if (pass) {
        mju_addTo(res, dx, nv);
      }
    }
  }

  mjFREESTACK;
  return solved;
}
