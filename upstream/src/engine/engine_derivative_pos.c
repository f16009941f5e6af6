// Copyright 2026 DeepMind Technologies Limited
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
#include <mujoco/mjmacro.h>
#include <mujoco/mjmodel.h>
#include "engine/engine_macro.h"
#include "engine/engine_memory.h"
#include "engine/engine_sleep.h"
#include "engine/engine_support.h"
#include "engine/engine_util_blas.h"
#include "engine/engine_util_errmem.h"
#include "engine/engine_util_misc.h"

//------------------------------ utilities ---------------------------------------------------------

// the controls as mj_fwdActuation checks them, found on first use in a pass over the actuators
typedef enum {
  CTRL_UNCHECKED = -1,   // not yet checked
  CTRL_GOOD,             // every control finite after clamping
  CTRL_BAD               // one is bad after clamping: mj_fwdActuation zeroes them all
} ctrlState;



// what a pass over the actuators finds once, on first use, so that the pass is O(nactuator):
// the controls' check (actuatorInput) and the total actuator force on each tendon (isClamped),
// allocated on the stack frame that the function running the pass marks and frees
typedef struct {
  mjData* d;             // stack for tendon_force
  ctrlState controls;    // CTRL_UNCHECKED until found
  mjtNum* tendon_force;  // total actuator force per tendon (ntendon), NULL until found
} posPass;



// 1 if joint j is a hinge or a slide
static int isScalar(const mjModel* m, int j) {
  return m->jnt_type[j] == mjJNT_HINGE || m->jnt_type[j] == mjJNT_SLIDE;
}



// 1 if dof a is dof b or one of its ancestors: dofs are numbered depth-first, so the subtree of
// a runs from a to its last descendant, the last column of row a of the D pattern
static int isAncestor(const mjModel* m, int a, int b) {
  return a <= b && b <= m->D_colind[m->D_rowadr[a] + m->D_rownnz[a] - 1];
}



// scope of tendon t, mjPOSSCOPE_RESTORING if in scope: a fixed tendon whose joints are all
// hinges or slides (else TRANSMISSION), on one kinematic chain (else BRANCH): every dof is the
// deepest one (the largest index) or one of its ancestors
static int tendonScope(const mjModel* m, int t) {
  int adr = m->tendon_adr[t], num = m->tendon_num[t];
  if (num == 0) {
    return mjPOSSCOPE_TRANSMISSION;
  }

  // joints only, hinges and slides only; deepest dof
  int deep = -1;
  for (int a=adr; a < adr+num; a++) {
    int j = m->wrap_objid[a];
    if (m->wrap_type[a] != mjWRAP_JOINT || !isScalar(m, j)) {
      return mjPOSSCOPE_TRANSMISSION;
    }
    deep = mjMAX(deep, m->jnt_dofadr[j]);
  }

  // every dof on the path from the root to the deepest
  for (int a=adr; a < adr+num; a++) {
    if (!isAncestor(m, m->jnt_dofadr[m->wrap_objid[a]], deep)) {
      return mjPOSSCOPE_BRANCH;
    }
  }
  return mjPOSSCOPE_RESTORING;
}



// scope of the transmission of site actuator i, mjPOSSCOPE_RESTORING if in scope: translational
// gear, a refsite that is fixed or moved only by ancestors of the site's dofs, hinges and slides
// between them; the moment is then the exact derivative of the length, on one kinematic chain
static int siteScope(const mjModel* m, int i) {
  int id = m->actuator_trnid[2*i], refid = m->actuator_trnid[2*i+1];
  if (refid < 0 || !mju_isZero(m->actuator_gear + 6*m->actuator_outadr[i] + 3, 3)) {
    return mjPOSSCOPE_TRANSMISSION;
  }

  // last dof of the weld bodies of site and refsite, -1 if none
  int b0 = m->body_weldid[m->site_bodyid[id]];
  int b1 = m->body_weldid[m->site_bodyid[refid]];
  int dof0 = m->body_dofnum[b0] ? m->body_dofadr[b0] + m->body_dofnum[b0] - 1 : -1;
  int dof1 = m->body_dofnum[b1] ? m->body_dofadr[b1] + m->body_dofnum[b1] - 1 : -1;
  if (dof1 >= 0 && (dof0 < 0 || !isAncestor(m, dof1, dof0))) {
    return mjPOSSCOPE_BRANCH;
  }

  // dofs between refsite and site
  for (int dof=dof0; dof > dof1; dof = m->dof_parentid[dof]) {
    if (!isScalar(m, m->dof_jntid[dof])) {
      return mjPOSSCOPE_TRANSMISSION;
    }
  }
  return mjPOSSCOPE_RESTORING;
}



// 1 if all pairs of the moment row of actuator i are in the lower M pattern, which keeps only
// the diagonal in the rows of simple dofs: every dof but the first must not be simple
static int isLowerPattern(const mjModel* m, const mjData* d, int i) {
  int oadr = m->actuator_outadr[i];
  int nnz = d->moment_rownnz[oadr];
  const int* ind = d->moment_colind + d->moment_rowadr[oadr];
  int first = nnz ? ind[0] : -1;
  for (int a=1; a < nnz; a++) {
    first = mjMIN(first, ind[a]);
  }
  for (int a=0; a < nnz; a++) {
    if (ind[a] != first && m->dof_simplenum[ind[a]]) {
      return 0;
    }
  }
  return 1;
}



// add val to element (r, c) of a CSR matrix with sorted column indices; lower: store c <= r
// only; every element of K in scope is in the pattern of M, so a miss is an error, not a drop
static void addSparse(mjtNum* mat, const int* rownnz, const int* rowadr, const int* colind,
                      int lower, int r, int c, mjtNum val) {
  if (lower && c > r) {
    return;
  }

  // binary search for c in row r
  int lo = rowadr[r], hi = rowadr[r] + rownnz[r] - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (colind[mid] == c) {
      mat[mid] += val;
      return;
    }
    if (colind[mid] < c) {
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  mjERROR("column %d of K is outside the sparsity pattern of row %d", c, r);
}



// 1 if a control is bad after clamping: mj_fwdActuation then zeroes all of them
static int ctrlBad(const mjModel* m, const mjData* d) {
  for (int k=0; k < m->nu; k++) {
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
  int actnum = m->actuator_actnum[i];

  // activation: last one, next one if actearly
  if (actnum) {
    int adr = m->actuator_actadr[i] + actnum - 1;
    if (m->actuator_actearly[i]) {
      return mj_nextActivation(m, d, i, adr, d->act_dot[adr]);
    }
    return d->act[adr];
  }

  // empty input block
  if (!m->actuator_ctrlnum[i]) {
    return 0;
  }

  // all controls are zeroed if any is bad
  if (*controls == CTRL_UNCHECKED) {
    *controls = ctrlBad(m, d) ? CTRL_BAD : CTRL_GOOD;
  }
  if (*controls == CTRL_BAD) {
    return 0;
  }

  // clamped ctrl
  int uadr = m->actuator_ctrladr[i];
  mjtNum ctrl = d->ctrl[uadr];
  if (!mjDISABLED(mjDSBL_CLAMPCTRL) && m->actuator_ctrllimited[uadr]) {
    ctrl = mju_clip(ctrl, m->actuator_ctrlrange[2*uadr], m->actuator_ctrlrange[2*uadr+1]);
  }
  return ctrl;
}



// total actuator force on each tendon, as mj_fwdActuation sums it for tendon actfrcrange
static void tendonForce(const mjModel* m, const mjData* d, mjtNum* force) {
  mju_zero(force, m->ntendon);
  for (int k=0; k < m->nactuator; k++) {
    if (m->actuator_trntype[k] == mjTRN_TENDON) {
      force[m->actuator_trnid[2*k]] += d->actuator_force[m->actuator_outadr[k]];
    }
  }
}



// 1 if the force of actuator i is on one of its clamps, after mj_fwdActuation
static int isClamped(const mjModel* m, const mjData* d, int i, posPass* pass) {
  int oadr = m->actuator_outadr[i];

  // actuator forcerange
  if (m->actuator_forcelimited[i]) {
    mjtNum force = d->actuator_force[oadr];
    if (force <= m->actuator_forcerange[2*i] || force >= m->actuator_forcerange[2*i+1]) {
      return 1;
    }
  }

  // tendon actfrcrange, on the total force of the tendon's actuators; mj_fwdActuation scales
  // the forces onto the bound, so their sum meets it only up to rounding
  if (m->actuator_trntype[i] == mjTRN_TENDON) {
    int t = m->actuator_trnid[2*i];
    if (m->tendon_actfrclimited[t]) {
      if (!pass->tendon_force) {
        pass->tendon_force = mjSTACKALLOC(pass->d, m->ntendon, mjtNum);
        tendonForce(m, d, pass->tendon_force);
      }
      mjtNum total = pass->tendon_force[t];
      const mjtNum* range = m->tendon_actfrcrange + 2*t;
      mjtNum tol = 1e-12 * mju_max(mju_abs(range[0]), mju_abs(range[1]));
      if (total <= range[0] + tol || total >= range[1] - tol) {
        return 1;
      }
    }
  }

  // joint actfrcrange, on qfrc_actuator of every dof the actuator moves
  int nnz = d->moment_rownnz[oadr], adr = d->moment_rowadr[oadr];
  for (int k=0; k < nnz; k++) {
    int dof = d->moment_colind[adr+k];
    int j = m->dof_jntid[dof];
    if (m->jnt_actfrclimited[j]) {
      mjtNum qfrc = d->qfrc_actuator[dof];
      if (qfrc <= m->jnt_actfrcrange[2*j] || qfrc >= m->jnt_actfrcrange[2*j+1]) {
        return 1;
      }
    }
  }
  return 0;
}



//------------------------------ scope -------------------------------------------------------------

// scope of the transmission of actuator i, mjPOSSCOPE_RESTORING if in scope: one output, on a
// hinge or slide joint, a fixed tendon along one chain, or a site as in siteScope; multi-dof
// moment rows must also be in the lower M pattern
static int transmissionScope(const mjModel* m, const mjData* d, int i) {
  int id = m->actuator_trnid[2*i];
  if (m->actuator_outnum[i] != 1) {
    return mjPOSSCOPE_TRANSMISSION;
  }

  switch ((mjtTrn) m->actuator_trntype[i]) {
  case mjTRN_JOINT:
  case mjTRN_JOINTINPARENT:
    return isScalar(m, id) ? mjPOSSCOPE_RESTORING : mjPOSSCOPE_TRANSMISSION;

  case mjTRN_TENDON:
    {
      int scope = tendonScope(m, id);
      if (scope != mjPOSSCOPE_RESTORING) {
        return scope;
      }
    }
    break;

  case mjTRN_SITE:
    {
      int scope = siteScope(m, i);
      if (scope != mjPOSSCOPE_RESTORING) {
        return scope;
      }
    }
    break;

  default:
    return mjPOSSCOPE_TRANSMISSION;
  }

  // several dofs: every pair must be in the lower M pattern (qH of implicitfast)
  return isLowerPattern(m, d, i) ? mjPOSSCOPE_RESTORING : mjPOSSCOPE_BRANCH;
}



// d actuator_force / d actuator_length of actuator i: fixed, affine or PID gain and no or affine
// bias (*affine), 0 for any other; controls: see actuatorInput
static mjtNum actuatorSlope(const mjModel* m, const mjData* d, int i, int* affine,
                            ctrlState* controls) {
  int gaintype = m->actuator_gaintype[i], biastype = m->actuator_biastype[i];
  const mjtNum* gainprm = m->actuator_gainprm + mjNGAIN*i;
  *affine = (gaintype == mjGAIN_FIXED || gaintype == mjGAIN_AFFINE ||
             gaintype == mjGAIN_PID) &&
            (biastype == mjBIAS_NONE || biastype == mjBIAS_AFFINE) &&
            m->actuator_plugin[i] < 0;
  if (!*affine) {
    return 0;
  }

  // slope of force = gain * input + bias
  mjtNum s = 0;
  if (biastype == mjBIAS_AFFINE) {
    s = m->actuator_biasprm[mjNBIAS*i + 1];
  }
  if (gaintype == mjGAIN_AFFINE && gainprm[1] != 0) {
    s += gainprm[1] * actuatorInput(m, d, i, controls);
  }
  return s;
}



// scope of actuator i under mjENBL_IMPLICITPOS, given its slope s and affine (actuatorSlope)
static int actuatorScope(const mjModel* m, const mjData* d, int i, int affine, mjtNum s,
                         posPass* pass) {
  // disabled actuation or actuator group
  if (mjDISABLED(mjDSBL_ACTUATION) || mj_actuatorDisabled(m, i)) {
    return mjPOSSCOPE_DISABLED;
  }

  // transmission
  int trn = transmissionScope(m, d, i);
  if (trn != mjPOSSCOPE_RESTORING) {
    return trn;
  }

  // muscle, dcmotor, user or plugin gain/bias; delayed input to a position-dependent gain; PID
  // integral read early (actearly), since the next integral state depends on the length
  int gaintype = m->actuator_gaintype[i];
  const mjtNum* gainprm = m->actuator_gainprm + mjNGAIN*i;
  int gainpos = gaintype == mjGAIN_AFFINE && gainprm[1] != 0;
  int pidearly = gaintype == mjGAIN_PID && m->actuator_actearly[i] && m->actuator_actnum[i] &&
                 gainprm[0] > 0;
  if (!affine || (gainpos && m->actuator_delay[i]) || pidearly) {
    return mjPOSSCOPE_GAINBIAS;
  }

  // force on a clamp: zero derivative
  if (isClamped(m, d, i, pass)) {
    return mjPOSSCOPE_CLAMPED;
  }

  // sign of the slope: restoring only, finite only, and no stiffer than the factorization of
  // M + h^2 K can resolve (h^2 |slope| <= mjMAXVAL; a 1e300 tendon servo left it singular)
  if (s == 0) {
    return mjPOSSCOPE_ZERO;
  }
  if (!(s < 0) || !isfinite(s) || -s * m->opt.timestep * m->opt.timestep > mjMAXVAL) {
    return mjPOSSCOPE_NONRESTORING;
  }
  return mjPOSSCOPE_RESTORING;
}



// 1 if actuator i contributes to K, with its slope: the slope is tested first (a motor has none,
// a negative gain is not restoring), the transmission and the clamps only then
static int actuatorRestoring(const mjModel* m, const mjData* d, int i, mjtNum* slope,
                             posPass* pass) {
  int affine;
  *slope = actuatorSlope(m, d, i, &affine, &pass->controls);
  return *slope < 0 && actuatorScope(m, d, i, affine, *slope, pass) == mjPOSSCOPE_RESTORING;
}



// scope of actuator i under mjENBL_IMPLICITPOS, slope = d actuator_force / d actuator_length
int mjd_actuatorPosScope(const mjModel* m, mjData* d, int i, mjtNum* slope) {
  mj_markStack(d);
  posPass pass = {d, CTRL_UNCHECKED, NULL};
  int affine;
  mjtNum s = actuatorSlope(m, d, i, &affine, &pass.controls);
  if (slope) {
    *slope = s;
  }
  int scope = actuatorScope(m, d, i, affine, s, &pass);
  mj_freeStack(d);
  return scope;
}



//------------------------------ position derivatives ----------------------------------------------

// add sclK*K to mat (D pattern, or lower M pattern if lower) and sclKv*K*qvel to vec for
// K = -d qfrc_actuator / dq: -slope * moment' * moment of each restoring actuator
static void mjd_actuator_pos(const mjModel* m, const mjData* d, posPass* pass, mjtNum* mat,
                             int lower, mjtNum sclK, mjtNum* vec, mjtNum sclKv) {
  const mjtNum* qvel = d->qvel;
  const int* rownnz = lower ? m->M_rownnz : m->D_rownnz;
  const int* rowadr = lower ? m->M_rowadr : m->D_rowadr;
  const int* colind = lower ? m->M_colind : m->D_colind;
  int sleep_filter = mjENABLED(mjENBL_SLEEP) && d->ntree_awake < m->ntree;

  for (int i=0; i < m->nactuator; i++) {
    if (sleep_filter && mj_sleepState(m, d, mjOBJ_ACTUATOR, i) == mjS_ASLEEP) {
      continue;
    }

    // restoring slope and scope, the slope tested first (motors have none)
    mjtNum slope;
    if (!actuatorRestoring(m, d, i, &slope, pass)) {
      continue;
    }

    // sparse moment row: one dof for a joint, the chain's dofs for a fixed tendon or a site
    int oadr = m->actuator_outadr[i];
    int nnz = d->moment_rownnz[oadr];
    const int* ind = d->moment_colind + d->moment_rowadr[oadr];
    const mjtNum* moment = d->actuator_moment + d->moment_rowadr[oadr];

    // moment velocity
    mjtNum mv = 0;
    for (int a=0; a < nnz; a++) {
      mv += moment[a] * qvel[ind[a]];
    }

    // dense block on the row's dofs, all within the pattern of M
    for (int a=0; a < nnz; a++) {
      mjtNum km = -slope * moment[a];
      if (vec) {
        vec[ind[a]] += sclKv * (km * mv);
      }
      if (mat) {
        for (int b=0; b < nnz; b++) {
          addSparse(mat, rownnz, rowadr, colind, lower, ind[a], ind[b], sclK * (km * moment[b]));
        }
      }
    }
  }
}



// add sclK*K to mat (D pattern, or lower M pattern if lower) and sclKv*K*qvel to vec for
// K = -d qfrc_passive / dq: the stiffness of hinges and slides, diagonal, d(x * polyForce(x)) / dx
static void mjd_passive_pos(const mjModel* m, const mjData* d, mjtNum* mat, int lower,
                            mjtNum sclK, mjtNum* vec, mjtNum sclKv) {
  if (mjDISABLED(mjDSBL_SPRING)) {
    return;
  }
  const int* rownnz = lower ? m->M_rownnz : m->D_rownnz;
  const int* rowadr = lower ? m->M_rowadr : m->D_rowadr;
  const int* colind = lower ? m->M_colind : m->D_colind;
  int sleep_filter = mjENABLED(mjENBL_SLEEP) && d->ntree_awake < m->ntree;

  for (int j=0; j < m->njnt; j++) {
    if (!isScalar(m, j) || (sleep_filter && mj_sleepState(m, d, mjOBJ_JOINT, j) == mjS_ASLEEP)) {
      continue;
    }
    mjtNum stiffness = m->jnt_stiffness[j];
    const mjtNum* spoly = m->jnt_stiffnesspoly + mjNPOLY*j;
    if (stiffness == 0 && mju_isZero(spoly, mjNPOLY)) {
      continue;
    }

    // restoring, finite, and no stiffer than the factorization can resolve (h^2 k <= mjMAXVAL)
    int padr = m->jnt_qposadr[j], dof = m->jnt_dofadr[j];
    mjtNum k = mjd_xPolyForce(stiffness, spoly, d->qpos[padr] - m->qpos_spring[padr], mjNPOLY, 0);
    if (!(k > 0) || !isfinite(k) || k * m->opt.timestep * m->opt.timestep > mjMAXVAL) {
      continue;
    }
    if (mat) {
      addSparse(mat, rownnz, rowadr, colind, lower, dof, dof, sclK * k);
    }
    if (vec) {
      vec[dof] += sclKv * (k * d->qvel[dof]);
    }
  }
}



//------------------------------ main entry points -------------------------------------------------

// add sclK*K to matD (D pattern) and sclKv*K*qvel to vec, K = -d(qfrc_actuator+qfrc_passive)/dq
void mjd_implicitPos(const mjModel* m, mjData* d,
                     mjtNum* matD, mjtNum sclK, mjtNum* vec, mjtNum sclKv) {
  mj_markStack(d);
  posPass pass = {d, CTRL_UNCHECKED, NULL};

  // by force class
  mjd_actuator_pos(m, d, &pass, matD, /* lower = */ 0, sclK, vec, sclKv);
  mjd_passive_pos(m, d, matD, /* lower = */ 0, sclK, vec, sclKv);
  mj_freeStack(d);
}



// add the lower triangle of sclK*K to matM (lower M pattern) and sclKv*K*qvel to vec
void mjd_implicitPosM(const mjModel* m, mjData* d,
                      mjtNum* matM, mjtNum sclK, mjtNum* vec, mjtNum sclKv) {
  mj_markStack(d);
  posPass pass = {d, CTRL_UNCHECKED, NULL};

  // by force class
  mjd_actuator_pos(m, d, &pass, matM, /* lower = */ 1, sclK, vec, sclKv);
  mjd_passive_pos(m, d, matM, /* lower = */ 1, sclK, vec, sclKv);
  mj_freeStack(d);
}
