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

#ifndef MUJOCO_SRC_ENGINE_ENGINE_POSSCOPE_H_
#define MUJOCO_SRC_ENGINE_ENGINE_POSSCOPE_H_

#include <math.h>

#include <mujoco/mjdata.h>
#include <mujoco/mjexport.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_derivative.h"
#include "engine/engine_macro.h"
#include "engine/engine_support.h"
#include "engine/engine_util_blas.h"
#include "engine/engine_util_misc.h"

#ifdef __cplusplus
extern "C" {
#endif

// scope of actuator i in K (mjtPosScope); its slope d force / d length in slope
MJAPI int mjd_actuatorPosScope(const mjModel* m, const mjData* d, int i, mjtNum* slope);

// scope of the spring of joint j in K (mjtPosScope)
MJAPI int mjd_jointPosScope(const mjModel* m, int j);

// why a case of mjtPosScope is in K or left out of it
MJAPI const char* mjd_posScopeReason(int scope);

// 1 if the moment of actuator i is on several branches
MJAPI int mjd_actuatorBranches(const mjModel* m, int i);

// input that multiplies the gain of actuator i in mj_fwdActuation
MJAPI mjtNum mjd_actuatorInput(const mjModel* m, const mjData* d, int i);

// slopes of actuator i's force in its length (slope[0]) and velocity (slope[1])
MJAPI int mjd_actuatorSlopes(const mjModel* m, const mjData* d, int i, mjtNum slope[2]);

// slopes of a muscle's force-length curve (times its gain) and passive curve in the length
mjtNum mjd_muscleGainLength(mjtNum len, mjtNum vel, const mjtNum lengthrange[2], mjtNum acc0,
                            const mjtNum prm[9]);
mjtNum mjd_muscleBiasLength(mjtNum len, const mjtNum lengthrange[2], mjtNum acc0,
                            const mjtNum prm[9]);

// set d->ten_posscope: each tendon's scope as a transmission
void mj_setTendonPosScope(const mjModel* m, mjData* d);

// set d->actuator_posdof, actuator_postrn, actuator_posdiag: each actuator's structure
void mj_setActuatorPosScope(const mjModel* m, mjData* d);

// deepest dof of the chain that holds actuator i's moment; 0 if on several branches
int mjd_actuatorLeaf(const mjModel* m, int i, int* leaf);

// 1 if a control is bad after clamping
int mjd_badControl(const mjModel* m, const mjData* d);

// 1 if h |d force / d velocity| of actuator i is within mjMAXVAL
int mjd_actuatorVelResolvable(const mjModel* m, const mjData* d, int i);

// the dof of actuator i on one hinge or slide dof, -1 otherwise
static inline int mjd_actuatorDof(const mjModel* m, int i) {
  int trn = m->actuator_trntype[i], id = m->actuator_trnid[2*i];
  if ((trn==mjTRN_JOINT || trn==mjTRN_JOINTINPARENT) &&
      (m->jnt_type[id]==mjJNT_HINGE || m->jnt_type[id]==mjJNT_SLIDE)) {
    return m->jnt_dofadr[id];
  }
  return -1;
}

// 1 if joint j is a hinge or a slide
static inline int isScalar(const mjModel* m, int j) {
  return m->jnt_type[j]==mjJNT_HINGE || m->jnt_type[j]==mjJNT_SLIDE;
}



// the number of dofs of joint j: 6 free, 3 ball, 1 hinge or slide
static inline int jointDofs(const mjModel* m, int j) {
  return m->jnt_type[j]==mjJNT_FREE ? 6 : m->jnt_type[j]==mjJNT_BALL ? 3 : 1;
}



static inline int rowFirst(const mjModel* m, int leaf) {
  return leaf >= 0 ? leaf : m->nv - 1;
}



static inline int rowNext(const mjModel* m, int leaf, int a) {
  return leaf >= 0 ? m->dof_parentid[a] : a - 1;
}



// the controls as mj_fwdActuation checks them, found on first use in a pass over the actuators
typedef enum {
  CTRL_UNCHECKED = -1,            // not yet checked
  CTRL_GOOD,                      // every control finite after clamping
  CTRL_BAD                        // one is bad after clamping: mj_fwdActuation zeroes them all
} ctrlState;



// input that multiplies the gain of actuator i; *controls: their check, done once
static inline mjtNum gainInput(const mjModel* m, const mjData* d, int i, ctrlState* controls) {
  // activation
  if (m->actuator_dyntype[i]!=mjDYN_NONE) {
    return d->act[i - (m->nu - m->na)];
  }

  // clamped ctrl, zero if any control is bad
  if (*controls==CTRL_UNCHECKED) {
    *controls = mjd_badControl(m, d) ? CTRL_BAD : CTRL_GOOD;
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



// slopes in the length of a bias and a gain of actuator i
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



// slope in length of a servo of fixed gain and affine bias on one dof (actuator_posdiag): its
// bias's
static inline mjtNum servoSlope(const mjModel* m, int i) {
  return m->actuator_biasprm[mjNBIAS*i + 1];
}



// velocity slope of a servo of fixed gain and affine bias on one dof (actuator_posdiag): its bias's
static inline mjtNum servoVel(const mjModel* m, int i) {
  return m->actuator_biasprm[mjNBIAS*i + 2];
}



// 1 if the force of actuator i has a closed form: neither its gain nor its bias is a user term
static inline int closedForm(const mjModel* m, int i) {
  return m->actuator_gaintype[i]!=mjGAIN_USER && m->actuator_biastype[i]!=mjBIAS_USER;
}



// d actuator_force / d actuator_length of actuator i
static inline mjtNum actuatorSlope(const mjModel* m, const mjData* d, int i,
                                   ctrlState* controls) {
  // slope of force = gain * input + bias
  mjtNum s, g;
  termSlopes(m, d, i, m->actuator_biastype[i], m->actuator_gaintype[i], &s, &g);
  if (g!=0) {
    s += g * gainInput(m, d, i, controls);
  }
  return s;
}



// scope of actuator i from its force and slope s
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



// return 1 if the servo of fixed gain and affine bias on one dof i (actuator_posdiag) contributes
// to K, with its slope: its bias's
static inline int servoRestoring(const mjModel* m, const mjData* d, int i, mjtNum* slope) {
  *slope = servoSlope(m, i);
  return *slope < 0 && actuatorScopeForce(m, d, i, *slope)==mjPOSSCOPE_RESTORING;
}



// return 1 if actuator i contributes to K, with its slope
static inline int actuatorRestoring(const mjModel* m, const mjData* d, int i, mjtNum* slope,
                                    ctrlState* controls) {
  // a servo on one dof (actuator_posdiag): servoRestoring
  if (d->actuator_posdiag[i] >= 0 && !mjDISABLED(mjDSBL_ACTUATION)) {
    return servoRestoring(m, d, i, slope);
  }
  *slope = actuatorSlope(m, d, i, controls);
  return *slope < 0 && actuatorScope(m, d, i, *slope)==mjPOSSCOPE_RESTORING;
}



// scope of the spring of joint j under mjENBL_IMPLICITPOS
static inline int springScope(const mjModel* m, int j) {
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



// address of element (r, c) of a CSR matrix with sorted column indices, -1 if absent
static inline int sparseAdr(const int* rownnz, const int* rowadr, const int* colind, int r, int c) {
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



// leaf of the chain of actuator i's moment row, -1 on several branches
static inline int rowLeaf(const mjModel* m, int i) {
  int leaf;
  return mjd_actuatorLeaf(m, i, &leaf) ? leaf : -1;
}


// d force / d velocity of actuator i, as a damping in actuator space
mjtNum mjd_actuatorDamping(const mjModel* m, const mjData* d, int i, ctrlState* controls);

#ifdef __cplusplus
}
#endif

#endif  // MUJOCO_SRC_ENGINE_ENGINE_POSSCOPE_H_
