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
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include "support/models.h"

namespace mjpos {

int ContactStride(double h) { return std::max(1, static_cast<int>(std::lround(1e-3 / h))); }

void ContactSample(const mjModel* m, mjData* d, double* force, double* penetration) {
  *force = 0;
  *penetration = 0;
  for (int c = 0; c < d->ncon; ++c) {
    mjtNum frame[6];
    mj_contactForce(m, d, c, frame);
    *force += frame[0];
    *penetration -= d->contact[c].dist;
  }
  if (d->ncon) *penetration /= d->ncon;
}

ContactMetrics ContactMetricsOf(const std::vector<double>& force,
                                const std::vector<double>& penetration, double moved,
                                double window) {
  ContactMetrics out;
  if (force.empty()) return out;
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
  out.slip = moved / window;
  out.stable = true;
  return out;
}

ContactMetrics MeasureContact(const mjModel* m, double seconds, double window, int body) {
  DataPtr d(mj_makeData(m));
  const double h = m->opt.timestep;
  const int n = static_cast<int>(std::lround(seconds / h));
  const int first = n - static_cast<int>(std::lround(window / h));
  const int stride = ContactStride(h);
  std::vector<double> force, penetration;
  double start[3] = {0, 0, 0};
  for (int k = 1; k <= n; ++k) {
    if (!StepStable(m, d.get(), 1)) return {};
    if (k == first && body >= 0) mju_copy3(start, d->xpos + 3 * body);
    if (k <= first || k % stride) continue;
    if (!d->ncon) return {};
    force.emplace_back();
    penetration.emplace_back();
    ContactSample(m, d.get(), &force.back(), &penetration.back());
  }
  double moved = 0;
  if (body >= 0) {
    double delta[3];
    mju_sub3(delta, d->xpos + 3 * body, start);
    moved = mju_norm3(delta);
  }
  return ContactMetricsOf(force, penetration, moved, window);
}

bool ApplyRefsafe(mjModel* m, double h) {
  if (m->opt.disableflags & mjDSBL_REFSAFE) return false;
  const struct {
    mjtNum* solref;
    int n;
  } arrays[] = {{m->geom_solref, m->ngeom},         {m->pair_solref, m->npair},
                {m->jnt_solref, m->njnt},           {m->dof_solref, m->nv},
                {m->eq_solref, m->neq},             {m->tendon_solref_lim, m->ntendon},
                {m->tendon_solref_fri, m->ntendon}};
  bool changed = false;
  for (const auto& a : arrays) {
    for (int i = 0; i < a.n; ++i) {
      mjtNum* timeconst = a.solref + mjNREF * i;
      if (*timeconst > 0 && *timeconst < 2 * h) {
        *timeconst = 2 * h;
        changed = true;
      }
    }
  }
  return changed;
}

mjModel* StockAt(const mjModel* m, double h_run) {
  mjModel* ref = mj_copyModel(nullptr, m);
  ref->opt.enableflags = 0;
  ref->opt.integrator = mjINT_IMPLICIT;
  ApplyRefsafe(ref, m->opt.timestep);
  ref->opt.timestep = h_run;
  return ref;
}

std::vector<double> ConvergedStock(
    const mjModel* m, double tol, double hmin, double* h_ref,
    const std::function<std::vector<double>(const mjModel*)>& measure) {
  const double h = m->opt.timestep;
  std::vector<double> last;
  int agreed = 0;  // successive halvings that agreed
  *h_ref = 0;
  for (int n = 2; h / n >= hmin; n *= 2) {
    ModelPtr ref(StockAt(m, h / n));
    std::vector<double> now = measure(ref.get());
    bool agree = !now.empty() && now.size() == last.size();
    for (size_t i = 0; agree && i < now.size(); ++i) agree = RelDiff(now[i], last[i]) < tol;
    agreed = agree ? agreed + 1 : 0;
    if (agreed == 3) {
      *h_ref = h / n;
      return now;
    }
    last = now;
  }
  return last;
}

ContactMetrics ContactReference(const mjModel* m, double* seconds, double max_seconds,
                                double window, int body, double tol, double hmin,
                                double* h_ref) {
  for (;; *seconds *= 2) {
    ContactMetrics out;
    ConvergedStock(m, tol, hmin, h_ref, [&](const mjModel* ref) {
      out = MeasureContact(ref, *seconds, window, body);
      return out.stable ? std::vector<double>{out.force, out.penetration}
                        : std::vector<double>{};
    });
    if (!*h_ref) return out;
    ModelPtr ref(StockAt(m, *h_ref));
    ContactMetrics half = MeasureContact(ref.get(), *seconds / 2, window, body);
    if (half.stable && RelDiff(half.force, out.force) < tol &&
        RelDiff(half.penetration, out.penetration) < tol) {
      return out;
    }
    if (2 * *seconds > max_seconds) {
      *h_ref = 0;
      return out;
    }
  }
}

DropMetrics DropMetricsOf(const std::vector<double>& force, const std::vector<double>& height,
                          double h) {
  DropMetrics out;
  if (height.empty()) return out;
  const int bin = std::max(1, static_cast<int>(std::lround(0.01 / h)));
  double impulse = 0, lowest = mjMAXVAL, highest = -mjMAXVAL;
  for (size_t k = 0; k < height.size(); ++k) {
    impulse += force[k] * h;
    if ((k + 1) % bin == 0) {
      out.peak_force = std::max(out.peak_force, impulse / (bin * h));
      impulse = 0;
    }
    if (height[k] < lowest) lowest = highest = height[k];
    highest = std::max(highest, height[k]);
  }
  out.lowest = lowest;
  out.rebound = highest - height.back();
  out.stable = true;
  return out;
}

DropMetrics MeasureDrop(const mjModel* m, double seconds, int body) {
  DataPtr d(mj_makeData(m));
  const int n = static_cast<int>(std::lround(seconds / m->opt.timestep));
  std::vector<double> force(n), height(n);
  for (int k = 0; k < n; ++k) {
    if (!StepStable(m, d.get(), 1)) return {};
    double penetration;
    ContactSample(m, d.get(), &force[k], &penetration);
    height[k] = d->xpos[3 * body + 2];
  }
  return DropMetricsOf(force, height, m->opt.timestep);
}

DropMetrics DropReference(const mjModel* m, double seconds, int body, double tol, double hmin,
                          double* h_ref) {
  DropMetrics out;
  ConvergedStock(m, tol, hmin, h_ref, [&](const mjModel* ref) {
    out = MeasureDrop(ref, seconds, body);
    return out.stable ? std::vector<double>{out.peak_force, out.lowest, out.rebound}
                      : std::vector<double>{};
  });
  return out;
}

namespace {

std::string Gripper(const std::string&, double kp, double kv, double h) {
  return GripperXml(kp, kv, h);
}
std::string Standing(const std::string&, double kp, double kv, double h) {
  return LeggedXml(kp, kv, h, "implicit", 0, 0);
}
std::string Squeeze(const std::string&, double kp, double kv, double h) {
  return FingerSqueezeXml(kp, kv, h);
}
std::string Humanoid(const std::string& model_dir, double, double, double) {
  std::ifstream file(model_dir + "/humanoid/humanoid.xml");
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

}  // namespace

// the servo humanoid's feet are frictionless (condim 1), its geoms' solref 15 ms (refsafe
// raises it to 20 ms at h 10 ms); at kp 1e3 and kv 0 it sways on its feet for seconds after it
// lands
std::vector<ContactCase> StandingCases() {
  return {{"gripper (box held by friction)", Gripper, false, "object", 2, 0},
          {"quadruped standing", Standing, false, nullptr, 2, 0},
          {"finger squeeze (box on the floor)", Squeeze, false, "box", 2, 0},
          {"servo humanoid standing", Humanoid, true, nullptr, 2, 0}};
}

ContactCase DropCase() { return {"quadruped dropped 0.1 m", Standing, false, "torso", 1, 0.1}; }

mjModel* LoadContactCase(const ContactCase& c, const std::string& model_dir, double kp,
                         double kv, double h, std::string* xml) {
  std::string text = c.xml(model_dir, kp, kv, h);
  mjModel* m = LoadXmlString(text);
  if (!m) return nullptr;
  if (c.servos) MakeServosOfGearOne(m, kp, kv);
  m->opt.timestep = h;
  m->opt.integrator = mjINT_IMPLICIT;
  if (c.lift) {
    for (int j = 0; j < m->njnt; ++j) {
      if (m->jnt_type[j] == mjJNT_FREE) m->qpos0[m->jnt_qposadr[j] + 2] += c.lift;
    }
  }
  if (xml) *xml = text;
  return m;
}

}  // namespace mjpos
