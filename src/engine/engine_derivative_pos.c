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
#include <stddef.h>

#include <mujoco/mjdata.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_core_smooth.h"
#include "engine/engine_derivative.h"
#include "engine/engine_io.h"
#include "engine/engine_macro.h"
#include "engine/engine_support.h"
#include "engine/engine_util_blas.h"
#include "engine/engine_util_errmem.h"
#include "engine/engine_util_misc.h"
#include "engine/engine_util_solve.h"
#include "engine/engine_util_sparse.h"

//------------------------------ utilities ---------------------------------------------------------

// 1 if joint j is a hinge or a slide
static int isScalar(const mjModel* m, int j) {
  return m->jnt_type[j]==mjJNT_HINGE || m->jnt_type[j]==mjJNT_SLIDE;
}



// the number of dofs of joint j: 6 free, 3 ball, 1 hinge or slide
static int jointDofs(const mjModel* m, int j) {
  return m->jnt_type[j]==mjJNT_FREE ? 6 : m->jnt_type[j]==mjJNT_BALL ? 3 : 1;
}



// 1 if dof is a rotation of a ball or free joint: its spring's term of K is the small-angle term
// of a stiffness that is not symmetric away from rest, as is a ball joint servo's
static int isRotationDof(const mjModel* m, int dof) {
  int j = m->dof_jntid[dof];
  return m->jnt_type[j]==mjJNT_BALL ||
         (m->jnt_type[j]==mjJNT_FREE && dof >= m->jnt_dofadr[j] + 3);
}



// 1 if dof a is dof b or one of its ancestors
static int isAncestor(const mjModel* m, int a, int b) {
  while (b > a) {
    b = m->dof_parentid[b];
  }
  return b==a;
}



// the deepest dof with which body b moves (its own last dof, or its nearest moving ancestor's), -1
// for a body welded to the world
static int bodyLeaf(const mjModel* m, int b) {
  while (b > 0 && m->body_dofnum[b]==0) {
    b = m->body_parentid[b];
  }
  return b > 0 ? m->body_dofadr[b] + m->body_dofnum[b] - 1 : -1;
}



// extend the chain of dofs that ends at *leaf (-1: none yet) to the one that ends at dof (-1:
// none); 0 if the two lie on different branches, *leaf then unchanged
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



// the deepest dof of the chain that holds the moment of tendon t in *leaf (-1 for none: every
// wrap on the world): the dofs of its joints, or the bodies of its sites and wrapping geoms
// (pulleys have none); 0 if they lie on two branches
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



// scope of tendon t: restoring if it can carry a term of K: a fixed tendon of hinges and slides,
// each listed once, or a spatial tendon. A joint listed twice is out of scope: the length sums its
// coefficients, but the moment (mj_tendon) keeps the last one, so the force is not the gradient of
// a potential and K would not be its derivative. A moment on several branches is in scope: its
// term falls outside the sparsity of M and the step applies it by a low-rank update of the
// factorization (mj_implicitPosCross).
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



// address of the diagonal element of row r in the D-sparse layout: after the row's columns below
// r, its ancestors (mj_makeMSparse), as many as the row of r in M holds besides it
static inline int diagD(const mjModel* m, const mjData* d, int r) {
  int end = r < m->nv - 1 ? m->dof_Madr[r+1] : m->nM;
  return d->D_rowadr[r] + end - m->dof_Madr[r] - 1;
}



// add val to the diagonal element of row r of the D-sparse matrix matD
static inline void addDiagD(const mjModel* m, const mjData* d, mjtNum* matD, int r, mjtNum val) {
  matD[diagD(m, d, r)] += val;
}



// add val to element (r, c) of the D-sparse matrix matD; every element of K in scope is in the
// pattern of M (a diagonal, or two dofs of one chain), so a miss is an error, not a drop
static void addD(const mjData* d, mjtNum* matD, int r, int c, mjtNum val) {
  int adr = sparseAdr(d->D_rownnz, d->D_rowadr, d->D_colind, r, c);
  if (adr < 0) {
    mju_error_i("mjd_implicitPos: an element of K in row %d is outside the pattern of M", r);
    return;
  }
  matD[adr] += val;
}



// the deepest dof of the chain that holds the moment of actuator i in *leaf (-1 for none): its
// joint's last dof, its tendon's (tendonLeaf), the bodies of its site and refsite or of its
// slider-crank's sites; 0 if they lie on two branches, or for a body transmission
static int actuatorLeaf(const mjModel* m, int i, int* leaf) {
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



// the leaf of the chain that holds the moment row of actuator i (actuatorLeaf), -1 for a row on
// several branches; a walk over the row (rowFirst, rowNext) goes up that chain, or over every dof
static int rowLeaf(const mjModel* m, int i) {
  int leaf;
  return actuatorLeaf(m, i, &leaf) ? leaf : -1;
}

static inline int rowFirst(const mjModel* m, int leaf) {
  return leaf >= 0 ? leaf : m->nv - 1;
}

static inline int rowNext(const mjModel* m, int leaf, int a) {
  return leaf >= 0 ? m->dof_parentid[a] : a - 1;
}



// add scl*(k*moment)'*moment to the D-sparse matD for a moment row on the chain that ends at dof
// leaf (actuatorLeaf), or its part on the pattern of M for a row on several branches (leaf -1:
// every dof): each pair of its dofs with a moment, the deeper (a) and its ancestor (b)
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



// add scl*(k*moment)'*moment of actuator i to the D-sparse matD: one diagonal element for a
// hinge or slide, else the dense block on the chain that holds its moment (in the pattern of M),
// or the part on the pattern of M of a row on several branches
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



int mjd_actuatorBranches(const mjModel* m, int i) {
  int leaf;
  return mjd_actuatorDof(m, i) < 0 && !actuatorLeaf(m, i, &leaf);
}



// 1 if actuator i has a term of K (kact[i] > 0) whose moment is on several branches
static int branchTerm(const mjModel* m, const mjtNum* kact, int i) {
  return kact[i] > 0 && mjd_actuatorBranches(m, i);
}



// the coefficient of m m' in the step's matrix for a term on several branches (branchTerm):
// scl*kact[i] for K, and its whole velocity term -h dfdv
static mjtNum branchCoef(const mjModel* m, const mjData* d, const mjtNum* kact, int i,
                         mjtNum scl) {
  return scl * kact[i] - m->opt.timestep * mjd_actuatorVel(m, d, i);
}



void mjd_branchVelocity(const mjModel* m, const mjData* d, mjtNum* res, const mjtNum* kact,
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



// the controls as mj_fwdActuation checks them, found on first use in a pass over the actuators
typedef enum {
  CTRL_UNCHECKED = -1,            // not yet checked
  CTRL_GOOD,                      // every control finite after clamping
  CTRL_BAD                        // one is bad after clamping: mj_fwdActuation zeroes them all
} ctrlState;



// 1 if a control is bad after clamping: mj_fwdActuation then uses zero for all of them
static int ctrlBad(const mjModel* m, const mjData* d) {
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



// ctrl or act multiplying the gain of actuator i, as in mj_fwdActuation; *controls is their
// check, done on first use, so that a pass over all actuators is O(nu)
static mjtNum actuatorInput(const mjModel* m, const mjData* d, int i, ctrlState* controls) {
  // activation
  if (m->actuator_dyntype[i]!=mjDYN_NONE) {
    return d->act[i - (m->nu - m->na)];
  }

  // clamped ctrl, zero if any control is bad
  if (*controls==CTRL_UNCHECKED) {
    *controls = ctrlBad(m, d) ? CTRL_BAD : CTRL_GOOD;
  }
  if (*controls==CTRL_BAD) {
    return 0;
  }
  mjtNum ctrl = d->ctrl[i];
  if (!mjDISABLED(mjDSBL_CLAMPCTRL) && m->actuator_ctrllimited[i]) {
    ctrl = mju_clip(ctrl, m->actuator_ctrlrange[2*i], m->actuator_ctrlrange[2*i+1]);
  }
  return ctrl;
}



//------------------------------ scope -------------------------------------------------------------

// normalized length L of a muscle of length len and its optimal length *L0, as in
// mju_muscleGain and mju_muscleBias
static mjtNum muscleLength(mjtNum len, const mjtNum lengthrange[2], const mjtNum prm[9],
                           mjtNum* L0) {
  *L0 = mjMAX(mjMINVAL, (lengthrange[1]-lengthrange[0]) / mjMAX(mjMINVAL, prm[1]-prm[0]));
  return prm[0] + (len-lengthrange[0]) / *L0;
}



// d mju_muscleGain / d len: the slope of the force-length curve, piece by piece, times the gain
// at the optimal length L = 1, where the curve is 1 (-force times the velocity curve)
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



// d mju_muscleBias / d len: the slope of the passive curve, quadratic to b = (1+lmax)/2 and
// linear beyond
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



// the slopes in the length of bias type biastype and gain type gaintype of actuator i: an affine
// term's parameter, a muscle's curve (0 for none, fixed or user)
static inline void termSlopes(const mjModel* m, const mjData* d, int i, int biastype,
                              int gaintype, mjtNum* bias, mjtNum* gain) {
  *bias = *gain = 0;
  if (biastype==mjBIAS_AFFINE) {
    *bias = m->actuator_biasprm[mjNBIAS*i + 1];
  } else if (biastype==mjBIAS_MUSCLE) {
    *bias = mjd_muscleBiasLength(d->actuator_length[i], m->actuator_lengthrange + 2*i,
                                 m->actuator_acc0[i], m->actuator_biasprm + mjNBIAS*i);
  }
  if (gaintype==mjGAIN_AFFINE) {
    *gain = m->actuator_gainprm[mjNGAIN*i + 1];
  } else if (gaintype==mjGAIN_MUSCLE) {
    *gain = mjd_muscleGainLength(d->actuator_length[i], d->actuator_velocity[i],
                                 m->actuator_lengthrange + 2*i, m->actuator_acc0[i],
                                 m->actuator_gainprm + mjNGAIN*i);
  }
}



// 1 if the force of actuator i has a closed form: neither its gain nor its bias is a user term
static inline int closedForm(const mjModel* m, int i) {
  return m->actuator_gaintype[i]!=mjGAIN_USER && m->actuator_biastype[i]!=mjBIAS_USER;
}



// d actuator_force / d actuator_length of actuator i at its current input, length and velocity,
// for a force of closed form (closedForm): the slopes of an affine gain and bias, and of a
// muscle's curves (the exact derivative of the force in its length); for a user gain or bias, the
// slope of its other term only, which actuatorScope rejects (GAINBIAS); controls: see
// actuatorInput
static inline mjtNum actuatorSlope(const mjModel* m, const mjData* d, int i,
                                   ctrlState* controls) {
  // slope of force = gain * input + bias
  mjtNum s, g;
  termSlopes(m, d, i, m->actuator_biastype[i], m->actuator_gaintype[i], &s, &g);
  if (g!=0) {
    s += g * actuatorInput(m, d, i, controls);
  }
  return s;
}



// scope of the transmission of actuator i: restoring if it has a length whose gradient is its
// moment (the tendon's scope is model structure, found first); a free joint, a site without refsite
// and a body have no length (mj_transmission sets it to 0)
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



// scope of actuator i under mjENBL_IMPLICITPOS from its force and its slope s (actuatorSlope),
// for actuation enabled and a restoring structure (actuatorScope)
static inline int actuatorScopeForce(const mjModel* m, const mjData* d, int i, mjtNum s) {
  // force on its clamp: zero derivative
  if (m->actuator_forcelimited[i]) {
    mjtNum force = d->actuator_force[i];
    if (force <= m->actuator_forcerange[2*i] || force >= m->actuator_forcerange[2*i+1]) {
      return mjPOSSCOPE_CLAMPED;
    }
  }

  // sign of the slope: restoring only, finite only, and no stiffer than the factorization of
  // M + h^2 K can resolve (h^2 |slope| <= mjMAXVAL, false for an infinite or nan slope; a 1e300
  // gain left it singular)
  mjtNum h = m->opt.timestep;
  if (s==0) {
    return mjPOSSCOPE_ZERO;
  }
  if (!(s < 0) || !(-s * h * h <= mjMAXVAL)) {
    return mjPOSSCOPE_NONRESTORING;
  }
  return mjPOSSCOPE_RESTORING;
}



// scope of actuator i under mjENBL_IMPLICITPOS, given its slope s (actuatorSlope)
static inline int actuatorScope(const mjModel* m, const mjData* d, int i, mjtNum s) {
  // disabled actuation
  if (mjDISABLED(mjDSBL_ACTUATION)) {
    return mjPOSSCOPE_DISABLED;
  }

  // transmission, then a user gain or bias: model structure, found once by mj_resetData
  if (d->actuator_postrn[i]!=mjPOSSCOPE_RESTORING) {
    return d->actuator_postrn[i];
  }
  return actuatorScopeForce(m, d, i, s);
}



int mjd_actuatorVelResolvable(const mjModel* m, const mjData* d, int i) {
  return m->opt.timestep * mju_abs(mjd_actuatorVel(m, d, i)) <= mjMAXVAL;
}



// 1 if actuator i contributes to K, with its slope: the slope is tested first (a motor or an
// inactive muscle short of its optimal length has none, a negative gain is not restoring), the
// structure (transmission, user gain or bias) and clamp only then
static int actuatorRestoring(const mjModel* m, const mjData* d, int i, mjtNum* slope,
                             ctrlState* controls) {
  *slope = actuatorSlope(m, d, i, controls);
  return *slope < 0 && actuatorScope(m, d, i, *slope)==mjPOSSCOPE_RESTORING;
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



// scope of the spring of joint j under mjENBL_IMPLICITPOS
static int jointPosScope(const mjModel* m, int j) {
  mjtNum k = m->jnt_stiffness[j];
  if (mjDISABLED(mjDSBL_PASSIVE)) {
    return mjPOSSCOPE_DISABLED;
  }
  if (k==0) {
    return mjPOSSCOPE_ZERO;
  }
  if (!(k > 0) || !isfinite(k) || k * m->opt.timestep * m->opt.timestep > mjMAXVAL) {
    return mjPOSSCOPE_NONRESTORING;
  }
  return mjPOSSCOPE_RESTORING;
}



int mjd_jointPosScope(const mjModel* m, int j) {
  return jointPosScope(m, j);
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
  case mjPOSSCOPE_BRANCH:
    return "not used: a moment on several branches is in K, outside the sparsity of M";
  case mjPOSSCOPE_DISABLED:
    return "the force is disabled";
  }
  return "unknown scope";
}



// input that multiplies the gain of actuator i in mj_fwdActuation
mjtNum mjd_actuatorInput(const mjModel* m, const mjData* d, int i) {
  ctrlState controls = CTRL_UNCHECKED;
  return actuatorInput(m, d, i, &controls);
}



//------------------------------ accuracy weights (mjENBL_POSWEIGHT) ------------------------------

// Weight theta of one term of K under mjENBL_POSWEIGHT (matrix theta h^2 K, shift theta h K v):
// for one dof the weighted step is stock implicit with damping kv + theta h kp, so theta -> 0 is
// stock and theta = 1 backward Euler. theta depends on the term's h w_n and zeta through its
// distance to stock's own stability cap on the term alone, h w_n = 2 (zeta + sqrt(zeta^2 + 1)):
// below the cap mjPOSW_MIN (stock; just enough damping that an undamped servo loses energy),
// from the cap on the table over s = log10(h w_n / cap) and zeta. Each entry is the weight of
// least error on a unit step, a free decay, sinusoidal targets and a load step, within 1.05x
// backward Euler's error on each. Stock is kept below the cap, where it is the more accurate
// scheme, because on coupled terms any added damping slows their slower modes. Generated with
// the study that measures it; not to be edited by hand.
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



// theta of the table at (h w_n)^2 = hw2 >= 0 and zeta >= 0, both finite: mjPOSW_MIN below the
// cap, bilinear in (s, zeta) from it on, clamped to the table
static mjtNum posWeightTable(mjtNum hw2, mjtNum zeta) {
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



// table weight of a term of stiffness k > 0 and damping c >= 0 at the inverse inertia invweight
// of its row: a dof's invweight0 at qpos0 (a model constant, as the constraint solver's
// regularization), a moment row's from rowInvweight; 1 (backward Euler) where (h w_n)^2 or zeta
// is not finite or invweight not positive. cache (3 numbers, NULL for none): the (h w_n)^2, zeta
// and theta of the last lookup, looked up again only when (h w_n)^2 or zeta change; the weight is
// the same with or without it
static mjtNum tableWeight(mjtNum h, mjtNum k, mjtNum c, mjtNum invweight, mjtNum* cache) {
  mjtNum hw2 = h * h * k * invweight;  // (h w_n)^2
  mjtNum zeta = 0.5 * c * mju_sqrt(invweight / k);

  // the same term as the last lookup (never a zeroed cache: hw2 > 0)
  if (cache && hw2 > 0 && cache[0]==hw2 && cache[1]==zeta) {
    return cache[2];
  }

  // not finite: backward Euler
  if (!isfinite(hw2) || !isfinite(zeta) || !(invweight > 0)) {
    return 1;
  }

  mjtNum theta = posWeightTable(hw2, zeta);
  if (cache) {
    cache[0] = hw2;
    cache[1] = zeta;
    cache[2] = theta;
  }
  return theta;
}



// upper bound of m' M^-1 m for a moment row m with nonzeros on the chain that ends at dof leaf
// (-1: on several branches; rowLeaf), or for the unit row of dof leaf (moment NULL):
// M >= diag(armature), so m' M^-1 m <= sum m_i^2 / armature_i; mjMAXVAL where a dof of the row
// has no armature
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



// inverse inertia of the moment row m of actuator i: a tendon's at qpos0 through its gear (a
// model constant, as a dof's dof_invweight0), else m' M^-1 m at the current configuration from
// the factorization of M (qLD): MuJoCo keeps a ball joint's and a body's only as averages over
// their axes (dof_invweight0, body_invweight0), off by a factor of four on a thin link (a ball
// joint's servo no longer asks since patch 0018: its weight is 1); x: nv of scratch
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



// damping of actuator i in actuator space: -d force / d velocity from the bias and, for an affine
// gain, the gain's velocity term at the current input; for a muscle gain, the velocity slope of
// its curve that the step's qDeriv takes
static mjtNum actuatorDamping(const mjModel* m, const mjData* d, int i, ctrlState* controls) {
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
    c -= gainprm[2] * actuatorInput(m, d, i, controls);
  }
  return c;
}



int mjd_actuatorSlopes(const mjModel* m, const mjData* d, int i, mjtNum slope[2]) {
  int closed = closedForm(m, i);
  ctrlState controls = CTRL_UNCHECKED;
  slope[0] = closed ? actuatorSlope(m, d, i, &controls) : 0;
  slope[1] = closed ? -actuatorDamping(m, d, i, &controls) : 0;
  return closed;
}



// the restoring slope of every actuator (actuatorRestoring; 0 for one that adds nothing to K),
// and the terms of K on one dof alone, in joint space, for every dof: stiffness kdof (servos on a
// hinge or slide, -slope gear^2, and the joint's spring) and damping cdof (their velocity slopes
// times gear^2, and the joint's damping); kdof is 0 where no such term is in scope; returns the
// number of servos with a restoring slope whose moment is a row on a chain (a tendon, a ball
// joint, a site, a slider-crank); kdof and cdof are one array of 2*nv (cdof = kdof + nv)
static int dofTerms(const mjModel* m, const mjData* d, ctrlState* controls, mjtNum* slope,
                    mjtNum* kdof) {
  int nv = m->nv, nrow = 0;
  mjtNum* cdof = kdof + nv;
  mju_zero(kdof, 2*nv);

  // servos on one dof; those on a chain counted
  for (int i=0; i<m->nu; i++) {
    if (!actuatorRestoring(m, d, i, slope + i, controls)) {
      slope[i] = 0;
      continue;
    }
    int dof = d->actuator_posdof[i];
    if (dof < 0) {
      nrow++;
      continue;
    }
    mjtNum gear = d->actuator_moment[i*nv + dof];
    kdof[dof] -= slope[i] * gear * gear;
    cdof[dof] += actuatorDamping(m, d, i, controls) * gear * gear;
  }

  // springs and joint damping
  for (int j=0; j<m->njnt && !mjDISABLED(mjDSBL_PASSIVE); j++) {
    int restoring = jointPosScope(m, j)==mjPOSSCOPE_RESTORING;
    for (int dof=m->jnt_dofadr[j]; dof<m->jnt_dofadr[j]+jointDofs(m, j); dof++) {
      cdof[dof] += m->dof_damping[dof];
      if (restoring) {
        kdof[dof] += m->jnt_stiffness[j];
      }
    }
  }
  return nrow;
}



// 1 if the matrix S with the sparsity and layout of qM is positive definite: its L'DL
// factorization (in place, as mj_factorI) has only positive pivots
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



// the risk r = h^2 k (1 - 2 theta) - 2 h c of a term of stiffness k, damping c and weight theta,
// the coefficient of -m m' that the term adds to the matrix of posWeightsGate
static mjtNum termRisk(mjtNum h, mjtNum k, mjtNum c, mjtNum theta) {
  return h * h * k * (1 - 2 * theta) - 2 * h * c;
}



// Stability of the weighted step at the current configuration. Linearised at fixed M, with D the
// damping and K_j = k_j m_j m_j' the terms of K weighted by theta_j, the step keeps the energy
// 1/2 v'(M + h/2 D' - h^2/4 K) v + 1/8 q' K q (q the sum of two successive positions,
// D' = D + h sum theta_j K_j) from growing, and it is a norm, while 4M + 2hD - h^2 sum
// (1 - 2 theta_j) K_j is positive definite. With the risks r_j of the terms (termRisk; rdof for
// the terms on one dof, unit rows; rten for the fixed-tendon servos, their moment rows; 0 for
// none), the sufficient condition tested is 4 (1 - margin) M - sum_{r_j > 0} r_j m_j m_j' > 0
// (every other term of D and K only helps): first with the armature bound of m_j' M^-1 m_j (no
// factorization), then by an L'DL factorization on M's sparsity (scratch: nM). For one term it is
// stock's own cap at the weight theta.
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



// weights of every term under mjENBL_POSWEIGHT: each term's from the table at the inverse
// inertia of its row (tableWeight; a moment row's: rowInvweight), the terms on one dof with their
// table lookup cached in cache (3 per dof, NULL for none). Where the weighted step fails the
// stability gate (posWeightsGate with margin mjPOSW_GATE: the coupled terms are at or beyond
// stock's cap together), the weights of the terms with a positive risk are raised together toward
// backward Euler, theta + a (1 - theta), by the least a on a grid of 1/mjPOSW_RAISE that passes
// the gate with the margin mjPOSW_RAISED (a bisection; a = 1 makes every risk negative). Dampings
// are clamped at 0, as the table's zeta (negative damping is outside what the gate covers).
// Terms: kdof, cdof from dofTerms, slope of every actuator; out: wdof (nv, 1 where no term), wten
// (nu, the weights of the servos with a moment row, 1 for any other actuator); scratch:
// 2*nv + 3*nu + nM
#define mjPOSW_GATE 1e-3     // margin of the gate: stock's cap
#define mjPOSW_RAISED 0.5    // margin of the raised weights: half of stock's cap
#define mjPOSW_RAISE 64      // grid of the raise
static void posWeights(const mjModel* m, mjData* d, const mjtNum* kdof, const mjtNum* slope,
                       ctrlState* controls, mjtNum* cache, mjtNum* wdof, mjtNum* wten,
                       mjtNum* scratch) {
  int nv = m->nv, nu = m->nu;
  mjtNum h = m->opt.timestep;
  const mjtNum* cdof = kdof + nv;
  mjtNum* cten = scratch;
  mjtNum* rdof = cten + nu;        // risks at the table's weights
  mjtNum* rten = rdof + nv;
  mjtNum* rdofa = rten + nu;       // risks at the raised weights
  mjtNum* rtena = rdofa + nv;
  mjtNum* S = rtena + nu;

  // terms on one dof, and their risks
  int risky = 0;
  for (int dof=0; dof<nv; dof++) {
    wdof[dof] = 1;
    rdof[dof] = 0;
    if (kdof[dof] > 0) {
      mjtNum c = mjMAX(cdof[dof], 0);
      mjtNum* entry = cache ? cache + 3*dof : NULL;
      // the spring of a ball or free joint's rotation: backward Euler (its stiffness away from
      // rest, which the gate's model leaves out, made ropes of them diverge at lower weights
      // where backward Euler did not)
      if (!isRotationDof(m, dof)) {
        wdof[dof] = tableWeight(h, kdof[dof], c, m->dof_invweight0[dof], entry);
      }
      rdof[dof] = termRisk(h, kdof[dof], c, wdof[dof]);
      risky |= rdof[dof] > 0;
    }
  }

  // servos with a moment row: actuator-space stiffness and damping, inverse inertia of the row
  // (S is free until the gate)
  for (int i=0; i<nu; i++) {
    wten[i] = 1;
    rten[i] = 0;
    if (slope[i] < 0 && d->actuator_posdof[i] < 0) {
      cten[i] = mjMAX(actuatorDamping(m, d, i, controls), 0);
      // a ball joint's servo: backward Euler, as its spring (ropes of them, released moving,
      // diverged at the table's weights, and at any weight down to 1/2, where backward Euler
      // did not)
      if (!rotationRow(m, i)) {
        wten[i] = tableWeight(h, -slope[i], cten[i], rowInvweight(m, d, i, S), NULL);
      }
      rten[i] = termRisk(h, -slope[i], cten[i], wten[i]);
      risky |= rten[i] > 0;
    }
  }

  // the stability gate, where a term is at risk
  if (!risky || posWeightsGate(m, d, mjPOSW_GATE, rdof, rten, S)) {
    return;
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
}



// accuracy weight under mjENBL_POSWEIGHT of the term of actuator id (objtype mjOBJ_ACTUATOR) or
// of the dof of scalar joint id (mjOBJ_JOINT); 1 for a term outside the scope of K, and for a
// ball or free joint (each of its dofs has its own weight)
mjtNum mjd_posWeight(const mjModel* m, mjData* d, int objtype, int id) {
  int nv = m->nv, nu = m->nu;
  ctrlState controls = CTRL_UNCHECKED;
  mjtNum weight = 1;
  mjMARKSTACK;
  mjtNum* slope = mj_stackAlloc(d, nu);
  mjtNum* kdof = mj_stackAlloc(d, 3*nv);     // kdof, cdof (dofTerms), wdof
  mjtNum* wten = mj_stackAlloc(d, nu);
  mjtNum* scratch = mj_stackAlloc(d, 2*nv + 3*nu + m->nM);
  dofTerms(m, d, &controls, slope, kdof);
  posWeights(m, d, kdof, slope, &controls, NULL, kdof + 2*nv, wten, scratch);

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



//------------------------------ position derivatives ----------------------------------------------

// what becomes of a term of K whose moment is on several branches
typedef enum {
  BRANCH_SOLVE = 0,               // in vec, left out of matD: the solve adds it
  BRANCH_SWAP,                    // the same, and its velocity term's part on the pattern of M
                                  // taken out of matD (the step's M - h qDeriv): the solve
                                  // applies the whole velocity term with it
  BRANCH_OMIT                     // out of K altogether: its update was singular
} branchMode;



// add sclK*k*P to matD (D sparsity) and sclKv*k*P*qvel to vec for P = m'*m, the moment row m of
// actuator i (on one chain or several branches, not one dof) and its stiffness k, and k to kact
// (NULL for none); returns 1 for a row on several branches, left out of matD as branch says, or
// out of K altogether with BRANCH_OMIT or a velocity term too large (kact stays 0, returns 0)
static int actuatorRowTerm(const mjModel* m, const mjData* d, int i, mjtNum k, mjtNum* matD,
                           mjtNum sclK, mjtNum* vec, mjtNum sclKv, mjtNum* kact,
                           branchMode branch) {
  const mjtNum *moment = d->actuator_moment + i*m->nv, *qvel = d->qvel;
  int leaf, chain = actuatorLeaf(m, i, &leaf);

  // on several branches: walked over every dof (leaf -1, as a row on no dof, whose moment is
  // zero), or left out: BRANCH_OMIT, or a velocity term too large to take back out of matD
  // (mjd_actuatorVelResolvable; kact stays 0, and mjd_actuatorPosScope reports it NONRESTORING)
  if (!chain) {
    if (branch==BRANCH_OMIT || !mjd_actuatorVelResolvable(m, d, i)) {
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
  // it: applied in the solve with the row's whole velocity term (mj_implicitPosCross), whose
  // part on the pattern (from qDeriv: M - h qDeriv holds -h dfdv P) is taken out of matD
  if (!chain) {
    if (matD && branch==BRANCH_SWAP) {
      addChainTerm(m, d, matD, moment, -1, m->opt.timestep, mjd_actuatorVel(m, d, i));
    }
    return 1;
  }
  if (matD) {
    addChainTerm(m, d, matD, moment, leaf, sclK, k);
  }
  return 0;
}



// add the term of stiffness k of actuator i on one dof: sclK*k*gear^2 to matD at the address diag
// of its dof's diagonal element, sclKv*k*gear^2*qvel to vec, k to kact (each NULL for none)
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



// mjd_actuator_pos under mjENBL_POSWEIGHT, for the servos with a moment row only: slopes, the
// restoring slope of each actuator (dofTerms), and wten, the weight of each servo with a moment
// row (posWeights); the servos on one dof are left to mjd_dof_pos, which weighs them together
// with their dof's spring; kact: -slope times its weight
static int mjd_actuator_rows(const mjModel* m, mjData* d, const mjtNum* slopes,
                             const mjtNum* wten, mjtNum* matD, mjtNum sclK, mjtNum* vec,
                             mjtNum sclKv, mjtNum* kact, branchMode branch) {
  int nbranch = 0;
  for (int i=0; i<m->nu; i++) {
    if (slopes[i] < 0 && d->actuator_posdof[i] < 0) {
      nbranch += actuatorRowTerm(m, d, i, -(slopes[i] * wten[i]), matD, sclK, vec, sclKv,
                                 kact, branch);
    }
  }
  return nbranch;
}



// add sclK*K to matD (D sparsity) and sclKv*K*qvel to vec for K = -d qfrc_actuator / dq, and
// the stiffness of each term added to kact (NULL for none): K += -slope * moment' * moment for
// each actuator in scope, the slope tested first (motors have none); none with actuation
// disabled; returns the number of terms whose moment is on several branches (branchMode;
// BRANCH_OMIT leaves them out, with kact 0: actuatorRowTerm)
static int mjd_actuator_pos(const mjModel* m, mjData* d, ctrlState* controls, mjtNum* matD,
                            mjtNum sclK, mjtNum* vec, mjtNum sclKv, mjtNum* kact,
                            branchMode branch) {
  int nbranch = 0;
  if (mjDISABLED(mjDSBL_ACTUATION)) {
    if (kact) {
      mju_zero(kact, m->nu);
    }
    return 0;
  }
  for (int i=0; i<m->nu; i++) {
    int dof = d->actuator_posdof[i], diag = d->actuator_posdiag[i];
    mjtNum slope, gain;

    // a servo of fixed gain and affine bias on one dof (actuator_posdiag, found by mj_resetData
    // with its structure's scope): its bias's slope and its force's scope, its dof's diagonal
    // element at that address
    if (diag >= 0) {
      termSlopes(m, d, i, mjBIAS_AFFINE, mjGAIN_FIXED, &slope, &gain);
      if (slope < 0 && actuatorScopeForce(m, d, i, slope)==mjPOSSCOPE_RESTORING) {
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



// add sclK*K to matD (D sparsity) and sclKv*K*qvel to vec for K = -d qfrc_passive / dq: the
// stiffness of every joint, diagonal: exact for hinges, slides and a free joint's translation, the
// small-angle term for rotations (ball, free); kspring (NULL for none): each spring's stiffness,
// set only if there is one; returns the number of springs added
static int mjd_passive_pos(const mjModel* m, const mjData* d,
                           mjtNum* matD, mjtNum sclK, mjtNum* vec, mjtNum sclKv,
                           mjtNum* kspring) {
  int nspring = 0;
  if (mjDISABLED(mjDSBL_PASSIVE)) {
    return 0;
  }
  for (int j=0; j<m->njnt; j++) {
    // most joints have no spring
    if (m->jnt_stiffness[j]==0 || jointPosScope(m, j)!=mjPOSSCOPE_RESTORING) {
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



// add sclK*K to matD (D sparsity) and sclKv*K*qvel to vec for the terms of K on one dof alone
// under mjENBL_POSWEIGHT: its joint servos and its spring, summed in kdof (dofTerms) and weighted
// together by weight (posWeights), one diagonal element per dof
static void mjd_dof_pos(const mjModel* m, const mjData* d, const mjtNum* kdof,
                        const mjtNum* weight, mjtNum* matD, mjtNum sclK, mjtNum* vec,
                        mjtNum sclKv) {
  for (int dof=0; dof<m->nv; dof++) {
    if (!(kdof[dof] > 0)) {
      continue;
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



// the stiffness of the terms of mjd_dof_pos, each with its dof's weight wdof: kact of the joint
// servos (-slope), kspring of the springs; returns the number of springs
static int mjd_dof_terms(const mjModel* m, const mjData* d, const mjtNum* slope,
                         const mjtNum* wdof, mjtNum* kact, mjtNum* kspring) {
  int nspring = 0;
  for (int i=0; i<m->nu && kact; i++) {
    int dof = d->actuator_posdof[i];
    if (slope[i] < 0 && dof >= 0) {
      kact[i] = -slope[i] * wdof[dof];
    }
  }
  for (int j=0; j<m->njnt && kspring && !mjDISABLED(mjDSBL_PASSIVE); j++) {
    if (m->jnt_stiffness[j] && jointPosScope(m, j)==mjPOSSCOPE_RESTORING) {
      nspring++;
      for (int dof=m->jnt_dofadr[j]; dof<m->jnt_dofadr[j]+jointDofs(m, j); dof++) {
        kspring[dof] = wdof[dof] * m->jnt_stiffness[j];
      }
    }
  }
  return nspring;
}



//------------------------------ main entry points -------------------------------------------------

// the terms of K (implicitPosTerms) into matD and vec, the stiffness of each in kact and kspring;
// branch: what becomes of the terms on several branches (branchMode)
static int implicitPosTerms(const mjModel* m, mjData* d, mjtNum* matD, mjtNum sclK,
                            mjtNum* vec, mjtNum sclKv, mjtNum* kact, mjtNum* kspring,
                            int* nspring, branchMode branch);

// add sclK*K to matD (D sparsity) and sclKv*K*qvel to vec, K = -d(qfrc_actuator+qfrc_passive)/dq
void mjd_implicitPos(const mjModel* m, mjData* d,
                     mjtNum* matD, mjtNum sclK, mjtNum* vec, mjtNum sclKv) {
  implicitPosTerms(m, d, matD, sclK, vec, sclKv, NULL, NULL, NULL, BRANCH_SOLVE);
}



// mjd_implicitPos for the step, and the stiffness of each term of K it added in kact (nu) and
// kspring (nv); returns the number of terms on several branches, left out of matD with the part of
// their velocity term that matD held (mj_implicitPosCross applies both)
int mj_implicitPosTerms(const mjModel* m, mjData* d, mjtNum* matD, mjtNum sclK,
                        mjtNum* vec, mjtNum sclKv, mjtNum* kact, mjtNum* kspring,
                        int* nspring) {
  return implicitPosTerms(m, d, matD, sclK, vec, sclKv, kact, kspring, nspring, BRANCH_SWAP);
}



// the step's matrix and right side for a solve outside mj_implicitSkip, with the terms of K on
// several branches left to the solve or, onpattern, left out
int mj_implicitPosStep(const mjModel* m, mjData* d, mjtNum* mat, mjtNum* rhs, mjtNum* kact,
                       mjtNum* kspring, int onpattern) {
  mjtNum h = m->opt.timestep;

  // M - h qDeriv and qfrc_smooth + qfrc_constraint, as mj_implicitSkip sets qLU and qfrc
  mj_setMSparse(m, d, mat, d->D_rownnz, d->D_rowadr, d->D_colind);
  mju_addToScl(mat, d->qDeriv, -h, m->nD);
  mju_add(rhs, d->qfrc_smooth, d->qfrc_constraint, m->nv);

  // the terms of K, those on several branches left to the solve or left out
  return implicitPosTerms(m, d, mat, h*h, rhs, -h, kact, kspring, NULL,
                          onpattern ? BRANCH_OMIT : BRANCH_SWAP);
}



static int implicitPosTerms(const mjModel* m, mjData* d, mjtNum* matD, mjtNum sclK,
                            mjtNum* vec, mjtNum sclKv, mjtNum* kact, mjtNum* kspring,
                            int* nspring, branchMode branch) {
  ctrlState controls = CTRL_UNCHECKED;  // their check (actuatorInput)
  int nbranch = 0;

  // unweighted: by force class (mjd_actuator_pos sets kact of every actuator)
  if (!mjENABLED(mjENBL_POSWEIGHT)) {
    nbranch = mjd_actuator_pos(m, d, &controls, matD, sclK, vec, sclKv, kact, branch);
    int n = mjd_passive_pos(m, d, matD, sclK, vec, sclKv, kspring);
    if (nspring) {
      *nspring = n;
    }
    return nbranch;
  }

  if (kact) {
    mju_zero(kact, m->nu);
  }
  if (kspring) {
    mju_zero(kspring, m->nv);
  }

  // weighted: the slopes found once, the terms on each dof summed, every term's weight (the
  // table's, cached per dof in d->dof_posweightcache, then the stability gate), each term added
  int nv = m->nv, nu = m->nu;
  mjMARKSTACK;
  mjtNum* slope = mj_stackAlloc(d, nu);
  mjtNum* kdof = mj_stackAlloc(d, 3*nv);     // kdof, cdof (dofTerms), wdof
  mjtNum* wten = mj_stackAlloc(d, nu);
  mjtNum* scratch = mj_stackAlloc(d, 2*nv + 3*nu + m->nM);
  int ntendon = dofTerms(m, d, &controls, slope, kdof);
  posWeights(m, d, kdof, slope, &controls, d->dof_posweightcache, kdof + 2*nv, wten, scratch);
  mjd_dof_pos(m, d, kdof, kdof + 2*nv, matD, sclK, vec, sclKv);
  int n = mjd_dof_terms(m, d, slope, kdof + 2*nv, kact, kspring);
  if (nspring) {
    *nspring = n;
  }
  if (ntendon) {
    nbranch = mjd_actuator_rows(m, d, slope, wten, matD, sclK, vec, sclKv, kact, branch);
  }
  mjFREESTACK;
  return nbranch;
}



//------------------------------ terms on several branches -----------------------------------------

// solve the dense n x n system A*x = b in place (A row-major, x in b) by Gaussian elimination with
// partial pivoting; 0 if a pivot is zero or not finite
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



void mj_implicitPosCrossMul(const mjModel* m, const mjData* d, mjtNum* res, const mjtNum* vec,
                            const mjtNum* kact, mjtNum scl) {
  int nv = m->nv;
  for (int i=0; i<m->nu; i++) {
    if (branchTerm(m, kact, i)) {
      const mjtNum* moment = d->actuator_moment + i*nv;
      mju_addToScl(res, moment, branchCoef(m, d, kact, i, scl) * mju_dot(moment, vec, nv), nv);
    }
  }
}



int mj_implicitPosCross(const mjModel* m, mjData* d, mjtNum* res, const mjtNum* LU,
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
        mju_warning("mj_implicitPosCross: singular update, terms on several branches left out");
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



void mj_implicitPosSolveOnPattern(const mjModel* m, mjData* d, mjtNum* qacc, mjtNum* kact,
                                  mjtNum* kspring) {
  int nv = m->nv;
  mjMARKSTACK;
  mjtNum* lu = mj_stackAlloc(d, m->nD);
  mjtNum* rhs = mj_stackAlloc(d, nv);
  int* scratch = (int*)mj_stackAlloc(d, nv);

  // the step's matrix and right side with the terms of K on the pattern of M, factorized in
  // scratch (qLU is kept), and the solve
  mj_implicitPosStep(m, d, lu, rhs, kact, kspring, 1);
  mju_factorLUSparse(lu, nv, scratch, d->D_rownnz, d->D_rowadr, d->D_colind);
  mju_solveLUSparse(qacc, lu, rhs, nv, d->D_rownnz, d->D_rowadr, d->D_colind);
  mjFREESTACK;
}
