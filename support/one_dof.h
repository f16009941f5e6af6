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

// The formulas of the servo report that the tests and the benchmark use too, each in one place:
// the one-step map of one servo dof (stock integrators and mjENBL_IMPLICITPOS) and its poles,
// spectral radii, the largest stable gain, the reflected inertia, and the bracketing and
// bisection of a stability boundary, and the enable flags of the schemes they compare. See
// servo_report/README.md for the formulas.

#ifndef MJPOS_SUPPORT_ONE_DOF_H_
#define MJPOS_SUPPORT_ONE_DOF_H_

#include <array>
#include <complex>
#include <functional>

#include <mujoco/mujoco.h>

namespace mjpos {

// Discrete behaviour of a one-dof (or coupled) linear map.
// Dominant (largest modulus) pole z of a one-step map, and its continuous equivalent
// s = log(z) / h.
struct Discrete {
  double modulus = 0;      // |z|
  double real = 0;         // Re z
  double omega = 0;        // |s| (rad/s): delivered natural frequency
  double freq = 0;         // |s| / (2 pi) (Hz)
  double freq_damped = 0;  // |Im s| / (2 pi) (Hz); at most 1/(2h)
  double zeta = 0;         // -Re s / |s|: delivered damping ratio
};

// A real 2x2 matrix a[row][col]: the one-step map (q, v) -> (q+, v+) of one dof.
struct Map2 {
  double a[2][2];
};

//------------------------------ poles and spectral radii ------------------------------------------

// The eigenvalues tr/2 + r and tr/2 - r of map, r the principal square root of tr^2/4 - det
// (a real r >= 0, or i times a positive one).
std::array<std::complex<double>, 2> Eigenvalues2(const Map2& map);

// The larger eigenvalue modulus of map.
double SpectralRadius2(const Map2& map);

// The dominant pole of map (the first of Eigenvalues2 on a tie) and its continuous equivalent for
// timestep h.
Discrete DominantPole(const Map2& map, double h);

// The largest eigenvalue modulus of the n x n matrix a (row-major), by Eigen's real Schur form.
double SpectralRadius(const double* a, int n);

//------------------------------ one servo dof -----------------------------------------------------

// The acceleration of one step of Euler, implicit, or implicit + mjENBL_IMPLICITPOS (flag, with
// the position terms weighted by theta; 1: backward Euler) for one dof of inertia `inertia` under
// the force -kp (q - target) - (kv + damping) v, as
//   qacc = (stiffness (target - q) - damping v) / denominator,
// e.g. for the flag: (kp (target - q) - (kv + damping + theta h kp) v) / (inertia +
// h (kv + damping) + theta h^2 kp). Under Euler, kv is explicit and damping implicit. The one
// statement of these formulas: OneDofStep and the tests' closed forms use it. Not for RK4.
struct OneDofTerms {
  double denominator, stiffness, damping;
};
OneDofTerms OneDofStepTerms(int integrator, bool flag, double h, double inertia, double kp,
                            double kv, double damping, double theta = 1);

// One-step map of (q, v) of one dof of inertia `inertia` under the force -kp q - (kv + damping) v,
// target 0, for the integrator (mjINT_*), or for implicit + mjENBL_IMPLICITPOS if flag, with the
// position terms weighted by theta (mjENBL_POSWEIGHT; 1: backward Euler). Under Euler, kv is
// explicit and damping implicit; under implicit both are implicit; RK4 is the classical one.
Map2 OneDofStep(int integrator, bool flag, double h, double inertia, double kp, double kv,
                double damping, double theta = 1);

// The dominant pole of OneDofStep (the map of an RK4 step has no closed form for its poles, it is
// the 4th-order Taylor polynomial of the continuous one).
Discrete OneDofMap(int integrator, bool flag, double h, double inertia, double kp, double kv,
                   double damping, double theta = 1);

// Largest stable kp of the one-dof map of the integrator, stock (no flag): closed forms for Euler
// and implicit, bisection of OneDofMap's modulus for RK4; inf if there is none.
double OneDofCap(int integrator, double h, double inertia, double kv, double damping);

//------------------------------ reflected inertia -------------------------------------------------

// m M^-1 m' for the row mom (length nv) at the mass matrix of d (factored: mj_forward); x
// (length nv) receives M^-1 m'. 0 if the model has no dofs.
double InverseReflectedInertia(const mjModel* m, mjData* d, const mjtNum* mom, mjtNum* x);

// The reflected inertia 1 / (m M^-1 m') along mom; inf where m M^-1 m' is not positive.
double ReflectedInertia(const mjModel* m, mjData* d, const mjtNum* mom);

// The reflected inertia of dof `dof` alone: 1 / (M^-1)_dof,dof.
double DofReflectedInertia(const mjModel* m, mjData* d, int dof);

//------------------------------ stability boundary ------------------------------------------------

// Brackets the boundary of a predicate that holds below it (ok, e.g. stable) and fails above:
// tries x0, 2 x0, 4 x0, ..., x0 2^doublings in turn; *lo is the last x where ok held (0 if it
// failed at x0), *hi the first where it failed (inf if it never did). Returns whether it failed.
bool BracketByDoubling(const std::function<bool(double)>& ok, double x0, int doublings,
                       double* lo, double* hi);

// Bisects the bracket [*lo, *hi] of the boundary (ok(*lo), not ok(*hi)), keeping it a bracket:
// at most max_iter halvings, while it is wider than tol: hi - lo > tol * hi at the arithmetic
// midpoint, or hi / lo > tol at the geometric one if geometric. Returns the arithmetic midpoint
// of the final bracket.
double Bisect(const std::function<bool(double)>& ok, int max_iter, double tol, bool geometric,
              double* lo, double* hi);

//------------------------------ schemes -----------------------------------------------------------

// Sets (on) or clears the enable flags `bits` of m.
void SetEnable(mjModel* m, int bits, bool on);

// The schemes compared: stock implicit, backward Euler in position (mjENBL_IMPLICITPOS) and the
// accuracy-weighted mode (mjENBL_IMPLICITPOS with mjENBL_POSWEIGHT).
enum class Scheme { kStock, kBackwardEuler, kWeighted };

// Sets the enable flags of scheme s; the other flags are left as they are.
void SetScheme(mjModel* m, Scheme s);

}  // namespace mjpos

#endif  // MJPOS_SUPPORT_ONE_DOF_H_
