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

#include "engine/engine_posscope.h"

#include <math.h>
#include <stddef.h>

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_core_smooth.h"
#include "engine/engine_derivative.h"
#include "engine/engine_io.h"
#include "engine/engine_macro.h"
#include "engine/engine_support.h"
#include "engine/engine_util_misc.h"
#include "engine/engine_util_sparse.h"

//------------------------------ structure found once ---------------------------------------------

// 1 if dof a is dof b or one of its ancestors
static int isAncestor(const mjModel* m, int a, int b) {
  while (b > a) {
    b = m->dof_parentid[b];
  }
  return b==a;
}



// deepest dof with which body b moves, -1 for a body welded to the world
static int bodyLeaf(const mjModel* m, int b) {
  while (b > 0 && m->body_dofnum[b]==0) {
    b = m->body_parentid[b];
  }
  return b > 0 ? m->body_dofadr[b] + m->body_dofnum[b] - 1 : -1;
}



// extend the chain that ends at *leaf by the one that ends at dof; 0 if on two branches
static int mergeLeaf(const mjModel* m, int* leaf, int dof) {
  if (dof < 0 || (*leaf >= 0 && dof <= *leaf)) {
    return dof < 0 || isAncestor(m, dof, *leaf);
  }
  if (*leaf >= 0 && !isAncestor(m, *leaf, dof)) {
    return 0;
  }
  *leaf = dof;
  return 1;
}



// deepest dof of the chain that holds tendon t's moment; 0 if on two branches
static int tendonLeaf(const mjModel* m, int t, int* leaf) {
  *leaf = -1;
  for (int a=m->tendon_adr[t]; a<m->tendon_adr[t]+m->tendon_num[t]; a++) {
    int type = m->wrap_type[a], id = m->wrap_objid[a], dof = -1;
    if (type==mjWRAP_JOINT) {
      dof = m->jnt_dofadr[id];
    } else if (type==mjWRAP_SITE) {
      dof = bodyLeaf(m, m->site_bodyid[id]);
    } else if (type==mjWRAP_SPHERE || type==mjWRAP_CYLINDER) {
      dof = bodyLeaf(m, m->geom_bodyid[id]);
    }
    if (!mergeLeaf(m, leaf, dof)) {
      return 0;
    }
  }
  return 1;
}



// scope of tendon t as a transmission (mjtPosScope)
static int tendonScope(const mjModel* m, int t) {
  int adr = m->tendon_adr[t], num = m->tendon_num[t];
  if (num==0) {
    return mjPOSSCOPE_TRANSMISSION;
  }

  // fixed: hinges and slides, each once
  for (int a=adr; a<adr+num && m->wrap_type[adr]==mjWRAP_JOINT; a++) {
    int da = m->jnt_dofadr[m->wrap_objid[a]];
    if (m->wrap_type[a]!=mjWRAP_JOINT || !isScalar(m, m->wrap_objid[a])) {
      return mjPOSSCOPE_TRANSMISSION;
    }
    for (int b=adr; b<a; b++) {
      if (m->jnt_dofadr[m->wrap_objid[b]]==da) {
        return mjPOSSCOPE_TRANSMISSION;
      }
    }
  }
  return mjPOSSCOPE_RESTORING;
}



void mj_setTendonPosScope(const mjModel* m, mjData* d) {
  // a model of sizes only, without any array (the Python bindings' unpickling, which then reads
  // every mjData array), as mj_resetData tests qpos0
  if (!m->tendon_adr) {
    return;
  }
  for (int t=0; t<m->ntendon; t++) {
    d->ten_posscope[t] = tendonScope(m, t);
  }
}



// deepest dof of the chain that holds actuator i's moment; 0 if on several branches
int mjd_actuatorLeaf(const mjModel* m, int i, int* leaf) {
  int id = m->actuator_trnid[2*i], id2 = m->actuator_trnid[2*i+1];
  *leaf = -1;
  switch (m->actuator_trntype[i]) {
  case mjTRN_JOINT:
  case mjTRN_JOINTINPARENT:
    *leaf = m->jnt_dofadr[id] + jointDofs(m, id) - 1;
    return 1;

  case mjTRN_TENDON:
    return tendonLeaf(m, id, leaf);

  case mjTRN_SITE:
  case mjTRN_SLIDERCRANK:
    return mergeLeaf(m, leaf, bodyLeaf(m, m->site_bodyid[id])) &&
           (id2 < 0 || mergeLeaf(m, leaf, bodyLeaf(m, m->site_bodyid[id2])));

  default:
    return 0;
  }
}



int mjd_actuatorBranches(const mjModel* m, int i) {
  int leaf;
  return mjd_actuatorDof(m, i) < 0 && !mjd_actuatorLeaf(m, i, &leaf);
}



// scope of the transmission of actuator i (mjtPosScope)
static int transmissionScope(const mjModel* m, const mjData* d, int i) {
  int id = m->actuator_trnid[2*i];
  switch (m->actuator_trntype[i]) {
  case mjTRN_JOINT:
  case mjTRN_JOINTINPARENT:
    return m->jnt_type[id]==mjJNT_FREE ? mjPOSSCOPE_TRANSMISSION : mjPOSSCOPE_RESTORING;

  case mjTRN_TENDON:
    return d->ten_posscope[id];

  case mjTRN_SITE:
  case mjTRN_SLIDERCRANK:
    return m->actuator_trnid[2*i+1] < 0 ? mjPOSSCOPE_TRANSMISSION : mjPOSSCOPE_RESTORING;

  default:
    return mjPOSSCOPE_TRANSMISSION;
  }
}



void mj_setActuatorPosScope(const mjModel* m, mjData* d) {
  // a model of sizes only, as for the tendons
  if (!m->actuator_trntype) {
    return;
  }

  // the D-sparse layout that the step makes (mj_makeMSparse), in scratch where the stack holds
  // it (3 nv + nD, as mj_makeMSparse takes nv more; a model's default stack holds 5 nv^2; else
  // no address, and every actuator takes the step's general path); the reset's scratch is not
  // counted as the simulation's use of the stack (maxuse_stack, which stock's reset leaves 0)
  int nv = m->nv, maxuse = d->maxuse_stack;
  int layout = nv > 0 && d->nstack - d->pstack >= 3*nv + m->nD;
  mjMARKSTACK;
  int* rownnz = layout ? (int*)mj_stackAlloc(d, nv) : NULL;
  int* rowadr = layout ? (int*)mj_stackAlloc(d, nv) : NULL;
  int* colind = layout ? (int*)mj_stackAlloc(d, m->nD) : NULL;
  if (layout) {
    mj_makeMSparse(m, d, rownnz, rowadr, colind);
  }

  // the transmission's scope, then a user gain or bias; a servo on one dof whose slope is its
  // bias's: its dof's diagonal element in that layout
  for (int i=0; i<m->nu; i++) {
    int scope = transmissionScope(m, d, i);
    if (scope==mjPOSSCOPE_RESTORING && !closedForm(m, i)) {
      scope = mjPOSSCOPE_GAINBIAS;
    }
    int dof = mjd_actuatorDof(m, i);
    d->actuator_posdof[i] = dof;
    d->actuator_postrn[i] = scope;
    d->actuator_posdiag[i] = -1;
    if (layout && dof >= 0 && scope==mjPOSSCOPE_RESTORING &&
        m->actuator_gaintype[i]==mjGAIN_FIXED && m->actuator_biastype[i]==mjBIAS_AFFINE) {
      d->actuator_posdiag[i] = sparseAdr(rownnz, rowadr, colind, dof, dof);
    }
  }
  mjFREESTACK;
  d->maxuse_stack = maxuse;
}



//------------------------------ slopes -----------------------------------------------------------

// 1 if a control is bad after clamping: mj_fwdActuation then uses zero for all of them
int mjd_badControl(const mjModel* m, const mjData* d) {
  for (int k=0; k<m->nu; k++) {
    mjtNum c = d->ctrl[k];
    if (!mjDISABLED(mjDSBL_CLAMPCTRL) && m->actuator_ctrllimited[k]) {
      c = mju_clip(c, m->actuator_ctrlrange[2*k], m->actuator_ctrlrange[2*k+1]);
    }
    if (mju_isBad(c)) {
      return 1;
    }
  }
  return 0;
}



// normalized length of a muscle and its optimal length L0
static mjtNum muscleLength(mjtNum len, const mjtNum lengthrange[2], const mjtNum prm[9],
                           mjtNum* L0) {
  *L0 = mjMAX(mjMINVAL, (lengthrange[1]-lengthrange[0]) / mjMAX(mjMINVAL, prm[1]-prm[0]));
  return prm[0] + (len-lengthrange[0]) / *L0;
}



// d mju_muscleGain / d len
mjtNum mjd_muscleGainLength(mjtNum len, mjtNum vel, const mjtNum lengthrange[2], mjtNum acc0,
                            const mjtNum prm[9]) {
  // unpack parameters
  mjtNum lmin = prm[4];
  mjtNum lmax = prm[5];

  // mid-ranges, optimum length and normalized length
  mjtNum a = 0.5*(lmin+1);
  mjtNum b = 0.5*(1+lmax);
  mjtNum L0, L = muscleLength(len, lengthrange, prm, &L0);

  // slope of the length curve
  mjtNum dFL = 0, w;
  if (L>=lmin && L<=a) {
    w = mjMAX(mjMINVAL, a-lmin);
    dFL = (L-lmin) / w / w;
  } else if (L<=1) {
    w = mjMAX(mjMINVAL, 1-a);
    dFL = (1-L) / w / w;
  } else if (L<=b) {
    w = mjMAX(mjMINVAL, b-1);
    dFL = -(L-1) / w / w;
  } else if (L<=lmax) {
    w = mjMAX(mjMINVAL, lmax-b);
    dFL = -(lmax-L) / w / w;
  }

  // times the gain where the length curve is 1, per unit of len
  mjtNum len1 = lengthrange[0] + (1-prm[0]) * L0;
  return mju_muscleGain(len1, vel, lengthrange, acc0, prm) * dFL / L0;
}



// d mju_muscleBias / d len
mjtNum mjd_muscleBiasLength(mjtNum len, const mjtNum lengthrange[2], mjtNum acc0,
                            const mjtNum prm[9]) {
  // unpack parameters
  mjtNum force = prm[2];
  mjtNum scale = prm[3];
  mjtNum lmax  = prm[5];
  mjtNum fpmax = prm[7];

  // scale force if negative
  if (force<0) {
    force = scale / mjMAX(mjMINVAL, acc0);
  }

  // optimum length and normalized length
  mjtNum L0, L = muscleLength(len, lengthrange, prm, &L0);
  if (L<=1) {
    return 0;
  }

  // d/dL of -force fpmax (x^2/2 to b, 1/2 + x beyond), x = (L-1) / (b-1), per unit of len
  mjtNum b = 0.5*(1+lmax);
  mjtNum w = mjMAX(mjMINVAL, b-1);
  mjtNum x = L<=b ? (L-1) / w : 1;
  return -force * fpmax * x / w / L0;
}



// damping of actuator i in actuator space: -d force / d velocity
mjtNum mjd_actuatorDamping(const mjModel* m, const mjData* d, int i, ctrlState* controls) {
  if (m->actuator_gaintype[i]==mjGAIN_MUSCLE) {
    return -mjd_actuatorVel(m, d, i);
  }
  const mjtNum* gainprm = m->actuator_gainprm + mjNGAIN*i;
  const mjtNum* biasprm = m->actuator_biasprm + mjNBIAS*i;
  mjtNum c = 0;
  if (m->actuator_biastype[i]==mjBIAS_AFFINE) {
    c -= biasprm[2];
  }
  if (m->actuator_gaintype[i]==mjGAIN_AFFINE && gainprm[2]!=0) {
    c -= gainprm[2] * gainInput(m, d, i, controls);
  }
  return c;
}



int mjd_actuatorSlopes(const mjModel* m, const mjData* d, int i, mjtNum slope[2]) {
  int closed = closedForm(m, i);
  ctrlState controls = CTRL_UNCHECKED;
  slope[0] = closed ? actuatorSlope(m, d, i, &controls) : 0;
  slope[1] = closed ? -mjd_actuatorDamping(m, d, i, &controls) : 0;
  return closed;
}



// input that multiplies the gain of actuator i in mj_fwdActuation
mjtNum mjd_actuatorInput(const mjModel* m, const mjData* d, int i) {
  ctrlState controls = CTRL_UNCHECKED;
  return gainInput(m, d, i, &controls);
}



//------------------------------ scope ------------------------------------------------------------

int mjd_actuatorVelResolvable(const mjModel* m, const mjData* d, int i) {
  return m->opt.timestep * mju_abs(mjd_actuatorVel(m, d, i)) <= mjMAXVAL;
}



int mjd_actuatorPosScope(const mjModel* m, const mjData* d, int i, mjtNum* slope) {
  ctrlState controls = CTRL_UNCHECKED;
  mjtNum s = closedForm(m, i) ? actuatorSlope(m, d, i, &controls) : 0;
  if (slope) {
    *slope = s;
  }
  int scope = actuatorScope(m, d, i, s);

  // on several branches, the step's row path (actuatorRowTerm) tests its velocity term too
  if (scope==mjPOSSCOPE_RESTORING && mjd_actuatorBranches(m, i) &&
      !mjd_actuatorVelResolvable(m, d, i)) {
    return mjPOSSCOPE_NONRESTORING;
  }
  return scope;
}



int mjd_jointPosScope(const mjModel* m, int j) {
  return springScope(m, j);
}



// why a case of mjtPosScope is in K or left out of it
const char* mjd_posScopeReason(int scope) {
  switch ((mjtPosScope) scope) {
  case mjPOSSCOPE_RESTORING:
    return "in K";
  case mjPOSSCOPE_ZERO:
    return "nothing to add";
  case mjPOSSCOPE_NONRESTORING:
    return "K must stay positive semidefinite, finite and within what the factorization resolves";
  case mjPOSSCOPE_CLAMPED:
    return "the clamped force does not change with the length";
  case mjPOSSCOPE_GAINBIAS:
    return "no closed-form slope";
  case mjPOSSCOPE_TRANSMISSION:
    return "the transmission has no length, or its moment is not the length's gradient";
  case mjPOSSCOPE_DISABLED:
    return "the force is disabled";
  }
  return "unknown scope";
}
