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

#include "support/one_dof.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/Eigenvalues>
#include <mujoco/mujoco.h>

namespace mjpos {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;

}  // namespace

std::array<std::complex<double>, 2> Eigenvalues2(const Map2& map) {
  double tr = map.a[0][0] + map.a[1][1];
  double det = map.a[0][0] * map.a[1][1] - map.a[0][1] * map.a[1][0];
  double disc = 0.25 * tr * tr - det;
  if (disc >= 0) {
    double s = std::sqrt(disc);
    return {std::complex<double>(0.5 * tr + s), std::complex<double>(0.5 * tr - s)};
  }
  double s = std::sqrt(-disc);
  return {std::complex<double>(0.5 * tr, s), std::complex<double>(0.5 * tr, -s)};
}

double SpectralRadius2(const Map2& map) {
  std::array<std::complex<double>, 2> z = Eigenvalues2(map);
  return std::max(std::abs(z[0]), std::abs(z[1]));
}

Discrete DominantPole(const Map2& map, double h) {
  std::array<std::complex<double>, 2> poles = Eigenvalues2(map);
  std::complex<double> z = std::abs(poles[0]) >= std::abs(poles[1]) ? poles[0] : poles[1];
  Discrete out;
  out.modulus = std::abs(z);
  out.real = z.real();
  if (out.modulus > 0) {
    std::complex<double> s = std::log(z) / h;
    out.omega = std::abs(s);
    out.freq = out.omega / (2 * kPi);
    out.freq_damped = std::abs(s.imag()) / (2 * kPi);
    out.zeta = out.omega > 0 ? -s.real() / out.omega : 0;
  } else {
    out.omega = kInf;
    out.freq = kInf;
    out.freq_damped = 0;
    out.zeta = 1;
  }
  return out;
}

double SpectralRadius(const double* a, int n) {
  Eigen::MatrixXd mat =
      Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
          a, n, n);
  Eigen::EigenSolver<Eigen::MatrixXd> es(mat, false);
  return es.eigenvalues().cwiseAbs().maxCoeff();
}

OneDofTerms OneDofStepTerms(int integrator, bool flag, double h, double inertia, double kp,
                            double kv, double damping, double theta) {
  double c = kv + damping;
  if (flag) {
    return {inertia + h * c + theta * h * h * kp, kp, c + theta * h * kp};
  }
  if (integrator == mjINT_IMPLICIT) {
    return {inertia + h * c, kp, c};
  }
  return {inertia + h * damping, kp, c};  // Euler: joint damping implicit, actuator kv explicit
}

Map2 OneDofStep(int integrator, bool flag, double h, double inertia, double kp, double kv,
                double damping, double theta) {
  double c = kv + damping;
  if (integrator == mjINT_RK4 && !flag) {
    // A = sum_k (hF)^k / k!, F = [0 1; -kp/I -c/I]
    double f10 = -kp / inertia, f11 = -c / inertia;
    double a00 = 1, a01 = 0, a10 = 0, a11 = 1;  // running sum
    double t00 = 1, t01 = 0, t10 = 0, t11 = 1;  // running term
    for (int k = 1; k <= 4; ++k) {
      // term = term * (hF) / k
      double n00 = t01 * f10, n01 = t00 + t01 * f11;
      double n10 = t11 * f10, n11 = t10 + t11 * f11;
      t00 = n00 * h / k;
      t01 = n01 * h / k;
      t10 = n10 * h / k;
      t11 = n11 * h / k;
      a00 += t00;
      a01 += t01;
      a10 += t10;
      a11 += t11;
    }
    return {{{a00, a01}, {a10, a11}}};
  }

  // qacc = p q + r v
  OneDofTerms t = OneDofStepTerms(integrator, flag, h, inertia, kp, kv, damping, theta);
  double p = -t.stiffness / t.denominator;
  double r = -t.damping / t.denominator;

  // v+ = v + h qacc, q+ = q + h v+
  return {{{1 + h * h * p, h * (1 + h * r)}, {h * p, 1 + h * r}}};
}

Discrete OneDofMap(int integrator, bool flag, double h, double inertia, double kp, double kv,
                   double damping, double theta) {
  return DominantPole(OneDofStep(integrator, flag, h, inertia, kp, kv, damping, theta), h);
}

double OneDofCap(int integrator, double h, double inertia, double kv, double damping) {
  switch (integrator) {
    case mjINT_IMPLICIT:
      return std::max(0.0, (4 * inertia + 2 * h * (kv + damping)) / (h * h));
    case mjINT_EULER:
      return std::max(0.0, (4 * inertia + 2 * h * damping - 2 * h * kv) / (h * h));
    case mjINT_RK4: {
      // no closed form with damping: bisect the modulus of the RK4 map, from 1e-9 I/h^2 up to
      // (below) 1e9 I/h^2
      auto stable = [&](double kp) {
        return OneDofMap(mjINT_RK4, false, h, inertia, kp, kv, damping).modulus <= 1 + 1e-12;
      };
      double scale = inertia / (h * h);
      double lo, hi;
      if (!BracketByDoubling(stable, 1e-9 * scale, 59, &lo, &hi)) return kInf;
      if (!(lo > 0)) return 0;
      return Bisect(stable, 100, 1e-15, false, &lo, &hi);
    }
  }
  return kInf;
}

double InverseReflectedInertia(const mjModel* m, mjData* d, const mjtNum* mom, mjtNum* x) {
  int nv = m->nv;
  if (nv == 0) return 0;
  mj_solveM(m, d, x, mom, 1);
  double mMm = 0;
  for (int k = 0; k < nv; ++k) mMm += mom[k] * x[k];
  return mMm;
}

double ReflectedInertia(const mjModel* m, mjData* d, const mjtNum* mom) {
  std::vector<mjtNum> x(std::max(m->nv, 1));
  double mMm = InverseReflectedInertia(m, d, mom, x.data());
  return mMm > 0 ? 1 / mMm : kInf;
}

double DofReflectedInertia(const mjModel* m, mjData* d, int dof) {
  std::vector<mjtNum> unit(std::max(m->nv, 1), 0);
  unit[dof] = 1;
  return ReflectedInertia(m, d, unit.data());
}

bool BracketByDoubling(const std::function<bool(double)>& ok, double x0, int doublings,
                       double* lo, double* hi) {
  *lo = 0;
  *hi = kInf;
  double x = x0;
  for (int k = 0; k <= doublings; ++k, x *= 2) {
    if (!ok(x)) {
      *hi = x;
      return true;
    }
    *lo = x;
  }
  return false;
}

double Bisect(const std::function<bool(double)>& ok, int max_iter, double tol, bool geometric,
              double* lo, double* hi) {
  for (int it = 0; it < max_iter && (geometric ? *hi / *lo > tol : *hi - *lo > tol * *hi);
       ++it) {
    double mid = geometric ? std::sqrt(*lo * *hi) : 0.5 * (*lo + *hi);
    (ok(mid) ? *lo : *hi) = mid;
  }
  return 0.5 * (*lo + *hi);
}

//------------------------------ schemes -----------------------------------------------------------

void SetEnable(mjModel* m, int bits, bool on) {
  if (on) {
    m->opt.enableflags |= bits;
  } else {
    m->opt.enableflags &= ~bits;
  }
}

void SetScheme(mjModel* m, Scheme s) {
  SetEnable(m, mjENBL_IMPLICITPOS, s != Scheme::kStock);
  SetEnable(m, mjENBL_POSWEIGHT, s == Scheme::kWeighted);
}

}  // namespace mjpos
