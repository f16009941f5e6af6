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

#ifndef MUJOCO_SRC_ENGINE_ENGINE_DERIVATIVE_POS_H_
#define MUJOCO_SRC_ENGINE_ENGINE_DERIVATIVE_POS_H_

#include <mujoco/mjdata.h>
#include <mujoco/mjexport.h>
#include <mujoco/mjmodel.h>

#ifdef __cplusplus
extern "C" {
#endif

// Position stiffness used by mjENBL_IMPLICITPOS: K = -d (qfrc_actuator + qfrc_passive) / d qpos,
// restricted to the restoring terms of the actuators and joint springs whose scope
// (mjd_actuatorPosScope, mjd_jointPosScope) is mjPOSSCOPE_RESTORING: -slope m'm for an actuator
// of moment m and slope d force / d length (mjd_actuatorSlopes: affine terms, a muscle's curves;
// exact on a hinge or slide and on a fixed tendon; the Gauss-Newton term, without (dm/dq)'f, on
// a ball joint, a spatial tendon, a site or a slider-crank), and the joint's
// stiffness (for the rotation of a ball or free joint, at the spring's rest orientation). K is
// symmetric and positive semidefinite. Its terms have the sparsity of d->D_* (the pattern of qM),
// which must be set (mj_makeMSparse), except those of actuators whose moment is on several
// branches (mjd_actuatorBranches): their m'm falls outside that pattern, and the step applies them
// by a low-rank update of its solve (mj_implicitPosCross).
// Adds sclK * K to the D-sparse matrix matD, without the terms on several branches, and
// sclKv * K * qvel to vec, with every term; either may be NULL.
// With mjENBL_POSWEIGHT each term of K is weighted for accuracy (see mjd_posWeight), with scratch
// on the MuJoCo stack; the table's weight of each dof's terms is cached in d->dof_posweightcache
// with the (h w_n)^2 and zeta it is for, and read again only when they change.
MJAPI void mjd_implicitPos(const mjModel* m, mjData* d,
                           mjtNum* matD, mjtNum sclK, mjtNum* vec, mjtNum sclKv);

// mjd_implicitPos for the step, which also reports the stiffness of each term it added, as
// weighted: K = sum_i kact[i] m_i' m_i + diag(kspring), m_i the moment of actuator i (kact: nu,
// kspring: nv; 0 for a force outside K); either may be NULL. Returns the number of terms on
// several branches, which are in vec but not in matD; for those, matD (the step's M - h qDeriv)
// also loses the part of their velocity term -h dfdv m'm on its pattern, which qDeriv holds: the
// solve applies their whole term, K and velocity (mj_implicitPosCross). nspring (NULL for none):
// the number of springs in K, with kspring (0 without it); kspring is set only when it is not 0.
int mj_implicitPosTerms(const mjModel* m, mjData* d, mjtNum* matD, mjtNum sclK,
                        mjtNum* vec, mjtNum sclKv, mjtNum* kact, mjtNum* kspring,
                        int* nspring);

// The terms on several branches (kact of mj_implicitPosTerms) in a solve: given res = A^-1 b,
// with A factorized by mju_factorLUSparse into LU (D sparsity), sets res to
// (A + sum_i (scl kact[i] - h dfdv_i) m_i' m_i)^-1 b over those terms (dfdv_i: mjd_actuatorVel,
// h: the timestep), by the Woodbury identity (one sparse solve per term and a dense solve of their
// number). With mat, A before its factorization, and vec = b, one step of iterative refinement
// follows (mat NULL: none). Scratch on the MuJoCo stack. Returns 1, or 0 if the update's dense
// system is singular in floating point (two stiff terms with the same moment can make it so):
// then it warns and leaves res as it was, A^-1 b, which still holds their shift from vec (the
// step then solves again without them: mj_implicitPosSolveOnPattern).
int mj_implicitPosCross(const mjModel* m, mjData* d, mjtNum* res, const mjtNum* LU,
                        const mjtNum* mat, const mjtNum* vec, const mjtNum* kact, mjtNum scl);

// The step's matrix and right side as mj_implicitSkip assembles them, for a solve outside it
// (mj_implicitPosSolveOnPattern, mj_stepForceLimit): mat = M - h qDeriv + h^2 K (D sparsity) and
// rhs = qfrc_smooth + qfrc_constraint - h K qvel, with kact and kspring and the return value as
// mj_implicitPosTerms (the terms on several branches in rhs but not in mat, which also loses
// their velocity term's part: the solve applies both, mj_implicitPosCross). onpattern: without
// those terms, neither in mat nor in rhs, and 0 in kact, so that they are out of K altogether
// (returns 0). Requires what mj_implicitSkip sets: d->D_*, d->qDeriv.
int mj_implicitPosStep(const mjModel* m, mjData* d, mjtNum* mat, mjtNum* rhs, mjtNum* kact,
                       mjtNum* kspring, int onpattern);

// The step's solve after the update of the terms on several branches was singular
// (mj_implicitPosCross returned 0): qacc = (M - h qDeriv + h^2 K')^-1 (qfrc_smooth +
// qfrc_constraint - h K' qvel) for K' the terms on the pattern of M (mj_implicitPosStep with
// onpattern), with kact and kspring as there. The terms on several branches then act as stock's
// step has them: their force explicit, their velocity term's part on the pattern of M (qDeriv)
// implicit. The matrix is factorized in scratch: d->qLU is kept. Requires what mj_implicitSkip
// sets: d->D_*, d->qDeriv.
void mj_implicitPosSolveOnPattern(const mjModel* m, mjData* d, mjtNum* qacc, mjtNum* kact,
                                  mjtNum* kspring);

// The same terms in a product: res += sum_i (scl kact[i] - h dfdv_i) m_i' m_i vec.
void mj_implicitPosCrossMul(const mjModel* m, const mjData* d, mjtNum* res, const mjtNum* vec,
                            const mjtNum* kact, mjtNum scl);

// The velocity term of those terms as the step applies it, beyond what qDeriv holds:
// res += scl * sum_i dfdv_i (m_i' m_i - P_i) vec, P_i the part of m_i' m_i on the pattern of M.
void mjd_branchVelocity(const mjModel* m, const mjData* d, mjtNum* res, const mjtNum* kact,
                        const mjtNum* vec, mjtNum scl);

// 1 if the step can take actuator i's velocity term, -h dfdv m'm, back out of its matrix
// M - h qDeriv (a term on several branches applied whole in the solve, mj_implicitPosCross; an
// actuator held at its forcerange, mj_stepForceLimit): h |d force / d velocity| <= mjMAXVAL.
// Beyond it, M - h qDeriv lost M below the rounding of that term (kv 1e300), and taking the term
// out leaves a zero pivot where stock steps.
int mjd_actuatorVelResolvable(const mjModel* m, const mjData* d, int i);

// 1 if the moment of actuator i is a row on several branches: not on one hinge or slide dof, nor
// on one kinematic chain (its term of K is outside the D sparsity)
MJAPI int mjd_actuatorBranches(const mjModel* m, int i);

// add scl*(k*moment)'*moment of actuator i to matD (D sparsity): its moment is on one hinge or
// slide dof, or on the dofs of one kinematic chain; for a moment on several branches, the part of
// the term on the D sparsity (as mjd_smooth_vel keeps of a velocity term)
void mjd_addActuatorTerm(const mjModel* m, const mjData* d, mjtNum* matD, int i,
                         mjtNum scl, mjtNum k);

// the dof of actuator i when its moment is on one hinge or slide dof, -1 otherwise (the step
// reads it from d->actuator_posdof, set by mj_resetData)
static inline int mjd_actuatorDof(const mjModel* m, int i) {
  int trn = m->actuator_trntype[i], id = m->actuator_trnid[2*i];
  if ((trn==mjTRN_JOINT || trn==mjTRN_JOINTINPARENT) &&
      (m->jnt_type[id]==mjJNT_HINGE || m->jnt_type[id]==mjJNT_SLIDE)) {
    return m->jnt_dofadr[id];
  }
  return -1;
}

// scope of mjENBL_IMPLICITPOS for one actuator, joint spring or tendon: when each case applies
// (why: mjd_posScopeReason)
typedef enum mjtPosScope_ {
  mjPOSSCOPE_RESTORING = 0,       // in scope, restoring slope
  mjPOSSCOPE_ZERO,                // in scope, zero slope (e.g. a motor)
  mjPOSSCOPE_NONRESTORING,        // slope positive, not finite, or h^2 |slope| > mjMAXVAL; on
                                  // several branches, also h |d force / d velocity| > mjMAXVAL
  mjPOSSCOPE_CLAMPED,             // force on its forcerange clamp
  mjPOSSCOPE_GAINBIAS,            // user gain or bias
  mjPOSSCOPE_TRANSMISSION,        // no length (free joint, site without refsite, body), or a
                                  // fixed tendon listing a joint twice
  mjPOSSCOPE_BRANCH,              // not used: a moment on several branches is in scope
                                  // (mjd_actuatorBranches); kept for the values that follow
  mjPOSSCOPE_DISABLED             // actuation (actuator) or passive forces (spring) disabled
} mjtPosScope;

// The slopes in the length of a muscle's force-length curve times its gain at the optimal length
// (d mju_muscleGain / d len) and of its passive curve (d mju_muscleBias / d len), piece by piece.
mjtNum mjd_muscleGainLength(mjtNum len, mjtNum vel, const mjtNum lengthrange[2], mjtNum acc0,
                            const mjtNum prm[9]);
mjtNum mjd_muscleBiasLength(mjtNum len, const mjtNum lengthrange[2], mjtNum acc0,
                            const mjtNum prm[9]);

// Scope of actuator i under mjENBL_IMPLICITPOS (mjtPosScope). If slope is not NULL, it receives
// d actuator_force / d actuator_length (mjd_actuatorSlopes) for every gain and bias type but user,
// and 0 for those. Requires mj_fwdActuation (d->actuator_force), and mj_resetData after a change
// of the actuator's transmission, gain type or bias type (mj_setActuatorPosScope).
MJAPI int mjd_actuatorPosScope(const mjModel* m, const mjData* d, int i, mjtNum* slope);

// Scope of the spring of joint j under mjENBL_IMPLICITPOS (mjtPosScope).
MJAPI int mjd_jointPosScope(const mjModel* m, int j);

// Why a case of mjtPosScope is in K or left out of it, as the servo report and the documentation
// state it; "unknown scope" for a value that is not an mjtPosScope.
MJAPI const char* mjd_posScopeReason(int scope);

// Scope of each tendon as a transmission under mjENBL_IMPLICITPOS (mjtPosScope), kept in
// d->ten_posscope. It depends on the model's structure only and is set by mj_resetData; a model
// of sizes only, without its arrays, leaves it as it is.
void mj_setTendonPosScope(const mjModel* m, mjData* d);

// Each actuator's dof (mjd_actuatorDof) and the scope of its structure (mjtPosScope: its
// transmission's, then mjPOSSCOPE_GAINBIAS for a user gain or bias), kept in d->actuator_posdof
// and d->actuator_postrn; for a servo on one dof, restoring, of fixed gain and affine bias (its
// slope is its bias's), the address of its dof's diagonal element in the D-sparse layout of
// mj_makeMSparse in d->actuator_posdiag, -1 for any other actuator. They depend on the model's
// structure only and are set by mj_resetData, after the tendons' scope; a model of sizes only
// leaves them as they are.
void mj_setActuatorPosScope(const mjModel* m, mjData* d);

// Input that multiplies the gain of actuator i in mj_fwdActuation: its activation, or its ctrl
// clamped to ctrlrange (unless clampctrl is disabled), 0 if any control is bad after clamping.
MJAPI mjtNum mjd_actuatorInput(const mjModel* m, const mjData* d, int i);

// Slopes of the force of actuator i at its current input (mjd_actuatorInput), length and
// velocity, when its gain is fixed, affine or a muscle's and its bias none, affine or a muscle's:
// slope[0] = d actuator_force / d actuator_length (the slope of mjd_actuatorPosScope; a muscle's
// from the force-length and passive curves of mju_muscleGain and mju_muscleBias) and
// slope[1] = d actuator_force / d actuator_velocity (the velocity terms of the affine bias and
// gain; a muscle's velocity curve, as qDeriv takes it). Returns 1 for such an actuator, and 0
// with both slopes 0 for a user gain or bias.
MJAPI int mjd_actuatorSlopes(const mjModel* m, const mjData* d, int i, mjtNum slope[2]);

// Accuracy weight theta in (0, 1] that mjENBL_POSWEIGHT gives the term of actuator id (objtype
// mjOBJ_ACTUATOR) or of the dof of scalar joint id (mjOBJ_JOINT); 1 for a term outside the scope
// of K. A term is a servo whose moment is a row on several dofs (a tendon, ball joint, site or
// slider-crank), or everything on one dof alone: the servos on its hinge or slide and its spring,
// with the joint's damping (a servo on one dof has its dof's weight). theta is read from a table
// at the term's natural frequency and damping ratio with the inverse inertia of its row (a dof's
// dof_invweight0, a tendon's tendon_invweight0 through its gear; call mj_setConst after changing
// masses; any other row's m' M^-1 m at the current configuration), then raised where the weighted
// step fails its stability gate at the current configuration (needs mj_forward: qM,
// actuator_moment). A ball joint's servo has theta 1 (backward Euler), as has the spring of a ball
// or free joint's rotation. Whether the flag is set does not matter: this is the weight it would
// apply.
MJAPI mjtNum mjd_posWeight(const mjModel* m, mjData* d, int objtype, int id);

// The table of mjd_posWeight, for tests: *nzeta rows at zeta[j], *ns columns at s = i * *ds,
// where s = log10(h w_n / cap) and cap = 2 (zeta + sqrt(zeta^2 + 1)) is stock's stability cap on
// one term; theta[j * *ns + i] the weight there, *below the weight at and below the cap.
MJAPI void mjd_posWeightTable(int* nzeta, int* ns, mjtNum* ds, mjtNum* below,
                              const mjtNum** zeta, const mjtNum** theta);

#ifdef __cplusplus
}
#endif

#endif  // MUJOCO_SRC_ENGINE_ENGINE_DERIVATIVE_POS_H_
