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
#include "engine/engine_io.h"
#include "engine/engine_macro.h"
#include "engine/engine_util_blas.h"
#include "engine/engine_util_errmem.h"
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



// scope of tendon t: restoring if it can carry a term of K, a fixed tendon whose joints are hinges
// or slides, each listed once, on one kinematic chain (so that moment'*moment has the sparsity of
// M). A joint listed twice is out of scope: the length sums its coefficients, but the moment
// (mj_tendon) keeps the last one, so the force is not the gradient of a potential and K would not
// be its derivative.
static int tendonScope(const mjModel* m, int t) {
  int adr = m->tendon_adr[t], num = m->tendon_num[t];
  if (num==0) {
    return mjPOSSCOPE_TRANSMISSION;
  }
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



void mj_setTendonPosScope(const mjModel* m, mjData* d) {
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



// ctrl or act multiplying the gain of actuator i, as in mj_fwdActuation; *bad is ctrlBad, found
// on first use (-1 until then), so that a pass over all actuators is O(nu)
static mjtNum actuatorInput(const mjModel* m, const mjData* d, int i, int* bad) {
  // activation
  if (m->actuator_dyntype[i]!=mjDYN_NONE) {
    return d->act[i - (m->nu - m->na)];
  }

  // clamped ctrl, zero if any control is bad
  if (*bad < 0) {
    *bad = ctrlBad(m, d);
  }
  if (*bad) {
    return 0;
  }
  mjtNum ctrl = d->ctrl[i];
  if (!mjDISABLED(mjDSBL_CLAMPCTRL) && m->actuator_ctrllimited[i]) {
    ctrl = mju_clip(ctrl, m->actuator_ctrlrange[2*i], m->actuator_ctrlrange[2*i+1]);
  }
  return ctrl;
}



//------------------------------ scope -------------------------------------------------------------

// d actuator_force / d actuator_length of actuator i (affine, fixed or no gain and bias; *affine
// is 0 and the slope 0 for any other); bad: see actuatorInput
static mjtNum actuatorSlope(const mjModel* m, const mjData* d, int i, int* affine, int* bad) {
  int gaintype = m->actuator_gaintype[i], biastype = m->actuator_biastype[i];
  *affine = (gaintype==mjGAIN_FIXED || gaintype==mjGAIN_AFFINE) &&
            (biastype==mjBIAS_NONE || biastype==mjBIAS_AFFINE);
  if (!*affine) {
    return 0;
  }

  // slope of force = gain * input + bias
  mjtNum s = 0;
  if (biastype==mjBIAS_AFFINE) {
    s = m->actuator_biasprm[mjNBIAS*i + 1];
  }
  if (gaintype==mjGAIN_AFFINE && m->actuator_gainprm[mjNGAIN*i + 1]!=0) {
    s += m->actuator_gainprm[mjNGAIN*i + 1] * actuatorInput(m, d, i, bad);
  }
  return s;
}



// scope of actuator i under mjENBL_IMPLICITPOS, given its slope s and affine (actuatorSlope)
static int actuatorScope(const mjModel* m, const mjData* d, int i, int affine, mjtNum s) {
  // disabled actuation
  if (mjDISABLED(mjDSBL_ACTUATION)) {
    return mjPOSSCOPE_DISABLED;
  }

  // transmission: hinge or slide joint, or fixed tendon along one chain (model structure, found
  // once by mj_resetData)
  int id = m->actuator_trnid[2*i];
  switch (m->actuator_trntype[i]) {
  case mjTRN_JOINT:
  case mjTRN_JOINTINPARENT:
    if (!isScalar(m, id)) {
      return mjPOSSCOPE_TRANSMISSION;
    }
    break;

  case mjTRN_TENDON:
    if (d->ten_posscope[id]!=mjPOSSCOPE_RESTORING) {
      return d->ten_posscope[id];
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

  // sign of the slope: restoring only, finite only, and no stiffer than the factorization of
  // M + h^2 K can resolve (h^2 |slope| <= mjMAXVAL; a 1e300 gain left it singular)
  if (s==0) {
    return mjPOSSCOPE_ZERO;
  }
  if (!(s < 0) || !isfinite(s) || -s * m->opt.timestep * m->opt.timestep > mjMAXVAL) {
    return mjPOSSCOPE_NONRESTORING;
  }
  return mjPOSSCOPE_RESTORING;
}



// 1 if actuator i contributes to K, with its slope: the slope is tested first (a motor or a
// muscle has none, a negative gain is not restoring), the transmission and clamp only then
static int actuatorRestoring(const mjModel* m, const mjData* d, int i, mjtNum* slope, int* bad) {
  int affine;
  *slope = actuatorSlope(m, d, i, &affine, bad);
  return *slope < 0 && actuatorScope(m, d, i, affine, *slope)==mjPOSSCOPE_RESTORING;
}



int mjd_actuatorPosScope(const mjModel* m, const mjData* d, int i, mjtNum* slope) {
  int affine, bad = -1;
  mjtNum s = actuatorSlope(m, d, i, &affine, &bad);
  if (slope) {
    *slope = s;
  }
  return actuatorScope(m, d, i, affine, s);
}



// scope of the spring of joint j under mjENBL_IMPLICITPOS
static int jointPosScope(const mjModel* m, int j) {
  mjtNum k = m->jnt_stiffness[j];
  if (mjDISABLED(mjDSBL_PASSIVE)) {
    return mjPOSSCOPE_DISABLED;
  }
  if (!isScalar(m, j)) {
    return mjPOSSCOPE_TRANSMISSION;
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



// input that multiplies the gain of actuator i in mj_fwdActuation
mjtNum mjd_actuatorInput(const mjModel* m, const mjData* d, int i) {
  int bad = -1;
  return actuatorInput(m, d, i, &bad);
}



//------------------------------ accuracy weights (mjENBL_POSWEIGHT) ------------------------------

// Weight theta of one term of K, as a function of u = log10(h w_n) and zeta: the weighted scheme
// (matrix theta h^2 K, shift theta h K v) is, for one dof, stock implicit with damping
// kv + theta h kp. Each entry minimises the RMS error of the unit step response against the
// exact PD response (over max(20/(h w_n), 50) steps), with theta >= 1e-3 (spectral radius below
// 1) and, where theta < 1/2, (1 - 2 theta) (h w_n)^2 <= (4 + 4 zeta h w_n)/2, stable with a factor 2
// of margin on the inertia; then made non-decreasing in h w_n and raised to 1 (backward Euler)
// where the step error is not smooth in theta (h w_n >~ 4, aliasing). Generated and checked by
// python/study/posweight.py, which also draws the resulting accuracy.
#define mjPOSW_NU 39         // columns: u = -1.3, -1.2, ..., 2.5 (h w_n = 0.05 ... 316)
#define mjPOSW_U0 (-1.3)
#define mjPOSW_DU 0.1
#define mjPOSW_NZETA 11      // rows: zeta below
static const mjtNum posw_zeta[mjPOSW_NZETA] = {0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3};
static const mjtNum posw_theta[mjPOSW_NZETA][mjPOSW_NU] = {
    {0.0079, 0.0091, 0.0104, 0.0121, 0.0143, 0.0173, 0.0217, 0.0275, 0.0368, 0.0497, 0.0560,
     0.0682, 0.0967, 0.1312, 0.1715, 0.2177, 0.2756, 0.3415, 0.4000, 0.6319, 1.0000, 1.0000,
     1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000,
     1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},  // zeta = 0
    {0.0138, 0.0147, 0.0157, 0.0171, 0.0189, 0.0212, 0.0244, 0.0287, 0.0347, 0.0431, 0.0465,
     0.0544, 0.0722, 0.1030, 0.1499, 0.2091, 0.2767, 0.3256, 0.3842, 0.6038, 1.0000, 1.0000,
     1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000,
     1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},  // zeta = 0.05
    {0.0263, 0.0272, 0.0283, 0.0297, 0.0315, 0.0340, 0.0372, 0.0413, 0.0469, 0.0545, 0.0595,
     0.0710, 0.0911, 0.1226, 0.1680, 0.2269, 0.2922, 0.3313, 0.3684, 0.5801, 1.0000, 1.0000,
     1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000,
     1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},  // zeta = 0.1
    {0.0744, 0.0757, 0.0774, 0.0795, 0.0822, 0.0857, 0.0902, 0.0959, 0.1034, 0.1131, 0.1258,
     0.1430, 0.1662, 0.1973, 0.2379, 0.2870, 0.3352, 0.3567, 0.3653, 0.5508, 1.0000, 1.0000,
     1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000,
     1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},  // zeta = 0.2
    {0.1389, 0.1406, 0.1427, 0.1454, 0.1488, 0.1531, 0.1585, 0.1654, 0.1741, 0.1852, 0.1992,
     0.2171, 0.2396, 0.2677, 0.3017, 0.3395, 0.3730, 0.3859, 0.4007, 0.5406, 1.0000, 1.0000,
     1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000,
     1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},  // zeta = 0.3
    {0.2567, 0.2584, 0.2606, 0.2633, 0.2666, 0.2707, 0.2759, 0.2822, 0.2901, 0.2996, 0.3113,
     0.3253, 0.3421, 0.3617, 0.3839, 0.4065, 0.4248, 0.4345, 0.4561, 0.5430, 1.0000, 1.0000,
     1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000,
     1.0000, 1.0000, 1.0000, 1.0000, 1.0000, 1.0000},  // zeta = 0.5
    {0.3364, 0.3378, 0.3395, 0.3416, 0.3442, 0.3474, 0.3513, 0.3562, 0.3620, 0.3691, 0.3776,
     0.3877, 0.3996, 0.4133, 0.4283, 0.4433, 0.4559, 0.4670, 0.4901, 0.5494, 0.6431, 0.7397,
     0.8094, 0.8515, 0.8825, 0.9077, 0.9273, 0.9427, 0.9547, 0.9642, 0.9717, 0.9776, 0.9822,
     0.9859, 0.9888, 0.9911, 0.9929, 0.9944, 0.9956},  // zeta = 0.7
    {0.4035, 0.4044, 0.4055, 0.4069, 0.4086, 0.4107, 0.4133, 0.4164, 0.4202, 0.4248, 0.4303,
     0.4368, 0.4445, 0.4533, 0.4629, 0.4727, 0.4827, 0.4948, 0.5157, 0.5535, 0.6089, 0.6733,
     0.7362, 0.7907, 0.8349, 0.8699, 0.8973, 0.9188, 0.9358, 0.9491, 0.9597, 0.9681, 0.9747,
     0.9799, 0.9840, 0.9873, 0.9900, 0.9920, 0.9936},  // zeta = 1
    {0.4520, 0.4525, 0.4531, 0.4539, 0.4549, 0.4561, 0.4575, 0.4593, 0.4615, 0.4642, 0.4674,
     0.4713, 0.4759, 0.4812, 0.4873, 0.4942, 0.5025, 0.5135, 0.5293, 0.5521, 0.5833, 0.6227,
     0.6683, 0.7171, 0.7652, 0.8096, 0.8477, 0.8791, 0.9041, 0.9240, 0.9397, 0.9522, 0.9621,
     0.9699, 0.9761, 0.9810, 0.9849, 0.9880, 0.9905},  // zeta = 1.5
    {0.4718, 0.4722, 0.4726, 0.4731, 0.4737, 0.4746, 0.4756, 0.4768, 0.4783, 0.4802, 0.4825,
     0.4852, 0.4885, 0.4924, 0.4970, 0.5026, 0.5097, 0.5190, 0.5312, 0.5477, 0.5695, 0.5974,
     0.6316, 0.6714, 0.7148, 0.7594, 0.8022, 0.8405, 0.8727, 0.8989, 0.9198, 0.9363, 0.9495,
     0.9599, 0.9682, 0.9747, 0.9799, 0.9841, 0.9873},  // zeta = 2
    {0.4865, 0.4867, 0.4870, 0.4873, 0.4877, 0.4882, 0.4888, 0.4896, 0.4905, 0.4917, 0.4936,
     0.4955, 0.4977, 0.5003, 0.5036, 0.5077, 0.5130, 0.5196, 0.5281, 0.5390, 0.5529, 0.5707,
     0.5931, 0.6206, 0.6534, 0.6909, 0.7317, 0.7736, 0.8138, 0.8498, 0.8801, 0.9047, 0.9243,
     0.9399, 0.9523, 0.9621, 0.9699, 0.9761, 0.9810},  // zeta = 3
};



// theta of the table at (h w_n)^2 = hw2 >= 0 and zeta >= 0, both finite: bilinear in
// (log10(h w_n), zeta), clamped to the table (hw2 = 0: the first column)
static mjtNum posWeightTable(mjtNum hw2, mjtNum zeta) {
  // column: log10(h w_n) = 0.5 log10(e) log((h w_n)^2) on the table's grid
  mjtNum u = hw2 > 0 ? (0.21714724095162590 * mju_log(hw2) - mjPOSW_U0) / mjPOSW_DU : 0;
  u = mjMAX(0, mjMIN(u, mjPOSW_NU - 1));
  int i = mjMIN((int)u, mjPOSW_NU - 2);
  mjtNum fu = u - i;

  // row: zeta, searched from the top (stiff springs are often overdamped)
  zeta = mjMAX(0, mjMIN(zeta, posw_zeta[mjPOSW_NZETA - 1]));
  int j = mjPOSW_NZETA - 2;
  while (j > 0 && zeta < posw_zeta[j]) {
    j--;
  }
  mjtNum fz = (zeta - posw_zeta[j]) / (posw_zeta[j+1] - posw_zeta[j]);

  const mjtNum* r0 = posw_theta[j];
  const mjtNum* r1 = posw_theta[j+1];
  return (1 - fz) * ((1 - fu) * r0[i] + fu * r0[i+1]) + fz * ((1 - fu) * r1[i] + fu * r1[i+1]);
}



// inverse inertia m' M^-1 m of a moment row m whose nonzeros lie on the chain from dof `deep` to
// the root (a transmission in scope), at the current configuration: w = L^-T m along the chain
// with the factorization L'DL of M (qLD, as mj_solveLD), then the sum of w^2 / D. The chain's
// entries are kept by depth in scratch (2*nv), so that each row of L is a contiguous update.
static mjtNum chainInvWeight(const mjModel* m, const mjData* d, const mjtNum* moment, int deep,
                             mjtNum* scratch) {
  mjtNum* w = scratch;
  mjtNum* dinv = scratch + m->nv;

  // gather the chain, deepest first
  int len = 0;
  for (int i=deep; i>=0; i=m->dof_parentid[i]) {
    w[len] = moment ? moment[i] : (i==deep);
    dinv[len++] = d->qLDiagInv[i];
  }

  // w <- L^-T w: row i of L holds i's ancestors in chain order
  int a = 0;
  for (int i=deep; i>=0; i=m->dof_parentid[i], a++) {
    mjtNum wa = w[a];
    if (m->dof_simplenum[i] || wa==0) {
      continue;
    }
    const mjtNum* L = d->qLD + m->dof_Madr[i] + 1;
    for (int k=a+1; k<len; k++) {
      w[k] -= L[k-a-1] * wa;
    }
  }

  // w' D^-1 w
  mjtNum invweight = 0;
  for (int k=0; k<len; k++) {
    invweight += w[k] * w[k] * dinv[k];
  }
  return invweight;
}



// smallest weight with which a term of stiffness k > 0, damping c and inverse inertia invweight
// keeps the table's stability margin, (1 - 2 theta) (h w_n)^2 <= (4 + 4 zeta h w_n)/2; at most
// 1/2 and non-decreasing in invweight (-inf at 0, finite at inf)
static mjtNum posWeightFloor(mjtNum h, mjtNum k, mjtNum c, mjtNum invweight) {
  return 0.5 - 1 / (h * h * k * invweight) - 0.5 * c / (h * k);
}



// upper bound of m' M^-1 m for a moment row m (NULL: unit) with nonzeros on the dofs of the
// scalar joints jnt[0..n-1]: M >= diag(armature), so m' M^-1 m <= sum m_i^2 / armature_i;
// mjMAXVAL where a dof has no armature
static mjtNum armatureBound(const mjModel* m, const mjtNum* moment, const int* jnt, int n) {
  mjtNum bound = 0;
  for (int a=0; a<n; a++) {
    int dof = m->jnt_dofadr[jnt[a]];
    if (!(m->dof_armature[dof] > 0)) {
      return mjMAXVAL;
    }
    mjtNum mom = moment ? moment[dof] : 1;
    bound += mom * mom / m->dof_armature[dof];
  }
  return bound;
}



// table weight of a term of stiffness k > 0 and damping c >= 0 at the model's inverse inertia
// (invweight0, at qpos0: a model constant, as the constraint solver's regularization); 1
// (backward Euler) where (h w_n)^2 or zeta is not finite or invweight0 not positive (an
// underflow of (h w_n)^2 to 0 reads the table's first column). *ratio: the stability floor
// (posWeightFloor) exceeds theta where the current inverse inertia exceeds ratio * invweight0.
// cache (4 numbers, NULL for none): the (h w_n)^2, zeta, theta and ratio of the last lookup, found
// again only when (h w_n)^2 or zeta change; the weight is the same with or without it
static mjtNum posWeight(mjtNum h, mjtNum k, mjtNum c, mjtNum invweight0, mjtNum* cache,
                        mjtNum* ratio) {
  mjtNum hw2 = h * h * k * invweight0;  // (h w_n)^2 at qpos0
  mjtNum zeta = 0.5 * c * mju_sqrt(invweight0 / k);

  // the same term as the last lookup (never a zeroed cache: hw2 > 0)
  if (cache && hw2 > 0 && cache[0]==hw2 && cache[1]==zeta) {
    *ratio = cache[3];
    return cache[2];
  }

  // not finite: backward Euler, above every floor
  if (!isfinite(hw2) || !isfinite(zeta) || !(invweight0 > 0)) {
    *ratio = INFINITY;
    return 1;
  }

  // the table, and the ratio: floor > theta iff 1 / (hw2 ratio) < 1/2 - theta - zeta / h w_n
  mjtNum theta = posWeightTable(hw2, zeta);
  mjtNum margin = 0.5 - theta - zeta / mju_sqrt(hw2);
  *ratio = margin > 0 ? 1 / (hw2 * margin) : INFINITY;
  if (cache) {
    cache[0] = hw2;
    cache[1] = zeta;
    cache[2] = theta;
    cache[3] = *ratio;
  }
  return theta;
}



// weight of a term: its table weight theta (posWeight), raised to the floor at the current
// configuration where the bound on its inverse inertia exceeds ratio * invweight0; the current
// inverse inertia (chain of dof `deep`, moment NULL for a unit moment on it) is computed only then
static mjtNum termWeight(const mjModel* m, const mjData* d, mjtNum theta, mjtNum ratio,
                         mjtNum k, mjtNum c, mjtNum invweight0, mjtNum bound,
                         const mjtNum* moment, int deep, mjtNum* scratch) {
  if (bound > ratio * invweight0) {
    mjtNum invweight = chainInvWeight(m, d, moment, deep, scratch);
    theta = mjMAX(theta, posWeightFloor(m->opt.timestep, k, c, invweight));
  }
  return theta;
}



// damping of actuator i in actuator space: -d force / d velocity from the bias and, for an affine
// gain, the gain's velocity term at the current input
static mjtNum actuatorDamping(const mjModel* m, const mjData* d, int i, int* bad) {
  const mjtNum* gainprm = m->actuator_gainprm + mjNGAIN*i;
  const mjtNum* biasprm = m->actuator_biasprm + mjNBIAS*i;
  mjtNum c = 0;
  if (m->actuator_biastype[i]==mjBIAS_AFFINE) {
    c -= biasprm[2];
  }
  if (m->actuator_gaintype[i]==mjGAIN_AFFINE && gainprm[2]!=0) {
    c -= gainprm[2] * actuatorInput(m, d, i, bad);
  }
  return c;
}



int mjd_actuatorSlopes(const mjModel* m, const mjData* d, int i, mjtNum slope[2]) {
  int affine, bad = -1;
  slope[0] = actuatorSlope(m, d, i, &affine, &bad);
  slope[1] = affine ? -actuatorDamping(m, d, i, &bad) : 0;
  return affine;
}



// weight of the term of actuator i on a fixed tendon: actuator-space stiffness -slope and
// damping, inverse inertia m' M^-1 m along the tendon's chain (invweight0 through the gear)
static mjtNum tendonWeight(const mjModel* m, const mjData* d, int i, mjtNum slope, int* bad,
                           mjtNum* scratch) {
  const mjtNum* moment = d->actuator_moment + i*m->nv;
  int id = m->actuator_trnid[2*i];
  int adr = m->tendon_adr[id], num = m->tendon_num[id];
  int deep = -1;
  for (int a=adr; a<adr+num; a++) {
    deep = mjMAX(deep, m->jnt_dofadr[m->wrap_objid[a]]);
  }
  mjtNum gear = m->actuator_gear[6*i];
  mjtNum k = -slope, c = mjMAX(actuatorDamping(m, d, i, bad), 0);
  mjtNum invweight0 = gear * gear * m->tendon_invweight0[id], ratio = 0;
  mjtNum theta = posWeight(m->opt.timestep, k, c, invweight0, NULL, &ratio);
  return termWeight(m, d, theta, ratio, k, c, invweight0,
                    armatureBound(m, moment, m->wrap_objid + adr, num), moment, deep, scratch);
}



// the restoring slope of every actuator (actuatorRestoring; 0 for one that adds nothing to K),
// and the terms of K on one dof alone, in joint space, for every dof: stiffness kdof (servos with
// a joint transmission, -slope gear^2, and the joint's spring) and damping cdof (their velocity
// slopes times gear^2, and the joint's damping); kdof is 0 where no such term is in scope;
// returns the number of fixed-tendon servos with a restoring slope; kdof and cdof are one array
// of 2*nv (cdof = kdof + nv)
static int dofTerms(const mjModel* m, const mjData* d, int* bad, mjtNum* slope, mjtNum* kdof) {
  int nv = m->nv, ntendon = 0;
  mjtNum* cdof = kdof + nv;
  mju_zero(kdof, 2*nv);

  // servos on one joint; fixed-tendon servos counted
  for (int i=0; i<m->nu; i++) {
    if (!actuatorRestoring(m, d, i, slope + i, bad)) {
      slope[i] = 0;
      continue;
    }
    if (m->actuator_trntype[i]==mjTRN_TENDON) {
      ntendon++;
      continue;
    }
    int dof = m->jnt_dofadr[m->actuator_trnid[2*i]];
    mjtNum gear = d->actuator_moment[i*nv + dof];
    kdof[dof] -= slope[i] * gear * gear;
    cdof[dof] += actuatorDamping(m, d, i, bad) * gear * gear;
  }

  // springs and joint damping
  for (int j=0; j<m->njnt && !mjDISABLED(mjDSBL_PASSIVE); j++) {
    if (isScalar(m, j)) {
      int dof = m->jnt_dofadr[j];
      cdof[dof] += m->dof_damping[dof];
      if (jointPosScope(m, j)==mjPOSSCOPE_RESTORING) {
        kdof[dof] += m->jnt_stiffness[j];
      }
    }
  }
  return ntendon;
}



// weight of the terms on each dof alone (kdof, cdof: dofTerms), 1 where there are none; cache: 4
// numbers per dof (posWeight), NULL for none; scratch: 2*nv
static void dofWeights(const mjModel* m, const mjData* d, const mjtNum* kdof, const mjtNum* cdof,
                       mjtNum* cache, mjtNum* weight, mjtNum* scratch) {
  int nv = m->nv;
  for (int dof=0; dof<nv; dof++) {
    if (!(kdof[dof] > 0)) {
      weight[dof] = 1;
      continue;
    }

    // table weight, then the floor where the armature bound leaves it in question
    int jnt = m->dof_jntid[dof];
    mjtNum k = kdof[dof], c = mjMAX(cdof[dof], 0), invweight0 = m->dof_invweight0[dof];
    mjtNum ratio = 0;  // set by posWeight; 0 would only check the floor every time
    mjtNum theta = posWeight(m->opt.timestep, k, c, invweight0, cache ? cache+4*dof : NULL, &ratio);
    weight[dof] = termWeight(m, d, theta, ratio, k, c, invweight0,
                             armatureBound(m, NULL, &jnt, 1), NULL, dof, scratch);
  }
}



// accuracy weight under mjENBL_POSWEIGHT of the term of actuator id (objtype mjOBJ_ACTUATOR) or
// of the dof of scalar joint id (mjOBJ_JOINT); 1 for a term outside the scope of K
mjtNum mjd_posWeight(const mjModel* m, mjData* d, int objtype, int id) {
  int nv = m->nv;
  mjtNum weight = 1;
  mjMARKSTACK;
  mjtNum* scratch = mj_stackAlloc(d, 2*nv);

  // the dof whose term is asked for, if it is a term on one dof
  int dof = -1, bad = -1;
  if (objtype==mjOBJ_ACTUATOR && id>=0 && id<m->nu) {
    mjtNum slope;
    if (actuatorRestoring(m, d, id, &slope, &bad)) {
      if (m->actuator_trntype[id]==mjTRN_TENDON) {
        weight = tendonWeight(m, d, id, slope, &bad, scratch);
      } else {
        dof = m->jnt_dofadr[m->actuator_trnid[2*id]];
      }
    }
  } else if (objtype==mjOBJ_JOINT && id>=0 && id<m->njnt && isScalar(m, id)) {
    dof = m->jnt_dofadr[id];
  }

  // a term on one dof: all of that dof's
  if (dof>=0) {
    mjtNum* slope = mj_stackAlloc(d, m->nu);
    mjtNum* terms = mj_stackAlloc(d, 3*nv);  // kdof, cdof, dofweight
    dofTerms(m, d, &bad, slope, terms);
    dofWeights(m, d, terms, terms + nv, NULL, terms + 2*nv, scratch);
    weight = terms[2*nv + dof];
  }

  mjFREESTACK;
  return weight;
}



//------------------------------ position derivatives ----------------------------------------------

// add sclK*K to matD (D sparsity) and sclKv*K*qvel to vec for K = -d qfrc_actuator / dq;
// slope: dofTerms, NULL to find each here; weighted (mjENBL_POSWEIGHT): each fixed-tendon
// servo is weighted on its own, and the servos on one joint are left to mjd_dof_pos
static void mjd_actuator_pos(const mjModel* m, mjData* d, const mjtNum* slopes, int weighted,
                             int* bad, mjtNum* matD, mjtNum sclK, mjtNum* vec, mjtNum sclKv) {
  int nv = m->nv;
  const mjtNum* qvel = d->qvel;

  // weighted: scratch for the tendon servos' weights
  mjMARKSTACK;
  mjtNum* scratch = weighted ? mj_stackAlloc(d, 2*nv) : NULL;

  // K += -slope * moment' * moment
  for (int i=0; i<m->nu; i++) {
    // restoring slope and scope, the slope tested first (motors have none)
    mjtNum slope;
    if (slopes) {
      slope = slopes[i];
      if (!(slope < 0)) {
        continue;
      }
    } else if (!actuatorRestoring(m, d, i, &slope, bad)) {
      continue;
    }
    const mjtNum* moment = d->actuator_moment + i*nv;
    int id = m->actuator_trnid[2*i];

    // joint transmission: one diagonal element
    if (m->actuator_trntype[i]!=mjTRN_TENDON) {
      if (weighted) {
        continue;
      }
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

    // accuracy weight: scales the term in the matrix and the shift alike
    if (weighted) {
      slope *= tendonWeight(m, d, i, slope, bad, scratch);
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

  mjFREESTACK;
}



// add sclK*K to matD (D sparsity) and sclKv*K*qvel to vec for K = -d qfrc_passive / dq: the
// stiffness of hinges and slides, diagonal
static void mjd_passive_pos(const mjModel* m, const mjData* d,
                            mjtNum* matD, mjtNum sclK, mjtNum* vec, mjtNum sclKv) {
  for (int j=0; j<m->njnt && !mjDISABLED(mjDSBL_PASSIVE); j++) {
    if (jointPosScope(m, j)!=mjPOSSCOPE_RESTORING) {
      continue;
    }
    int dof = m->jnt_dofadr[j];
    mjtNum stiffness = m->jnt_stiffness[j];
    if (matD) {
      addD(d, matD, dof, dof, sclK * stiffness);
    }
    if (vec) {
      vec[dof] += sclKv * (stiffness * d->qvel[dof]);
    }
  }
}



// add sclK*K to matD (D sparsity) and sclKv*K*qvel to vec for the terms of K on one dof alone
// under mjENBL_POSWEIGHT: its joint servos and its spring, summed in kdof (dofTerms) and weighted
// together by weight (dofWeights), one diagonal element per dof
static void mjd_dof_pos(const mjModel* m, const mjData* d, const mjtNum* kdof,
                        const mjtNum* weight, mjtNum* matD, mjtNum sclK, mjtNum* vec,
                        mjtNum sclKv) {
  for (int dof=0; dof<m->nv; dof++) {
    if (!(kdof[dof] > 0)) {
      continue;
    }
    mjtNum k = weight[dof] * kdof[dof];
    if (matD) {
      addD(d, matD, dof, dof, sclK * k);
    }
    if (vec) {
      vec[dof] += sclKv * (k * d->qvel[dof]);
    }
  }
}



//------------------------------ main entry point --------------------------------------------------

// add sclK*K to matD (D sparsity) and sclKv*K*qvel to vec, K = -d(qfrc_actuator+qfrc_passive)/dq
void mjd_implicitPos(const mjModel* m, mjData* d,
                     mjtNum* matD, mjtNum sclK, mjtNum* vec, mjtNum sclKv) {
  int bad = -1;  // controls bad (actuatorInput), found on first use

  // unweighted: by force class
  if (!mjENABLED(mjENBL_POSWEIGHT)) {
    mjd_actuator_pos(m, d, NULL, 0, &bad, matD, sclK, vec, sclKv);
    mjd_passive_pos(m, d, matD, sclK, vec, sclKv);
    return;
  }

  // weighted: the slopes found once, the terms on each dof with one weight (its table value
  // cached in d->qposweight), then each fixed-tendon servo with its own
  int nv = m->nv;
  mjMARKSTACK;
  mjtNum* slope = mj_stackAlloc(d, m->nu + 5*nv);
  mjtNum* kdof = slope + m->nu;       // kdof, cdof (dofTerms)
  mjtNum* weight = kdof + 2*nv;
  mjtNum* scratch = weight + nv;      // 2*nv for dofWeights
  int ntendon = dofTerms(m, d, &bad, slope, kdof);
  dofWeights(m, d, kdof, kdof + nv, d->qposweight, weight, scratch);
  mjd_dof_pos(m, d, kdof, weight, matD, sclK, vec, sclKv);
  if (ntendon) {
    mjd_actuator_pos(m, d, slope, 1, &bad, matD, sclK, vec, sclKv);
  }
  mjFREESTACK;
}
