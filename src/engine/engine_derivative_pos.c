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

#include <math.h>

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_macro.h"
#include "engine/engine_util_misc.h"

//------------------------------ utilities ---------------------------------------------------------

// 1 if joint j is a hinge or a slide
static int isScalar(const mjModel* m, int j) {
  return m->jnt_type[j]==mjJNT_HINGE || m->jnt_type[j]==mjJNT_SLIDE;
}



// 1 if dof a is dof b or one of its ancestors
static int isAncestor(const mjModel* m, int a, int b) {
  while (b > a) {
    b = m->dof_parentid[b];
  }
  return b==a;
}



// scope of fixed tendon t: its joints are hinges or slides, each listed once, on one kinematic
// chain (so that moment'*moment has the sparsity of M). A joint listed twice is out of scope:
// the length sums its coefficients, but the moment (mj_tendon) keeps the last one, so the force
// is not the gradient of a potential and K would not be its derivative.
static int fixedTendonScope(const mjModel* m, int t) {
  int adr = m->tendon_adr[t], num = m->tendon_num[t];
  for (int a=adr; a<adr+num; a++) {
    int ja = m->wrap_objid[a];
    if (m->wrap_type[a]!=mjWRAP_JOINT || !isScalar(m, ja)) {
      return mjPOSSCOPE_TRANSMISSION;
    }

    // every pair of dofs must be distinct, ancestor and descendant
    int da = m->jnt_dofadr[ja];
    for (int b=adr; b<a; b++) {
      int db = m->jnt_dofadr[m->wrap_objid[b]];
      if (db==da) {
        return mjPOSSCOPE_TRANSMISSION;
      }
      if (!isAncestor(m, mjMIN(da, db), mjMAX(da, db))) {
        return mjPOSSCOPE_BRANCH;
      }
    }
  }
  return mjPOSSCOPE_RESTORING;
}



// address of element (r, c) of a CSR matrix with sorted column indices, -1 if absent
static int sparseAdr(const int* rownnz, const int* rowadr, const int* colind, int r, int c) {
  int lo = rowadr[r], hi = rowadr[r] + rownnz[r] - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (colind[mid]==c) {
      return mid;
    } else if (colind[mid] < c) {
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return -1;
}



// add val to element (r, c) of the D-sparse matrix matD
static void addD(const mjData* d, mjtNum* matD, int r, int c, mjtNum val) {
  int adr = sparseAdr(d->D_rownnz, d->D_rowadr, d->D_colind, r, c);
  if (adr >= 0) {
    matD[adr] += val;
  }
}



// ctrl or act multiplying the gain of actuator i, as in mj_fwdActuation
static mjtNum actuatorInput(const mjModel* m, const mjData* d, int i) {
  int nu = m->nu;

  // activation
  if (m->actuator_dyntype[i]!=mjDYN_NONE) {
    return d->act[i - (nu - m->na)];
  }

  // clamped ctrl; all controls are zeroed if any is bad
  mjtNum ctrl = 0;
  for (int k=0; k<nu; k++) {
    mjtNum c = d->ctrl[k];
    if (!mjDISABLED(mjDSBL_CLAMPCTRL) && m->actuator_ctrllimited[k]) {
      c = mju_clip(c, m->actuator_ctrlrange[2*k], m->actuator_ctrlrange[2*k+1]);
    }
    if (mju_isBad(c)) {
      return 0;
    }
    if (k==i) {
      ctrl = c;
    }
  }
  return ctrl;
}



//------------------------------ scope -------------------------------------------------------------

// scope of actuator i under mjENBL_IMPLICITPOS, slope = d actuator_force / d actuator_length
int mjd_actuatorPosScope(const mjModel* m, const mjData* d, int i, mjtNum* slope) {
  int gaintype = m->actuator_gaintype[i], biastype = m->actuator_biastype[i];
  const mjtNum* gainprm = m->actuator_gainprm + mjNGAIN*i;
  const mjtNum* biasprm = m->actuator_biasprm + mjNBIAS*i;
  mjtNum s = 0;

  // slope of force = gain * input + bias: affine, fixed or no gain and bias only
  int affine = (gaintype==mjGAIN_FIXED || gaintype==mjGAIN_AFFINE) &&
               (biastype==mjBIAS_NONE || biastype==mjBIAS_AFFINE);
  if (affine) {
    if (biastype==mjBIAS_AFFINE) {
      s = biasprm[1];
    }
    if (gaintype==mjGAIN_AFFINE && gainprm[1]!=0) {
      s += gainprm[1] * actuatorInput(m, d, i);
    }
  }
  if (slope) {
    *slope = s;
  }

  // disabled actuation
  if (mjDISABLED(mjDSBL_ACTUATION)) {
    return mjPOSSCOPE_DISABLED;
  }

  // transmission: hinge or slide joint, or fixed tendon along one chain
  int id = m->actuator_trnid[2*i];
  switch (m->actuator_trntype[i]) {
  case mjTRN_JOINT:
  case mjTRN_JOINTINPARENT:
    if (!isScalar(m, id)) {
      return mjPOSSCOPE_TRANSMISSION;
    }
    break;

  case mjTRN_TENDON:
    if (m->tendon_num[id]==0 || m->wrap_type[m->tendon_adr[id]]!=mjWRAP_JOINT) {
      return mjPOSSCOPE_TRANSMISSION;
    }
    int scope = fixedTendonScope(m, id);
    if (scope!=mjPOSSCOPE_RESTORING) {
      return scope;
    }
    break;

  default:
    return mjPOSSCOPE_TRANSMISSION;
  }

  // muscle or user gain/bias
  if (!affine) {
    return mjPOSSCOPE_GAINBIAS;
  }

  // force on its clamp: zero derivative
  if (m->actuator_forcelimited[i]) {
    mjtNum force = d->actuator_force[i];
    if (force <= m->actuator_forcerange[2*i] || force >= m->actuator_forcerange[2*i+1]) {
      return mjPOSSCOPE_CLAMPED;
    }
  }

  // sign of the slope: restoring only, finite only
  if (s==0) {
    return mjPOSSCOPE_ZERO;
  }
  if (!(s < 0) || !isfinite(s)) {
    return mjPOSSCOPE_NONRESTORING;
  }
  return mjPOSSCOPE_RESTORING;
}



//------------------------------ main entry point --------------------------------------------------

// add sclK*K to matD (D sparsity) and sclKv*K*qvel to vec, K = -d(qfrc_actuator+qfrc_passive)/dq
void mjd_implicitPos(const mjModel* m, const mjData* d,
                     mjtNum* matD, mjtNum sclK, mjtNum* vec, mjtNum sclKv) {
  int nv = m->nv;
  const mjtNum* qvel = d->qvel;

  // actuators: K += -slope * moment' * moment
  for (int i=0; i<m->nu; i++) {
    // motors: fixed gain and no bias, no position slope
    if (m->actuator_gaintype[i]==mjGAIN_FIXED && m->actuator_biastype[i]==mjBIAS_NONE) {
      continue;
    }

    mjtNum slope;
    if (mjd_actuatorPosScope(m, d, i, &slope)!=mjPOSSCOPE_RESTORING) {
      continue;
    }
    const mjtNum* moment = d->actuator_moment + i*nv;
    int id = m->actuator_trnid[2*i];

    // joint transmission: one diagonal element
    if (m->actuator_trntype[i]!=mjTRN_TENDON) {
      int dof = m->jnt_dofadr[id];
      mjtNum km = -slope * moment[dof];
      if (matD) {
        addD(d, matD, dof, dof, sclK * (km * moment[dof]));
      }
      if (vec) {
        vec[dof] += sclKv * (km * (moment[dof] * qvel[dof]));
      }
      continue;
    }

    // fixed tendon: moment velocity, over the tendon's joints (each listed once, in scope)
    int adr = m->tendon_adr[id], num = m->tendon_num[id];
    mjtNum mv = 0;
    for (int a=adr; a<adr+num; a++) {
      int da = m->jnt_dofadr[m->wrap_objid[a]];
      mv += moment[da] * qvel[da];
    }

    // fixed tendon: dense block on the chain's dofs, all within the D pattern
    for (int a=adr; a<adr+num; a++) {
      int da = m->jnt_dofadr[m->wrap_objid[a]];
      mjtNum km = -slope * moment[da];
      if (vec) {
        vec[da] += sclKv * (km * mv);
      }
      if (matD) {
        for (int b=adr; b<adr+num; b++) {
          int db = m->jnt_dofadr[m->wrap_objid[b]];
          addD(d, matD, da, db, sclK * (km * moment[db]));
        }
      }
    }
  }

  // joint stiffness of hinges and slides: diagonal
  if (mjDISABLED(mjDSBL_PASSIVE)) {
    return;
  }
  for (int j=0; j<m->njnt; j++) {
    mjtNum stiffness = m->jnt_stiffness[j];
    if (!isScalar(m, j) || !(stiffness > 0) || !isfinite(stiffness)) {
      continue;
    }
    int dof = m->jnt_dofadr[j];
    if (matD) {
      addD(d, matD, dof, dof, sclK * stiffness);
    }
    if (vec) {
      vec[dof] += sclKv * (stiffness * qvel[dof]);
    }
  }
}
