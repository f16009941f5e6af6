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

#include "support/contact.h"

#include <cmath>
#include <algorithm>
#include <vector>

#include <mujoco/mujoco.h>
#include "support/models.h"

namespace mjpos {

ContactMetrics MeasureContact(const mjModel* m, double seconds, double window, int body) {
  ContactMetrics out;
  DataPtr d(mj_makeData(m));
  const double h = m->opt.timestep;
  const int n = static_cast<int>(std::lround(seconds / h));
  const int first = n - static_cast<int>(std::lround(window / h));
  const int stride = std::max(1, static_cast<int>(std::lround(1e-3 / h)));
  std::vector<double> force, penetration;
  double start[3] = {0, 0, 0};
  for (int k = 0; k < n; ++k) {
    if (!StepStable(m, d.get(), 1)) return out;
    if (k == first && body >= 0) mju_copy3(start, d->xpos + 3 * body);
    if (k < first || (k - first) % stride) continue;
    if (!d->ncon) return out;
    double f = 0, pen = 0;
    for (int c = 0; c < d->ncon; ++c) {
      mjtNum frame[6];
      mj_contactForce(m, d.get(), c, frame);
      f += frame[0];
      pen -= d->contact[c].dist;
    }
    force.push_back(f);
    penetration.push_back(pen / d->ncon);
  }
  double sum = 0, sum2 = 0, pen = 0;
  for (size_t i = 0; i < force.size(); ++i) {
    sum += force[i];
    sum2 += force[i] * force[i];
    pen += penetration[i];
  }
  const double count = force.size();
  out.force = sum / count;
  out.penetration = pen / count;
  out.ripple = std::sqrt(std::max(0.0, sum2 / count - out.force * out.force)) /
               std::max(std::abs(out.force), mjMINVAL);
  if (body >= 0) {
    double moved[3];
    mju_sub3(moved, d->xpos + 3 * body, start);
    out.slip = mju_norm3(moved) / window;
  }
  out.stable = true;
  return out;
}

ContactMetrics ContactReference(const mjModel* m, double seconds, double window, int body,
                                double tol, double hmin, double* h_ref) {
  ModelPtr ref(mj_copyModel(nullptr, m));
  ref->opt.enableflags = 0;
  ref->opt.integrator = mjINT_IMPLICIT;
  const double h = m->opt.timestep;
  ContactMetrics last;
  int agreed = 0;  // successive halvings that agreed
  *h_ref = 0;
  for (int n = 2; h / n >= hmin; n *= 2) {
    ref->opt.timestep = h / n;
    ContactMetrics now = MeasureContact(ref.get(), seconds, window, body);
    bool agree = now.stable && last.stable && RelDiff(now.force, last.force) < tol &&
                 RelDiff(now.penetration, last.penetration) < tol;
    agreed = agree ? agreed + 1 : 0;
    if (agreed == 3) {
      *h_ref = h / n;
      return now;
    }
    last = now;
  }
  return last;
}

}  // namespace mjpos
