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

// Part 3 of mjpos_bench, stack of long chains: the smallest chain length whose implicit step needs
// more than the stack the compiler chooses by default.

#include <climits>
#include <cstdio>
#include <string>

#include <mujoco/mujoco.h>

#include "benchmark/mjpos_bench.h"
#include "support/one_dof.h"

namespace mjpos::bench {
namespace {

constexpr int kLo = 300, kHi = 600;  // the chain lengths searched

// Whether one implicit step of chain(n) needs more than the default stack: compiled with a large
// <size nstack> (the compiler's own test step would overflow), compared with the default the
// compiler would have chosen.
bool Overflows(int n) {
  int big = static_cast<int>(30L * n * n + 5L * (500 + n) * (500 + n) + 100000);
  mjModel* m = LoadChain(n, kChainKp, kChainKv, kChainH, big);
  if (!m) return false;
  Stack s = ProbeStack(m, 1, nullptr);
  long def = DefaultNstack(m);
  std::printf("stack probe: chain%d nv=%d default nstack=%ld used=%d\n", n, m->nv, def,
              s.needed);
  mj_deleteModel(m);
  return s.needed > def;
}

}  // namespace

StackLimit FindStackLimit() {
  StackLimit limit;
  // the shared bisection over real n, each probe at the whole length below it: once the bracket
  // is narrower than 1 (tol * hi <= 1 for hi <= kHi), its ends lie on two adjacent lengths
  auto fits = [](double n) { return !Overflows(static_cast<int>(n)); };
  double x_lo = kLo, x_hi = kHi;
  if (!fits(x_lo) || fits(x_hi)) return limit;
  mjpos::Bisect(fits, INT_MAX, 1.0 / kHi, false, &x_lo, &x_hi);
  int lo = static_cast<int>(x_lo), hi = static_cast<int>(x_hi);
  // check: with the default stack, chain(lo) compiles and chain(hi) does not
  std::string lo_error;
  mjModel* mlo = LoadChain(lo, kChainKp, kChainKv, kChainH, 0, &lo_error);
  mjModel* mhi = LoadChain(hi, kChainKp, kChainKv, kChainH, 0, &limit.hi_error);
  std::string& hi_err = limit.hi_error;
  while (!hi_err.empty() && (hi_err.back() == '\n' || hi_err.back() == ' ')) hi_err.pop_back();
  limit.found = true;
  limit.lo = lo;
  limit.hi = hi;
  limit.lo_compiles = mlo != nullptr;
  limit.hi_compiles = mhi != nullptr;
  mj_deleteModel(mlo);
  mj_deleteModel(mhi);
  return limit;
}

}  // namespace mjpos::bench
