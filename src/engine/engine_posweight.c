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

#include "engine/engine_posweight.h"

#include <math.h>
#include <stddef.h>

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_core_constraint.h"
#include "engine/engine_core_smooth.h"
#include "engine/engine_derivative.h"
#include "engine/engine_io.h"
#include "engine/engine_macro.h"
#include "engine/engine_posscope.h"
#include "engine/engine_support.h"
#include "engine/engine_util_blas.h"
#include "engine/engine_util_misc.h"
#include "engine/engine_util_solve.h"

//------------------------------ the table --------------------------------------------------------

// weight theta of a term of K under mjENBL_POSWEIGHT: see doc/engine.md; generated, not edited
#define mjPOSW_NS 11         // columns: s = 0, 0.1, ..., 1 (clamped above)
#define mjPOSW_DS 0.1
#define mjPOSW_NZETA 11      // rows: zeta below
#define mjPOSW_MIN 1e-4      // weight below the cap
static const mjtNum posw_zeta[mjPOSW_NZETA] = {0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3};
static const mjtNum posw_theta[mjPOSW_NZETA][mjPOSW_NS] = {
    // zeta = 0
    {0.3100, 0.3200, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},
    // zeta = 0.05
    {0.2700, 0.8200, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},
    // zeta = 0.1
    {0.6300, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},
    // zeta = 0.2
    {0.9075, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},
    // zeta = 0.3
    {0.9750, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},
    // zeta = 0.5
    {1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},
    // zeta = 0.7
    {1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},
    // zeta = 1
    {1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},
    // zeta = 1.5
    {1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},
    // zeta = 2
    {1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},
    // zeta = 3
    {1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},
};



// weight of the table at (h w_n)^2 = hw2 and zeta
static mjtNum thetaTable(mjtNum hw2, mjtNum zeta) {
  zeta = mjMIN(zeta, posw_zeta[mjPOSW_NZETA - 1]);

  // below stock's cap on the term alone
  mjtNum cap = 2 * (zeta + mju_sqrt(zeta*zeta + 1));
  if (!(hw2 > cap*cap)) {
    return mjPOSW_MIN;
  }

  // column: s = log10(h w_n / cap) = 0.5 log10(e) log(hw2 / cap^2) on the table's grid
  mjtNum u = mjMIN(0.21714724095162590 * mju_log(hw2 / (cap*cap)) / mjPOSW_DS, mjPOSW_NS - 1);
  int i = mjMIN((int)u, mjPOSW_NS - 2);
  mjtNum fu = u - i;

  // row: zeta, searched from the top (stiff springs are often overdamped)
  int j = mjPOSW_NZETA - 2;
  while (j > 0 && zeta < posw_zeta[j]) {
    j--;
  }
  mjtNum fz = (zeta - posw_zeta[j]) / (posw_zeta[j+1] - posw_zeta[j]);

  const mjtNum* r0 = posw_theta[j];
  const mjtNum* r1 = posw_theta[j+1];
  return (1 - fz) * ((1 - fu) * r0[i] + fu * r0[i+1]) + fz * ((1 - fu) * r1[i] + fu * r1[i+1]);
}



void mjd_posWeightTable(int* nzeta, int* ns, mjtNum* ds, mjtNum* below,
                        const mjtNum** zeta, const mjtNum** theta) {
  *nzeta = mjPOSW_NZETA;
  *ns = mjPOSW_NS;
  *ds = mjPOSW_DS;
  *below = mjPOSW_MIN;
  *zeta = posw_zeta;
  *theta = posw_theta[0];
}



// table weight of a term of stiffness k, damping c and inverse inertia invweight
static mjtNum tableWeight(mjtNum h, mjtNum k, mjtNum c, mjtNum invweight) {
  mjtNum hw2 = h * h * k * invweight;  // (h w_n)^2
  mjtNum zeta = 0.5 * c * mju_sqrt(invweight / k);

  // not finite: backward Euler
  if (!isfinite(hw2) || !isfinite(zeta) || !(invweight > 0)) {
    return 1;
  }
  return thetaTable(hw2, zeta);
}



//------------------------------ the terms and their weights --------------------------------------

// return 1 if dof is a rotation of a ball or free joint
static int isRotationDof(const mjModel* m, int dof) {
  int j = m->dof_jntid[dof];
  return m->jnt_type[j]==mjJNT_BALL ||
         (m->jnt_type[j]==mjJNT_FREE && dof >= m->jnt_dofadr[j] + 3);
}



// weight of the terms of stiffness k and damping c on dof: the table's, backward Euler for a
// ball or free joint's rotation (its stiffness away from rest, which the gate's model leaves out,
// made ropes of them diverge at lower weights where backward Euler did not); entry: the dof's
// cache, (h w_n)^2, zeta and the weight of its last lookup
static inline mjtNum dofWeight(const mjModel* m, int dof, mjtNum h, mjtNum k, mjtNum c,
                               mjtNum* entry) {
  mjtNum invweight = m->dof_invweight0[dof];
  mjtNum hw2 = h * h * k * invweight;
  mjtNum zeta = 0.5 * c * mju_sqrt(invweight / k);

  // the same term as the last lookup (never a zeroed cache: hw2 > 0)
  if (hw2 > 0 && entry[0]==hw2 && entry[1]==zeta) {
    return entry[2];
  }
  entry[0] = hw2;
  entry[1] = zeta;
  entry[2] = isRotationDof(m, dof) ? 1 : tableWeight(h, k, c, invweight);
  return entry[2];
}



// upper bound of m'*M^-1*m from the armature
static mjtNum armatureBound(const mjModel* m, const mjtNum* moment, int leaf) {
  mjtNum bound = 0;
  for (int dof=moment ? rowFirst(m, leaf) : leaf; dof>=0;
       dof=moment ? rowNext(m, leaf, dof) : -1) {
    mjtNum mom = moment ? moment[dof] : 1;
    if (mom==0) {
      continue;
    }
    if (!(m->dof_armature[dof] > 0)) {
      return mjMAXVAL;
    }
    bound += mom * mom / m->dof_armature[dof];
  }
  return bound;
}



// inverse inertia of the moment row of actuator i
static mjtNum rowInvweight(const mjModel* m, mjData* d, int i, mjtNum* x) {
  if (m->actuator_trntype[i]==mjTRN_TENDON) {
    mjtNum gear = m->actuator_gear[6*i];
    return gear * gear * m->tendon_invweight0[m->actuator_trnid[2*i]];
  }
  const mjtNum* moment = d->actuator_moment + i*m->nv;
  mj_solveM(m, d, x, moment, 1);
  return mju_dot(moment, x, m->nv);
}



// 1 if the moment row of actuator i is a ball joint's (isRotationDof)
static int rotationRow(const mjModel* m, int i) {
  int trn = m->actuator_trntype[i];
  return (trn==mjTRN_JOINT || trn==mjTRN_JOINTINPARENT) &&
         isRotationDof(m, m->jnt_dofadr[m->actuator_trnid[2*i]]);
}



// restoring slope of each actuator (0: none), stiffness and damping of the terms on each dof, the
// springs' stiffness in kspring (if given; zeroed at the first spring) and their number in nspring;
// return the number of servos with a moment row
static int dofStiffness(const mjModel* m, const mjData* d, ctrlState* controls, mjtNum* slope,
                        mjtNum* kdof, mjtNum* kspring, int* nspring) {
  int nv = m->nv, nrow = 0, n = 0;
  mjtNum* cdof = kdof + nv;
  mju_zero(kdof, nv);
  if (mjDISABLED(mjDSBL_PASSIVE)) {
    mju_zero(cdof, nv);
  } else {
    mju_copy(cdof, m->dof_damping, nv);
  }

  // servos on one dof, those on a chain counted; none where actuation is disabled
  int nu = m->nu;
  if (mjDISABLED(mjDSBL_ACTUATION)) {
    mju_zero(slope, nu);
    nu = 0;
  }
  for (int i=0; i<nu; i++) {
    int dof = d->actuator_posdof[i];
    mjtNum c;

    // a servo of fixed gain and affine bias on one dof (actuator_posdiag): its bias's slopes
    if (d->actuator_posdiag[i] >= 0) {
      if (!servoRestoring(m, d, i, slope + i)) {
        slope[i] = 0;
        continue;
      }
      c = -servoVel(m, i);
    }

    // any other
    else {
      if (!actuatorRestoring(m, d, i, slope + i, controls)) {
        slope[i] = 0;
        continue;
      }
      if (dof < 0) {
        nrow++;
        continue;
      }
      c = mjd_actuatorDamping(m, d, i, controls);
    }

    mjtNum gear = d->actuator_moment[i*nv + dof];
    kdof[dof] -= slope[i] * gear * gear;
    cdof[dof] += c * gear * gear;
  }

  // joint springs
  if (!mjDISABLED(mjDSBL_PASSIVE)) {
    for (int j=0; j<m->njnt; j++) {
      if (m->jnt_stiffness[j] && springScope(m, j)==mjPOSSCOPE_RESTORING) {
        if (kspring && !n) {
          mju_zero(kspring, nv);
        }
        n++;
        for (int dof=m->jnt_dofadr[j]; dof<m->jnt_dofadr[j]+jointDofs(m, j); dof++) {
          kdof[dof] += m->jnt_stiffness[j];
          if (kspring) {
            kspring[dof] = m->jnt_stiffness[j];
          }
        }
      }
    }
  }
  *nspring = n;
  return nrow;
}



// return 1 if S, with the sparsity of qM, is positive definite
static int posDefinite(const mjModel* m, mjtNum* S) {
  const int* Madr = m->dof_Madr;
  const int* parent = m->dof_parentid;
  for (int k=m->nv-1; k>=0; k--) {
    mjtNum pivot = S[Madr[k]];
    if (!(pivot > 0)) {
      return 0;
    }

    // S(i,j) -= S(k,i) S(k,j) / S(k,k) for i, j ancestors of k (j of i); S(k,i) /= S(k,k)
    int adr_ki = Madr[k] + 1;
    for (int i=parent[k]; i>=0; i=parent[i], adr_ki++) {
      mjtNum tmp = S[adr_ki] / pivot;
      mjtNum* row = S + Madr[i];
      const mjtNum* src = S + adr_ki;
      for (int j=i, c=0; j>=0; j=parent[j], c++) {
        row[c] -= tmp * src[c];
      }
      S[adr_ki] = tmp;
    }
  }
  return 1;
}



// risk h^2*k*(1 - 2*theta) - 2*h*c of a term
static mjtNum termRisk(mjtNum h, mjtNum k, mjtNum c, mjtNum theta) {
  return h * h * k * (1 - 2 * theta) - 2 * h * c;
}



// stability gate of the weighted step at the current configuration
static int posWeightsGate(const mjModel* m, const mjData* d, mjtNum margin, const mjtNum* rdof,
                          const mjtNum* rten, mjtNum* scratch) {
  int nv = m->nv;

  // the armature bound of sum r_j m_j' M^-1 m_j
  mjtNum bound = 0;
  for (int dof=0; dof<nv && bound < 4; dof++) {
    if (rdof[dof] > 0) {
      bound += rdof[dof] * armatureBound(m, NULL, dof);
    }
  }
  for (int i=0; i<m->nu && bound < 4; i++) {
    if (rten[i] > 0) {
      bound += rten[i] * armatureBound(m, d->actuator_moment + i*nv, rowLeaf(m, i));
    }
  }
  if (bound < 4 * (1 - margin)) {
    return 1;
  }

  // S = 4 (1 - margin) M - sum r_j m_j m_j', on the sparsity of M
  mjtNum* S = scratch;
  mju_scl(S, d->qM, 4 * (1 - margin), m->nM);
  for (int dof=0; dof<nv; dof++) {
    if (rdof[dof] > 0) {
      S[m->dof_Madr[dof]] -= rdof[dof];
    }
  }
  for (int i=0; i<m->nu; i++) {
    if (rten[i] <= 0) {
      continue;
    }

    // a moment row on one chain: each pair once, in the row of the deeper dof (a)
    const mjtNum* moment = d->actuator_moment + i*nv;
    int leaf = rowLeaf(m, i);
    for (int a=leaf; a>=0; a=m->dof_parentid[a]) {
      for (int b=a, adr=m->dof_Madr[a]; b>=0 && moment[a]; b=m->dof_parentid[b], adr++) {
        S[adr] -= rten[i] * moment[a] * moment[b];
      }
    }

    // a row on several branches, outside that sparsity: by Cauchy-Schwarz m m' <= n diag(m)^2,
    // n its number of nonzeros
    if (leaf < 0) {
      int n = 0;
      for (int a=0; a<nv; a++) {
        n += moment[a]!=0;
      }
      for (int a=0; a<nv; a++) {
        S[m->dof_Madr[a]] -= n * rten[i] * moment[a] * moment[a];
      }
    }
  }
  return posDefinite(m, S);
}



// 1 in whole[dof] for each dof of the chains of bodies b1 and b2 below their first common dof
static void contactDofs(const mjModel* m, int b1, int b2, mjtNum* whole) {
  while (b1 && !m->body_dofnum[b1]) {
    b1 = m->body_parentid[b1];
  }
  while (b2 && !m->body_dofnum[b2]) {
    b2 = m->body_parentid[b2];
  }
  int da1 = b1 ? m->body_dofadr[b1] + m->body_dofnum[b1] - 1 : -1;
  int da2 = b2 ? m->body_dofadr[b2] + m->body_dofnum[b2] - 1 : -1;

  // the two chains, deepest dof first, to their first common dof (mj_mergeChain)
  while (da1!=da2) {
    if (da1 > da2) {
      whole[da1] = 1;
      da1 = m->dof_parentid[da1];
    } else {
      whole[da2] = 1;
      da2 = m->dof_parentid[da2];
    }
  }
}



// 1 in whole[dof] for each dof an active constraint row acts on: a contact's, found from its
// bodies' chains, a joint limit's, from its joint, any other row's from efc_J (its nonzeros)
static void constrainedDofs(const mjModel* m, const mjData* d, mjtNum* whole) {
  int nv = m->nv;
  mju_zero(whole, nv);
  for (int r=0; r<d->nefc; r++) {
    int type = d->efc_type[r], id = d->efc_id[r];
    if (type>=mjCNSTR_CONTACT_FRICTIONLESS) {
      // a contact's rows: once
      if (!r || d->efc_id[r-1]!=id || d->efc_type[r-1]!=type) {
        const mjContact* con = d->contact + id;
        contactDofs(m, m->geom_bodyid[con->geom1], m->geom_bodyid[con->geom2], whole);
      }
    } else if (type==mjCNSTR_LIMIT_JOINT) {
      for (int dof=m->jnt_dofadr[id]; dof<m->jnt_dofadr[id]+jointDofs(m, id); dof++) {
        whole[dof] = 1;
      }
    } else if (mj_isSparse(m)) {
      for (int k=d->efc_J_rowadr[r]; k<d->efc_J_rowadr[r]+d->efc_J_rownnz[r]; k++) {
        whole[d->efc_J_colind[k]] = 1;
      }
    } else {
      for (int dof=0; dof<nv; dof++) {
        if (d->efc_J[r*nv + dof]) {
          whole[dof] = 1;
        }
      }
    }
  }
}



// 1 if the moment row of actuator i acts on a dof marked in whole
static int wholeRow(const mjModel* m, const mjData* d, int i, const mjtNum* whole) {
  const mjtNum* moment = d->actuator_moment + i*m->nv;
  int leaf = rowLeaf(m, i);
  for (int dof=rowFirst(m, leaf); dof>=0; dof=rowNext(m, leaf, dof)) {
    if (moment[dof] && whole[dof]) {
      return 1;
    }
  }
  return 0;
}



// weights of every term: the table's, raised where the step fails the gate; return 1 if one is
// below 1
#define mjPOSW_GATE 1e-3     // margin of the gate: stock's cap
#define mjPOSW_RAISED 0.5    // margin of the raised weights: half of stock's cap
#define mjPOSW_RAISE 64      // grid of the raise
static int posWeights(const mjModel* m, mjData* d, const mjtNum* kdof, const mjtNum* slope,
                      int nrow, ctrlState* controls, mjtNum* cache, const mjtNum* whole,
                      mjtNum* wdof, mjtNum* wten, mjtNum* scratch) {
  int nv = m->nv, nu = m->nu;
  mjtNum h = m->opt.timestep;
  const mjtNum* cdof = kdof + nv;
  mjtNum* rdof = scratch;          // risks at the table's weights (none at 1: -h^2 k - 2 h c)
  mjtNum* rten = rdof + nv;
  mjtNum* rdofa = rten + nu;       // risks at the raised weights
  mjtNum* rtena = rdofa + nv;
  mjtNum* S = rtena + nu;

  // terms on one dof, and their risks; on a dof an active constraint acts on: whole, as the
  // constraint solved in the step's metric must see it (doc/contact.md)
  int risky = 0, below = 0;
  for (int dof=0; dof<nv; dof++) {
    mjtNum k = kdof[dof], w = 1, r = 0;
    if (k > 0 && !(whole && whole[dof])) {
      mjtNum c = mjMAX(cdof[dof], 0);
      w = dofWeight(m, dof, h, k, c, cache + 3*dof);
      if (w < 1) {
        below = 1;
        r = termRisk(h, k, c, w);
        risky |= r > 0;
      }
    }
    wdof[dof] = w;
    rdof[dof] = r;
  }

  // servos with a moment row: actuator-space stiffness and damping, inverse inertia of the row
  // (S is free until the gate)
  for (int i=0; i<nu && nrow; i++) {
    wten[i] = 1;
    rten[i] = 0;
    if (slope[i] < 0 && d->actuator_posdof[i] < 0) {
      // a ball joint's servo: backward Euler, as its spring (ropes of them, released moving,
      // diverged at the table's weights, and at any weight down to 1/2, where backward Euler
      // did not)
      if (!rotationRow(m, i) && !(whole && wholeRow(m, d, i, whole))) {
        mjtNum c = mjMAX(mjd_actuatorDamping(m, d, i, controls), 0);
        wten[i] = tableWeight(h, -slope[i], c, rowInvweight(m, d, i, S));
        if (wten[i] < 1) {
          below = 1;
          rten[i] = termRisk(h, -slope[i], c, wten[i]);
          risky |= rten[i] > 0;
        }
      }
    }
  }

  // the stability gate, where a term is at risk (none on a moment row if there is none)
  if (!risky) {
    return below;
  }
  if (!nrow) {
    mju_zero(rten, nu);
  }
  if (posWeightsGate(m, d, mjPOSW_GATE, rdof, rten, S)) {
    return below;
  }

  // raise the terms at risk: theta + a (1 - theta) has risk r - 2 a h^2 k (1 - theta); the least
  // a = hi / mjPOSW_RAISE that passes (hi = mjPOSW_RAISE does: every risk is then negative)
  int lo = 0, hi = mjPOSW_RAISE;
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    mjtNum a = (mjtNum)mid / mjPOSW_RAISE;
    for (int dof=0; dof<nv; dof++) {
      rdofa[dof] = rdof[dof] > 0 ? rdof[dof] - 2*a*h*h*kdof[dof]*(1 - wdof[dof]) : 0;
    }
    for (int i=0; i<nu; i++) {
      rtena[i] = rten[i] > 0 ? rten[i] + 2*a*h*h*slope[i]*(1 - wten[i]) : 0;
    }
    if (posWeightsGate(m, d, mjPOSW_RAISED, rdofa, rtena, S)) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  mjtNum a = (mjtNum)hi / mjPOSW_RAISE;
  for (int dof=0; dof<nv; dof++) {
    if (rdof[dof] > 0) {
      wdof[dof] += a * (1 - wdof[dof]);
    }
  }
  for (int i=0; i<nu; i++) {
    if (rten[i] > 0) {
      wten[i] += a * (1 - wten[i]);
    }
  }

  // a term at risk is weighted below 1/2, and raised by a <= 1/2 (the first trial, a = 1/2,
  // passes: every raised risk is then -h^2 k theta - 2 h c <= 0): below 1 still
  return below;
}



int mjd_posWeightTerms(const mjModel* m, mjData* d, ctrlState* controls, mjtNum* slope,
                       mjtNum* kdof, mjtNum* kspring, int* nspring, mjtNum* cache,
                       mjtNum* wten) {
  int nv = m->nv, nscratch = 2*nv + 2*m->nu + m->nM;
  int nrow = dofStiffness(m, d, controls, slope, kdof, kspring, nspring);
  mjMARKSTACK;
  mjtNum* scratch = mj_stackAlloc(d, nscratch + (d->nefc ? nv : 0));
  mjtNum* whole = d->nefc ? scratch + nscratch : NULL;
  if (whole) {
    constrainedDofs(m, d, whole);
  }
  int below = posWeights(m, d, kdof, slope, nrow, controls, cache, whole, kdof + 2*nv, wten,
                         scratch);
  mjFREESTACK;
  return below;
}



// accuracy weight of the term of actuator id or of the dof of scalar joint id
mjtNum mjd_posWeight(const mjModel* m, mjData* d, int objtype, int id) {
  int nv = m->nv, nu = m->nu;
  ctrlState controls = CTRL_UNCHECKED;
  mjtNum weight = 1;
  int nspring;
  mjMARKSTACK;
  mjtNum* slope = mj_stackAlloc(d, 2*nu + 3*nv);
  mjtNum* wten = slope + nu;
  mjtNum* kdof = wten + nu;    // kdof, cdof (dofStiffness), wdof
  mjd_posWeightTerms(m, d, &controls, slope, kdof, NULL, &nspring, d->dof_posweightcache, wten);

  // the term's weight: a moment row's own, or its dof's
  if (objtype==mjOBJ_ACTUATOR && id>=0 && id<nu && slope[id] < 0) {
    int dof = d->actuator_posdof[id];
    weight = dof < 0 ? wten[id] : kdof[2*nv + dof];
  } else if (objtype==mjOBJ_JOINT && id>=0 && id<m->njnt && isScalar(m, id)) {
    weight = kdof[2*nv + m->jnt_dofadr[id]];
  }

  mjFREESTACK;
  return weight;
}
