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

// Property suite: random models, each stepped from one start with mjENBL_IMPLICITPOS off and on.
//
// Soak (release build, about 5 ms per model; doc/property.md, also for what it
// finds today: the open 1e300 finding, seed 2 model 4732):
//   build/bin/property_test --models=20000 --seed=2
//   MJPOS_PROPERTY_MODELS=20000 MJPOS_PROPERTY_SEED=2 ctest --test-dir build -R PropertySuite
// Reproduce a failure: build/bin/property_test --seed=S --model=I [--xml prints its MJCF].
//
// A model is a function of (seed, index) alone: a random tree of 1 to 6 bodies with hinge, slide,
// ball and free joints (springs, damping, armature, limits, friction loss), fixed tendons (a joint
// listed twice, joints on different branches, now and then a ball or free joint, limits,
// springs), general actuators with fixed or affine gain and affine or no bias (servos, some with
// activation, motors) whose gains include NaN, +-inf, 1e300, negative, zero and denormal values,
// gears, control and force limits, a floor and colliding geoms, random enable flags
// (implicitpos, invdiscrete, posweight, energy, fwdinv, override) and disable flags (contact,
// limit, passive, actuation, gravity, clampctrl, ...), solver, cone and Jacobian options, and the
// implicit, Euler or RK4 integrator; its start has random positions, velocities, controls (now
// and then a NaN) and applied forces. Properties:
//   1. no crash: no sanitizer report (the sanitizer stage of tools/test.sh runs this test under
//      -fsanitize=address,undefined), and no mju_error that the flag alone raises (from a state
//      identical in both runs; an mju_error ends a run, as in mjpos_statedump);
//   2. where only the flag's scope can make the step diverge and no contact is active (see
//      OnlyScopeCanDiverge), flag on is clean (no bad-state warning mjWARN_BADQPOS, BADQVEL,
//      BADQACC, no reset) where flag off is clean with a margin, has at most one more warning and
//      reset where flag off resets (see CheckModel), and no mju_error that flag off has not;
//   3. Euler and RK4: flag on is bit-identical to flag off after every step; implicit with nothing
//      in the flag's scope: the same; and (3a) mjd_actuatorPosScope puts an actuator in K exactly
//      when the scope rules of doc/scope.md do;
//   4. mjENBL_INVDISCRETE on, implicit or Euler, no constraint row, finite gains, |qvel| <= 1e3:
//      mj_inverse of the step's discrete acceleration (v+ - v)/h returns the step's applied forces
//      qfrc_applied + qfrc_actuator, flag off and on, to 1e-9 of the largest force in the balance;
//   5. with the stock sub-build (MJPOS_STOCK_STATEDUMP defined, release): every 10th model, as MJCF
//      without the new flags, is hashed by mjpos_statedump built against stock and against the
//      patched library: flag off (invdiscrete off and on) equals stock under the model's integrator
//      and under implicit; flag on (with invdiscrete and posweight) equals stock under Euler and
//      RK4. Without the stock library this property is skipped and the output says so.
// Teeth: with 100 models or more, some implicit models must change with the flag, some round
// trips must be checked, and stock must hash most of the sample. Output: the run's size as the
// properties "models" and "steps" (mj_step calls in this process) of the XML report
// (--gtest_output=xml); every failure names the seed and the model index.
//
// Options (command line, or environment for ctest):
//   --models=N  MJPOS_PROPERTY_MODELS  number of models (default 500)
//   --seed=S    MJPOS_PROPERTY_SEED    seed (default 1)
//   --steps=T   MJPOS_PROPERTY_STEPS   steps per model and flag setting (default 50)
//   --model=I                          only model I of the seed
//   --xml                              with --model: print the model's MJCF and exit

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "support/one_dof.h"
#include "support/models.h"
#include "support/state_hash.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

namespace mjpos {
namespace {

//------------------------------ options and failures ----------------------------------------------

struct Options {
  int models = 500;
  std::uint64_t seed = 1;
  int steps = 50;
  int only = -1;  // one model index, or all
  bool xml = false;
};
Options options;

// the model being run, for crash reports (signal, sanitizer, mju_error)
char context[200] = "start-up";

void PrintContext() {
  char msg[400];
  int n = std::snprintf(msg, sizeof(msg), "property_test: died in %s\n", context);
  if (n > 0) {
    ssize_t ignored = write(STDERR_FILENO, msg, std::min<size_t>(n, sizeof(msg) - 1));
    (void)ignored;
  }
}

void OnSignal(int sig) {
  PrintContext();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// mju_error while stepping or inverting is recorded and ends that run, as in mjpos_statedump
// (stock 2.2.2 raises it on some models, e.g. "Rank-defficient Hessian in HessianDirect" with the
// sparse Jacobian and extreme gains); anywhere else it is a crash
std::jmp_buf error_jump;
bool error_armed = false;
char error_message[1000];

void OnMujocoError(const char* msg) {
  if (error_armed) {
    error_armed = false;
    std::snprintf(error_message, sizeof(error_message), "%s", msg);
    std::longjmp(error_jump, 1);
  }
  std::fprintf(stderr, "property_test: mju_error in %s: %s\n", context, msg);
  std::abort();
}

void OnMujocoWarning(const char*) {}  // counted through mjData.warning, not printed

void SetContext(int index) {
  std::snprintf(context, sizeof(context),
                "seed %" PRIu64 " model %d (reproduce: property_test --seed=%" PRIu64
                " --model=%d)", options.seed, index, options.seed, index);
}

// the flag's last step held an actuator at its forcerange (mj_stepForceLimit): its explicit
// force (actuator_force, of the step's start) inside the range, its applied force on a bound.
// mj_inverse with invdiscrete does not model the hold (doc/usage.md, "Torque limits").
bool HeldAnActuator(const mjModel* m, const mjData* d) {
  if (!(m->opt.enableflags & mjENBL_IMPLICITPOS)) return false;
  for (int i = 0; i < m->nu; ++i) {
    const mjtNum* range = m->actuator_forcerange + 2 * i;
    mjtNum f = d->actuator_force[i], step = d->actuator_force_step[i];
    if (m->actuator_forcelimited[i] && f > range[0] && f < range[1] &&
        (step == range[0] || step == range[1])) {
      return true;
    }
  }
  return false;
}

// property failures: all counted, the first ones reported in full
struct Failures {
  int count = 0;
  void Add(int index, const std::string& what) {
    if (++count > 20) return;
    if (index < 0) {
      ADD_FAILURE() << "seed " << options.seed << ": " << what;
    } else {
      ADD_FAILURE() << "seed " << options.seed << " model " << index << ": " << what
                    << " (reproduce: property_test --seed=" << options.seed << " --model="
                    << index << ")";
    }
  }
};

//------------------------------ random models -----------------------------------------------------

// splitmix64: the same integer sequence on every platform
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  double LogUniform(double lo, double hi) { return lo * std::pow(hi / lo, Uniform()); }
  int Int(int n) { return static_cast<int>(Next() % static_cast<std::uint64_t>(n)); }
  bool Chance(double p) { return Uniform() < p; }
  double Sign() { return Chance(0.5) ? 1.0 : -1.0; }

 private:
  std::uint64_t state_;
};

Rng ModelRng(int index, std::uint64_t stream) {
  Rng mix(options.seed);
  return Rng(mix.Next() ^ (0x632be59bd9b4e019ULL * (static_cast<std::uint64_t>(index) + 1)) ^
             stream);
}

// an MJCF number: exact, and nan/inf as MuJoCo's parser reads them
std::string Num(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return buf;
}

std::string Nums(std::initializer_list<double> xs) {
  std::string s;
  for (double x : xs) s += (s.empty() ? "" : " ") + Num(x);
  return s;
}

// a gain: mostly ordinary, a quarter of the time a bad or extreme value
double Gain(Rng& rng) {
  if (!rng.Chance(0.25)) return rng.LogUniform(0.1, 1e5);
  switch (rng.Int(10)) {
    case 0: return std::numeric_limits<double>::quiet_NaN();
    case 1: return std::numeric_limits<double>::infinity();
    case 2: return -std::numeric_limits<double>::infinity();
    case 3: return 1e300;
    case 4: return -rng.LogUniform(0.1, 1e4);
    case 5: return std::numeric_limits<double>::denorm_min();
    case 6: return rng.Sign() * 1e-310;
    case 7: return 0;
    default: return rng.LogUniform(1e5, 1e12);
  }
}

struct RandomModel {
  std::string xml;        // as compiled by this suite
  std::string stock_xml;  // without the flags stock 2.2.2 does not know (they are off)
};

class ModelWriter {
 public:
  explicit ModelWriter(Rng& rng) : rng_(rng) {}

  RandomModel Write() {
    int nbody = 1 + rng_.Int(6);
    parent_.resize(nbody);
    for (int b = 0; b < nbody; ++b) parent_[b] = rng_.Int(b + 1) - 1;  // -1: world

    std::string world;
    if (rng_.Chance(0.7)) world += "    <geom name=\"floor\" type=\"plane\" size=\"3 3 0.1\"/>\n";
    for (int b = 0; b < nbody; ++b) {
      if (parent_[b] < 0) world += Body(b, 2);
    }
    std::string tendons = Tendons();
    std::string actuators = Actuators();

    // options and flags
    const char* integrators[] = {"implicit", "implicit", "Euler", "RK4"};
    const double timesteps[] = {0.001, 0.002, 0.005, 0.01};
    std::string option = "  <option timestep=\"" + Num(timesteps[rng_.Int(4)]) +
                         "\" integrator=\"" + integrators[rng_.Int(4)] + "\"";
    if (rng_.Chance(0.2)) option += " cone=\"elliptic\"";
    if (rng_.Chance(0.2)) option += std::string(" solver=\"") + (rng_.Chance(0.5) ? "CG" : "PGS") +
                                    "\"";
    // stock 2.2.2's sparse Jacobian path raises mju_error "Rank-defficient Hessian" on a tendon
    // that lists a joint twice (both runs would end at once): dense there
    if (!repeated_joint_ && rng_.Chance(0.2)) option += " jacobian=\"sparse\"";
    option += ">\n    <flag";
    for (const char* flag : {"contact", "limit", "passive", "actuation", "gravity", "clampctrl",
                             "frictionloss", "warmstart", "constraint", "filterparent"}) {
      if (rng_.Chance(0.1)) option += std::string(" ") + flag + "=\"disable\"";
    }
    for (const char* flag : {"energy", "fwdinv", "override"}) {
      if (rng_.Chance(0.08)) option += std::string(" ") + flag + "=\"enable\"";
    }
    std::string new_flags;
    if (rng_.Chance(0.5)) new_flags += " implicitpos=\"enable\"";
    if (rng_.Chance(0.6)) new_flags += " invdiscrete=\"enable\"";
    if (rng_.Chance(0.3)) new_flags += " posweight=\"enable\"";
    std::string tail = "/>\n  </option>\n";

    std::string body = "  <worldbody>\n    <site name=\"sw\" pos=\"0.2 0.1 1\"/>\n" + world +
                       "  </worldbody>\n";
    if (!tendons.empty()) body += "  <tendon>\n" + tendons + "  </tendon>\n";
    if (!actuators.empty()) body += "  <actuator>\n" + actuators + "  </actuator>\n";
    body += "</mujoco>\n";
    // a small stack: mj_makeData dominates the run under ASan otherwise
    std::string head = "<mujoco>\n  <compiler angle=\"radian\"/>\n  <size nstack=\"100000\"/>\n";
    return {head + option + new_flags + tail + body, head + option + tail + body};
  }

 private:
  struct Joint {
    std::string name;
    int type;  // mjtJoint
    int body;
  };

  std::string Vec3(double lo, double hi) {
    double x = rng_.Uniform(lo, hi), y = rng_.Uniform(lo, hi), z = rng_.Uniform(lo, hi);
    return Nums({x, y, z});
  }

  // a random direction, not too short for the compiler
  std::string Axis() {
    double x, y, z;
    do {
      x = rng_.Uniform(-1, 1), y = rng_.Uniform(-1, 1), z = rng_.Uniform(-1, 1);
    } while (x * x + y * y + z * z < 0.01);
    return Nums({x, y, z});
  }

  std::string JointXml(int type, int body, const std::string& pad) {
    std::string name = "j" + std::to_string(joints_.size());
    joints_.push_back({name, type, body});
    static const char* kTypes[] = {"free", "ball", "slide", "hinge"};
    std::string s = pad + "<joint name=\"" + name + "\" type=\"" + kTypes[type] + "\"";
    if (type == mjJNT_HINGE || type == mjJNT_SLIDE) {
      s += " axis=\"" + Axis() + "\"";
      if (rng_.Chance(0.5)) s += " pos=\"" + Vec3(-0.05, 0.05) + "\"";
      if (rng_.Chance(0.3)) {
        double lo = -rng_.Uniform(0.05, 1.5), hi = rng_.Uniform(0.05, 1.5);
        s += " limited=\"true\" range=\"" + Nums({lo, hi}) + "\"";
      }
      if (rng_.Chance(0.2)) s += " springref=\"" + Num(rng_.Uniform(-0.5, 0.5)) + "\"";
    } else if (type == mjJNT_BALL && rng_.Chance(0.3)) {
      s += " limited=\"true\" range=\"0 " + Num(rng_.Uniform(0.2, 2)) + "\"";
    }
    if (rng_.Chance(0.3)) s += " stiffness=\"" + Num(rng_.Chance(0.8) ? rng_.LogUniform(0.1, 1e4)
                                                                       : Gain(rng_)) + "\"";
    if (rng_.Chance(0.4)) s += " damping=\"" + Num(rng_.Uniform(0, 5)) + "\"";
    if (rng_.Chance(0.5)) s += " armature=\"" + Num(rng_.LogUniform(1e-4, 0.1)) + "\"";
    if (rng_.Chance(0.05)) s += " frictionloss=\"" + Num(rng_.Uniform(0.01, 0.5)) + "\"";
    return s + "/>\n";
  }

  std::string Body(int b, int depth) {
    std::string pad(2 * depth, ' '), in(2 * depth + 2, ' ');
    std::string pos = parent_[b] < 0 ? Nums({rng_.Uniform(-0.6, 0.6), rng_.Uniform(-0.6, 0.6),
                                             rng_.Uniform(0.15, 1.2)})
                                     : Vec3(-0.3, 0.3);
    std::string s = pad + "<body name=\"b" + std::to_string(b) + "\" pos=\"" + pos + "\"";
    if (rng_.Chance(0.3)) s += " euler=\"" + Vec3(-1, 1) + "\"";
    s += ">\n";

    // joints: a free joint alone on a child of the world, a ball possibly followed by a slide, or
    // up to two of hinge and slide (a hinge next to a ball would make the mass matrix singular);
    // body 0 has at least one (stock 2.2.2's mj_makeMSparse passes NULL to memcpy for nv = 0, which
    // UBSan reports)
    if (parent_[b] < 0 && rng_.Chance(0.25)) {
      s += JointXml(mjJNT_FREE, b, in);
    } else if (rng_.Chance(0.25)) {
      s += JointXml(mjJNT_BALL, b, in);
      if (rng_.Chance(0.3)) s += JointXml(mjJNT_SLIDE, b, in);
    } else {
      int n = b == 0 ? 1 + rng_.Int(2) : rng_.Int(3);
      for (int k = 0; k < n; ++k) {
        s += JointXml(rng_.Chance(0.6) ? mjJNT_HINGE : mjJNT_SLIDE, b, in);
      }
    }

    // one geom
    static const char* kGeoms[] = {"sphere", "capsule", "box"};
    int g = rng_.Int(3);
    double r = rng_.Uniform(0.03, 0.12);
    std::string size = g == 0   ? Num(r)
                       : g == 1 ? Nums({r, rng_.Uniform(0.03, 0.2)})
                                : Nums({r, rng_.Uniform(0.03, 0.12), rng_.Uniform(0.03, 0.12)});
    s += in + "<geom type=\"" + kGeoms[g] + "\" size=\"" + size + "\"";
    if (rng_.Chance(0.5)) s += " pos=\"" + Vec3(-0.05, 0.05) + "\"";
    if (rng_.Chance(0.3)) s += " mass=\"" + Num(rng_.LogUniform(0.01, 10)) + "\"";
    if (rng_.Chance(0.15)) s += " contype=\"0\" conaffinity=\"0\"";
    s += "/>\n";

    s += in + "<site name=\"s" + std::to_string(b) + "\" pos=\"0.05 0 0\"/>\n";
    for (int c = b + 1; c < static_cast<int>(parent_.size()); ++c) {
      if (parent_[c] == b) s += Body(c, depth + 1);
    }
    return s + pad + "</body>\n";
  }

  // a site: the world's or a body's
  std::string Site() {
    int b = rng_.Int(parent_.size() + 1) - 1;
    return b < 0 ? "sw" : "s" + std::to_string(b);
  }

  // a joint for a tendon: mostly a hinge or slide, sometimes any
  int TendonJoint() {
    std::vector<int> scalar;
    for (int j = 0; j < static_cast<int>(joints_.size()); ++j) {
      if (joints_[j].type == mjJNT_HINGE || joints_[j].type == mjJNT_SLIDE) scalar.push_back(j);
    }
    if (!scalar.empty() && rng_.Chance(0.9)) return scalar[rng_.Int(scalar.size())];
    return rng_.Int(joints_.size());
  }

  std::string Tendons() {
    std::string s;
    if (joints_.empty()) return s;
    int n = rng_.Int(3);
    for (int t = 0; t < n; ++t) {
      // a spatial tendon between two sites (of the world or of bodies, on one chain or two)
      if (rng_.Chance(0.25)) {
        std::string a = Site(), b = Site();
        while (b == a) b = Site();
        s += "    <spatial name=\"t" + std::to_string(t) + "\"><site site=\"" + a +
             "\"/><site site=\"" + b + "\"/></spatial>\n";
        ++ntendon_;
        continue;
      }
      s += "    <fixed name=\"t" + std::to_string(t) + "\"";
      if (rng_.Chance(0.15)) {
        s += " limited=\"true\" range=\"" + Nums({-rng_.Uniform(0.1, 1), rng_.Uniform(0.1, 1)}) +
             "\"";
      }
      if (rng_.Chance(0.1)) s += " stiffness=\"" + Num(rng_.LogUniform(0.1, 100)) + "\"";
      if (rng_.Chance(0.1)) s += " damping=\"" + Num(rng_.Uniform(0, 2)) + "\"";
      s += ">\n";
      int entries = 1 + rng_.Int(3), previous = -1;
      std::set<int> listed;
      for (int k = 0; k < entries; ++k) {
        int j = previous >= 0 && rng_.Chance(0.2) ? previous : TendonJoint();
        repeated_joint_ = repeated_joint_ || !listed.insert(j).second;
        s += "      <joint joint=\"" + joints_[j].name + "\" coef=\"" +
             Num(rng_.Sign() * rng_.Uniform(0.2, 2)) + "\"/>\n";
        previous = j;
      }
      s += "    </fixed>\n";
      ++ntendon_;
    }
    return s;
  }

  // stateless actuators first, those with activation (filter, muscle) last, as the compiler
  // requires
  std::string Actuators() {
    std::string stateless, stateful;
    if (joints_.empty()) return stateless;
    int n = rng_.Int(5);
    for (int a = 0; a < n; ++a) {
      std::string s = "    <general";
      if (ntendon_ && rng_.Chance(0.3)) {
        s += " tendon=\"t" + std::to_string(rng_.Int(ntendon_)) + "\"";
      } else if (rng_.Chance(0.15)) {  // a site, mostly with a refsite
        std::string site = Site();
        s += " site=\"" + site + "\"";
        if (rng_.Chance(0.7)) {
          std::string ref = Site();
          while (ref == site) ref = Site();
          s += " refsite=\"" + ref + "\"";
        }
      } else {
        s += " joint=\"" + joints_[rng_.Int(joints_.size())].name + "\"";
      }
      double kp = Gain(rng_);
      double kv = rng_.Chance(0.5) ? 0 : (rng_.Chance(0.9) ? rng_.Uniform(0, 10) : Gain(rng_));
      int kind = rng_.Int(10);
      bool has_act = kind == 9;
      if (kind < 6 || kind == 9) {  // servo: force = kp (ctrl - length) - kv velocity
        s += " gaintype=\"fixed\" gainprm=\"" + Num(kp) + "\" biastype=\"affine\" biasprm=\"" +
             Nums({0, -kp, -kv}) + "\"";
        if (kind == 9) s += " dyntype=\"filter\" dynprm=\"" + Num(rng_.Uniform(0.01, 0.1)) + "\"";
      } else if (kind < 8) {  // affine gain: the slope depends on the control
        s += " gaintype=\"affine\" gainprm=\"" +
             Nums({rng_.Uniform(-1, 1), rng_.Sign() * Gain(rng_), -rng_.Uniform(0, 2)}) + "\"";
        if (rng_.Chance(0.7)) {
          s += " biastype=\"affine\" biasprm=\"" + Nums({rng_.Uniform(-1, 1), -kp, -kv}) + "\"";
        }
      } else if (rng_.Chance(0.5)) {  // motor
        s += " gainprm=\"" + Num(kp) + "\"";
      } else {  // muscle of peak force kp: its gain and bias curves, its activation dynamics
        std::string prm = Nums({0.75, 1.05, kp, 200, 0.5, 1.6, 1.5, 1.3, 1.2});
        double l = rng_.LogUniform(0.05, 2);
        s += " gaintype=\"muscle\" biastype=\"muscle\" dyntype=\"muscle\" dynprm=\"0.01 0.04\""
             " gainprm=\"" + prm + "\" biasprm=\"" + prm + "\" lengthrange=\"" + Nums({-l, l}) +
             "\"";
        has_act = true;
      }
      if (rng_.Chance(0.25)) {
        s += " gear=\"" + Vec3(-3, 3) + " " + Vec3(-3, 3) + "\"";
      }
      if (rng_.Chance(0.3)) {
        double c = rng_.Uniform(0.2, 2);
        s += " ctrllimited=\"true\" ctrlrange=\"" + Nums({-c, c}) + "\"";
      }
      if (rng_.Chance(0.2)) {
        double f = rng_.LogUniform(0.1, 100);
        s += " forcelimited=\"true\" forcerange=\"" + Nums({-f, f}) + "\"";
      }
      s += "/>\n";
      (has_act ? stateful : stateless) += s;
    }
    return stateless + stateful;
  }

  Rng& rng_;
  std::vector<int> parent_;
  std::vector<Joint> joints_;
  int ntendon_ = 0;
  bool repeated_joint_ = false;  // a tendon lists a joint twice
};

RandomModel MakeModel(int index) {
  Rng rng = ModelRng(index, 0);
  return ModelWriter(rng).Write();
}

//------------------------------ stepping ----------------------------------------------------------

// the start of both runs: state, controls (now and then a bad one) and applied forces
struct Start {
  std::vector<double> qpos, qvel, ctrl, qfrc_applied, act;
};

Start MakeStart(const mjModel* m, int index) {
  Rng rng = ModelRng(index, 1);
  Start s;
  s.qpos.assign(m->qpos0, m->qpos0 + m->nq);
  for (int j = 0; j < m->njnt; ++j) {
    double* q = s.qpos.data() + m->jnt_qposadr[j];
    switch (m->jnt_type[j]) {
      case mjJNT_FREE:
        for (int i = 0; i < 3; ++i) q[i] += rng.Uniform(-0.1, 0.1);
        q += 3;
        [[fallthrough]];
      case mjJNT_BALL:
        for (int i = 0; i < 4; ++i) q[i] += rng.Uniform(-0.3, 0.3);
        mju_normalize4(q);
        break;
      default:
        q[0] += rng.Uniform(-0.5, 0.5);
    }
  }
  double speed = rng.Chance(0.2) ? 5 : 1;
  for (int i = 0; i < m->nv; ++i) s.qvel.push_back(speed * rng.Uniform(-1, 1));
  for (int i = 0; i < m->nu; ++i) s.ctrl.push_back(rng.Uniform(-1, 1));
  if (m->nu && rng.Chance(0.03)) s.ctrl[rng.Int(m->nu)] = std::numeric_limits<double>::quiet_NaN();
  s.qfrc_applied.assign(m->nv, 0.0);
  if (rng.Chance(0.3)) {
    for (double& f : s.qfrc_applied) f = rng.Uniform(-1, 1);
  }
  for (int i = 0; i < m->na; ++i) s.act.push_back(rng.Uniform(0, 1));  // muscles active
  return s;
}

bool AllFinite(const double* x, int n) {
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return false;
  }
  return true;
}

// |x| <= 1e3 (m/s, rad/s): beyond, the step's matrix M - h qDeriv is dominated by the Coriolis
// derivatives and its LU factorization (no pivoting) loses digits, forward and inverse alike
// (round-trip residuals up to 1e-8 at 1e6 rad/s, flag off as on)
bool Moderate(const double* x, int n) {
  for (int i = 0; i < n; ++i) {
    if (!(std::abs(x[i]) <= 1e3)) return false;
  }
  return true;
}

// the gains and springs that the round trip needs finite
bool FiniteGains(const mjModel* m) {
  return AllFinite(m->actuator_gainprm, mjNGAIN * m->nu) &&
         AllFinite(m->actuator_biasprm, mjNBIAS * m->nu) && AllFinite(m->jnt_stiffness, m->njnt);
}

bool Scalar(const mjModel* m, int j) {
  return m->jnt_type[j] == mjJNT_HINGE || m->jnt_type[j] == mjJNT_SLIDE;
}

// An independent reading of the flag's scope (doc/scope.md, "Scope: what goes into K"): the
// transmission of actuator i is a hinge, slide or ball joint, a fixed tendon over hinges and
// slides, each listed once, a spatial tendon between two sites, or a site with a refsite, on one
// chain or several branches; exact: only those whose term is the exact derivative (a hinge, a
// slide, a fixed tendon), not the Gauss-Newton term
bool ScopeTransmission(const mjModel* m, int i, bool exact = false) {
  int id = m->actuator_trnid[2 * i];
  if (m->actuator_trntype[i] == mjTRN_JOINT) {
    return Scalar(m, id) || (!exact && m->jnt_type[id] == mjJNT_BALL);
  }
  if (m->actuator_trntype[i] == mjTRN_SITE) {
    int ref = m->actuator_trnid[2 * i + 1];
    return !exact && ref >= 0;
  }
  if (m->actuator_trntype[i] != mjTRN_TENDON || m->tendon_num[id] == 0) return false;
  int adr = m->tendon_adr[id], num = m->tendon_num[id];
  if (m->wrap_type[adr] == mjWRAP_SITE) return !exact;  // two sites
  for (int a = adr; a < adr + num; ++a) {
    int ja = m->wrap_objid[a];
    if (m->wrap_type[a] != mjWRAP_JOINT || !Scalar(m, ja)) return false;
    for (int b = adr; b < a; ++b) {
      int jb = m->wrap_objid[b];
      if (ja == jb) return false;
    }
  }
  return true;
}

// the force of muscle actuator i (muscle gain and bias) at length len with its activation and
// velocity, from 2.2.2's curves
double MuscleForce(const mjModel* m, const mjData* d, int i, double len) {
  const double* range = m->actuator_lengthrange + 2 * i;
  double act = d->act[i - (m->nu - m->na)], acc0 = m->actuator_acc0[i];
  return act * mju_muscleGain(len, d->actuator_velocity[i], range, acc0,
                              m->actuator_gainprm + mjNGAIN * i) +
         mju_muscleBias(len, range, acc0, m->actuator_biasprm + mjNBIAS * i);
}

bool Muscle(const mjModel* m, int i) {
  return m->actuator_gaintype[i] == mjGAIN_MUSCLE || m->actuator_biastype[i] == mjBIAS_MUSCLE;
}

// true if muscle actuator i's peak force (prm[2] of its gain or bias, where positive) is
// subnormal: its force and slopes are then a few multiples of the least subnormal, so whether a
// slope rounds to a negative number or to 0 depends on the order of the operations, in the engine
// (mjd_muscleGainLength) as in one-sided differences of its force (MuscleSlopes, which see 0)
bool SubnormalMuscleForce(const mjModel* m, int i) {
  double gain = m->actuator_gainprm[mjNGAIN * i + 2], bias = m->actuator_biasprm[mjNBIAS * i + 2];
  for (double force : {gain, bias}) {
    if (force > 0 && force < std::numeric_limits<double>::min()) return true;
  }
  return false;
}

// the slopes of muscle actuator i's force in its length just below and just above its length,
// by one-sided differences: they differ in sign at a kink of its curves, or where one is zero
void MuscleSlopes(const mjModel* m, const mjData* d, int i, double* below, double* above) {
  double len = d->actuator_length[i];
  double e = 1e-7 * (m->actuator_lengthrange[2 * i + 1] - m->actuator_lengthrange[2 * i]);
  double f = MuscleForce(m, d, i, len);
  *below = (f - MuscleForce(m, d, i, len - e)) / e;
  *above = (MuscleForce(m, d, i, len + e) - f) / e;
}

// d force / d velocity of actuator i as qDeriv has it (doc/scope.md): an affine bias's and an
// affine or muscle gain's velocity terms, the gain's times the raw ctrl (or act); a muscle gain's
// by central differences of 2.2.2's curve in the velocity
double VelocitySlope(const mjModel* m, const mjData* d, int i) {
  double input = m->actuator_dyntype[i] != mjDYN_NONE ? d->act[i - (m->nu - m->na)] : d->ctrl[i];
  bool affine = m->actuator_biastype[i] == mjBIAS_AFFINE;
  double slope = affine ? m->actuator_biasprm[mjNBIAS * i + 2] : 0, gain = 0;
  if (m->actuator_gaintype[i] == mjGAIN_AFFINE) {
    gain = m->actuator_gainprm[mjNGAIN * i + 2];
  } else if (m->actuator_gaintype[i] == mjGAIN_MUSCLE) {
    const double *range = m->actuator_lengthrange + 2 * i, *prm = m->actuator_gainprm + mjNGAIN * i;
    double len = d->actuator_length[i], vel = d->actuator_velocity[i], acc0 = m->actuator_acc0[i];
    double e = 1e-6 * (1 + std::abs(vel));
    gain = (mju_muscleGain(len, vel + e, range, acc0, prm) -
            mju_muscleGain(len, vel - e, range, acc0, prm)) / (2 * e);
  }
  if (gain != 0) slope += gain * input;
  return slope;
}

// true if actuator i's moment is on several branches and its velocity slope is beyond what the
// step can take back out of its matrix, h |d force / d velocity| > mjMAXVAL (doc/scope.md)
bool BranchVelocityTooLarge(const mjModel* m, const mjData* d, int i) {
  return mjd_actuatorBranches(m, i) &&
         !(m->opt.timestep * std::abs(VelocitySlope(m, d, i)) <= mjMAXVAL);
}

// the scope of doc/scope.md for actuator i at d's state (after mj_forward): restoring and in
// scope, so that its slope enters K. slope = biasprm[1] + gainprm[1] * (ctrl or act), affine gain
// and bias types only; left explicit on its forcerange clamp, with a slope >= 0, not finite or
// stiffer than h^2 |slope| <= mjMAXVAL, on several branches with a velocity slope beyond
// h |slope| <= mjMAXVAL (BranchVelocityTooLarge), or an out-of-scope transmission; a muscle's
// slope is the difference of its curves in its length (MuscleSlopes), restoring when it is on
// both sides
bool ExpectRestoring(const mjModel* m, const mjData* d, int i) {
  if ((m->opt.disableflags & mjDSBL_ACTUATION) || !ScopeTransmission(m, i)) return false;
  int gaintype = m->actuator_gaintype[i], biastype = m->actuator_biastype[i];
  if (Muscle(m, i)) {
    double below, above, h = m->opt.timestep;
    MuscleSlopes(m, d, i, &below, &above);
    double f = d->actuator_force[i];
    bool clamped = m->actuator_forcelimited[i] &&
                   (f <= m->actuator_forcerange[2 * i] || f >= m->actuator_forcerange[2 * i + 1]);
    return !clamped && below < 0 && above < 0 && std::isfinite(below) &&
           -below * h * h <= mjMAXVAL && !BranchVelocityTooLarge(m, d, i);
  }
  if (!(gaintype == mjGAIN_FIXED || gaintype == mjGAIN_AFFINE) ||
      !(biastype == mjBIAS_NONE || biastype == mjBIAS_AFFINE)) {
    return false;
  }
  if (m->actuator_forcelimited[i]) {
    double f = d->actuator_force[i];
    if (f <= m->actuator_forcerange[2 * i] || f >= m->actuator_forcerange[2 * i + 1]) return false;
  }
  double slope = biastype == mjBIAS_AFFINE ? m->actuator_biasprm[mjNBIAS * i + 1] : 0;
  double g1 = m->actuator_gainprm[mjNGAIN * i + 1];
  if (gaintype == mjGAIN_AFFINE && g1 != 0) {
    double input = 0;
    if (m->actuator_dyntype[i] != mjDYN_NONE) {
      input = d->act[i - (m->nu - m->na)];
    } else {
      // the clamped control; mj_fwdActuation uses zeros for all if one is bad
      for (int k = 0; k < m->nu; ++k) {
        double c = d->ctrl[k];
        if (m->actuator_ctrllimited[k] && !(m->opt.disableflags & mjDSBL_CLAMPCTRL)) {
          c = mju_clip(c, m->actuator_ctrlrange[2 * k], m->actuator_ctrlrange[2 * k + 1]);
        }
        if (!(std::abs(c) <= mjMAXVAL)) {
          input = 0;
          break;
        }
        if (k == i) input = c;
      }
    }
    slope += g1 * input;
  }
  double h = m->opt.timestep;
  return slope < 0 && std::isfinite(slope) && -slope * h * h <= mjMAXVAL &&
         !BranchVelocityTooLarge(m, d, i);
}

// true if no force can contribute to K whatever the state, so that flag on must equal flag off
// under implicit
bool NothingInScope(const mjModel* m) {
  if (!(m->opt.disableflags & mjDSBL_PASSIVE)) {
    for (int j = 0; j < m->njnt; ++j) {
      if (m->jnt_stiffness[j] > 0 && std::isfinite(m->jnt_stiffness[j])) {
        return false;  // every joint type's spring (ball and free too)
      }
    }
  }
  if (m->opt.disableflags & mjDSBL_ACTUATION) return true;
  for (int i = 0; i < m->nu; ++i) {
    if (!ScopeTransmission(m, i)) continue;
    if (Muscle(m, i)) return false;  // its slope depends on its length
    if (m->actuator_gaintype[i] == mjGAIN_AFFINE && m->actuator_gainprm[mjNGAIN * i + 1] != 0) {
      return false;  // the slope depends on the control
    }
    double slope = m->actuator_biastype[i] == mjBIAS_AFFINE ? m->actuator_biasprm[mjNBIAS * i + 1]
                                                             : 0;
    if (slope < 0 && std::isfinite(slope)) return false;
  }
  return true;
}

// true if every force that can make the step diverge is in the flag's scope: finite gains and
// springs, no out-of-scope or non-restoring position slope, no negative damping, no spring on a
// ball, free joint or tendon and no servo on a ball joint (a ball or free joint's spring and a
// ball joint's servo are in K, but their rotation's term is the derivative at rest only, so no
// claim is made for them here). Only there is "never more
// resets" the flag's claim. Elsewhere an
// explicit force outside its scope can diverge in both runs, and the flag, by changing the
// in-scope part, shifts the trajectory: the runs reset at a different cadence (a ball servo reset
// every 3 steps flag off, every 2 flag on), or one wanders into a state where a NaN or infinite
// gain gives a NaN force (inf - inf) and the other does not.
bool OnlyScopeCanDiverge(const mjModel* m, const std::vector<double>& ctrl) {
  if (!FiniteGains(m)) return false;
  bool passive = !(m->opt.disableflags & mjDSBL_PASSIVE);
  for (int j = 0; passive && j < m->njnt; ++j) {
    double k = m->jnt_stiffness[j];
    if (Scalar(m, j) ? k < 0 : k != 0) return false;
  }
  for (int t = 0; passive && t < m->ntendon; ++t) {
    if (m->tendon_stiffness[t] != 0) return false;
  }
  if (m->opt.disableflags & mjDSBL_ACTUATION) return true;
  bool bad_ctrl = !AllFinite(ctrl.data(), m->nu);  // mj_fwdActuation zeroes all controls
  for (int i = 0; i < m->nu; ++i) {
    const double* gain = m->actuator_gainprm + mjNGAIN * i;
    const double* bias = m->actuator_biasprm + mjNBIAS * i;
    bool affine_gain = m->actuator_gaintype[i] == mjGAIN_AFFINE;
    double input = bad_ctrl ? 0 : ctrl[i];
    if (m->actuator_ctrllimited[i] && !(m->opt.disableflags & mjDSBL_CLAMPCTRL)) {
      input = mju_clip(input, m->actuator_ctrlrange[2 * i], m->actuator_ctrlrange[2 * i + 1]);
    }
    if (m->actuator_dyntype[i] != mjDYN_NONE && affine_gain) return false;  // input is act
    if (Muscle(m, i)) return false;  // its descending limb need not be restoring
    double slope = 0, damping = 0;
    if (m->actuator_biastype[i] == mjBIAS_AFFINE) {
      slope = bias[1];
      damping = bias[2];
    }
    if (affine_gain) {
      slope += gain[1] * input;
      damping += gain[2] * input;
    }
    if (slope > 0 || damping > 0) return false;
    if (slope < 0 && !ScopeTransmission(m, i, true)) return false;
  }
  return true;
}

struct RunResult {
  std::vector<std::uint64_t> hashes;  // state after each step
  int warnings = 0;                   // bad-state warnings
  int resets = 0;                     // steps that were not StepStable
  int roundtrips = 0;
  int momenta = 0;                    // steps whose applied force was checked
  int substepped = 0;                 // steps taken as substeps (neither identity checked)
  std::string error;                  // mju_error that ended the run, with its step
  bool contact = false;               // a contact was active at some step
  double max_qacc = 0;                // largest |qacc| that mj_checkAcc saw
  bool indefinite = false;            // M - h qDeriv of some step not positive definite
};

// One StepStable step, or one call of the engine (mj_forward, mj_inverse); false if MuJoCo
// raised mju_error (error_message). No object with a destructor lives between setjmp and the
// engine.
bool GuardedStep(const mjModel* m, mjData* d, bool* stable) {
  if (setjmp(error_jump)) return false;
  error_armed = true;
  *stable = StepStable(m, d, 1);
  error_armed = false;
  return true;
}

bool Guarded(void (*call)(const mjModel*, mjData*), const mjModel* m, mjData* d) {
  if (setjmp(error_jump)) return false;
  error_armed = true;
  call(m, d);
  error_armed = false;
  return true;
}

constexpr double kRoundTripTol = 1e-9;
constexpr double kMomentumTol = 1e-8;

// the change of momentum of a step against the forces it reports it applied: |M (v+ - v)/h -
// (qfrc_smooth_step + qfrc_constraint)|, relative to the largest norm of the three terms and of
// the explicit smooth force qfrc_smooth (a stiff servo's explicit force and its term of K nearly
// cancel in the applied force: the step's solve and that sum round at its size), and to the
// rounding of v+ = v + h qacc (a few eps |M v| / h: a tiny qacc leaves v+ = v); M is the step's
// (mj_step leaves the start's qM), v the velocity before it
double MomentumResidual(const mjModel* m, const mjData* d, const std::vector<double>& qvel0,
                        std::vector<double>* scratch) {
  int nv = m->nv;
  double h = m->opt.timestep;
  scratch->assign(3 * nv, 0.0);
  double* dv = scratch->data();
  double* mdv = dv + nv;
  double* mv = dv + 2 * nv;
  for (int i = 0; i < nv; ++i) dv[i] = (d->qvel[i] - qvel0[i]) / h;
  mj_mulM(m, d, mdv, dv);
  mj_mulM(m, d, mv, qvel0.data());
  double res = 0, change = 0, smooth = 0, constraint = 0, explicit_force = 0, momentum = 0;
  for (int i = 0; i < nv; ++i) {
    double r = mdv[i] - (d->qfrc_smooth_step[i] + d->qfrc_constraint[i]);
    res += r * r;
    change += mdv[i] * mdv[i];
    smooth += d->qfrc_smooth_step[i] * d->qfrc_smooth_step[i];
    constraint += d->qfrc_constraint[i] * d->qfrc_constraint[i];
    explicit_force += d->qfrc_smooth[i] * d->qfrc_smooth[i];
    momentum += mv[i] * mv[i];
  }
  // the residual passes at kMomentumTol of the largest term plus the whole rounding of v+
  double rounding = 1e3 * std::numeric_limits<double>::epsilon() * std::sqrt(momentum) / h;
  double scale = std::sqrt(std::max({change, smooth, constraint, explicit_force})) +
                 rounding / kMomentumTol;
  return scale > 0 ? std::sqrt(res) / scale : std::sqrt(res);
}

// Upper bounds of the stiffness and damping that the integrators fold into the step: sum over
// actuators of |slope| |moment|_1^2 (position and velocity) plus joint stiffness and damping
void GainBounds(const mjModel* m, const mjData* pre, const mjData* d, double* kb, double* db) {
  *kb = *db = 0;
  bool bad_ctrl = !AllFinite(pre->ctrl, m->nu);
  for (int i = 0; i < m->nu; ++i) {
    double input = bad_ctrl ? 0 : pre->ctrl[i];
    if (m->actuator_dyntype[i] != mjDYN_NONE) input = pre->act[i - (m->nu - m->na)];
    const double* gain = m->actuator_gainprm + mjNGAIN * i;
    const double* bias = m->actuator_biasprm + mjNBIAS * i;
    double moment = 0;
    for (int j = 0; j < m->nv; ++j) moment += std::abs(d->actuator_moment[i * m->nv + j]);
    *kb += (std::abs(bias[1]) + std::abs(gain[1] * input)) * moment * moment;
    *db += (std::abs(bias[2]) + std::abs(gain[2] * input)) * moment * moment;
  }
  for (int j = 0; j < m->njnt; ++j) *kb += std::abs(m->jnt_stiffness[j]);
  for (int i = 0; i < m->nv; ++i) *db += m->dof_damping[i];
}

// mj_inverse (invdiscrete) on the pre-step inputs of `pre` with the discrete acceleration of the
// step that took `pre` to `d`; the residual against the step's applied forces, relative to the
// largest force in the balance (M - h D + h^2 K) a + h K v + bias - passive = applied
double RoundTripResidual(const mjModel* m, const mjData* pre, const mjData* d, mjData* inv) {
  int nv = m->nv;
  double h = m->opt.timestep;
  inv->time = pre->time;  // all mj_inverse reads (mj_resetData would clear megabytes)
  mju_copy(inv->qpos, pre->qpos, m->nq);
  mju_copy(inv->qvel, pre->qvel, nv);
  mju_copy(inv->act, pre->act, m->na);
  mju_copy(inv->ctrl, pre->ctrl, m->nu);
  mju_copy(inv->qfrc_applied, pre->qfrc_applied, nv);
  for (int i = 0; i < nv; ++i) inv->qacc[i] = (d->qvel[i] - pre->qvel[i]) / h;
  if (!Guarded(mj_inverse, m, inv)) return std::numeric_limits<double>::quiet_NaN();

  // the scale: each term of the balance, bounded where the step folds it in (RelDiff would divide
  // by the applied force alone, which may be zero or denormal here), and gravity's torques before
  // they cancel
  std::vector<double> mqacc(nv);
  mj_mulM(m, inv, mqacc.data(), inv->qacc);
  double kb, db, a = 0, v = 0;
  GainBounds(m, pre, d, &kb, &db);
  for (int i = 0; i < nv; ++i) {
    a = std::max(a, std::abs(inv->qacc[i]));
    v = std::max(v, std::abs(pre->qvel[i]));
  }
  double mass = 0;
  for (int b = 0; b < m->nbody; ++b) mass += m->body_mass[b];
  double scale = std::max({h * (h * a + v) * kb, h * a * db,
                           mass * mju_norm3(m->opt.gravity) * m->stat.extent,
                           std::numeric_limits<double>::min()});
  if (m->opt.integrator == mjINT_IMPLICIT) {
    // h qDeriv a, with the Coriolis part that dominates at high spin (mj_inverse left qDeriv), and
    // with the rounding of a = (v+ - v)/h itself, eps (|v+| + |v|)/h: where h qDeriv dwarfs M (kv
    // 1e300 on a clamped servo) the step's a is below that rounding, and h qDeriv multiplies it
    for (int i = 0; i < nv; ++i) {
      double row = 0;
      for (int k = inv->D_rowadr[i]; k < inv->D_rowadr[i] + inv->D_rownnz[i]; ++k) {
        int c = inv->D_colind[k];
        double rounding = DBL_EPSILON * (std::abs(d->qvel[c]) + std::abs(pre->qvel[c])) / h;
        row += std::abs(inv->qDeriv[k]) * (std::abs(inv->qacc[c]) + rounding);
      }
      scale = std::max(scale, h * row);
    }
  }
  double residual = 0;
  for (int i = 0; i < nv; ++i) {
    double applied = d->qfrc_applied[i] + d->qfrc_actuator[i];
    residual = std::max(residual, std::abs(inv->qfrc_inverse[i] - applied));
    for (double f : {applied, inv->qfrc_bias[i], inv->qfrc_passive[i], mqacc[i]}) {
      scale = std::max(scale, std::abs(f));
    }
  }
  return residual / scale;
}

// true unless the implicit step's own matrix M - h qDeriv, as the step just made it (qM and
// qDeriv are the step's), has a symmetric part that is not positive definite: its velocity terms
// then are not dissipative, and at high spin on small inertias the Coriolis and centrifugal
// derivatives bring it near singular, where the step of either run can diverge (true for the
// other integrators, which do not use it); a: scratch, resized to nv x nv
bool StepMatrixPositive(const mjModel* m, const mjData* d, std::vector<double>& a) {
  if (m->opt.integrator != mjINT_IMPLICIT) return true;
  int nv = m->nv;
  a.resize(nv * nv);
  mj_fullM(m, a.data(), d->qM);
  for (int i = 0; i < nv; ++i) {
    for (int k = d->D_rowadr[i]; k < d->D_rowadr[i] + d->D_rownnz[i]; ++k) {
      int j = d->D_colind[k];
      a[i * nv + j] -= 0.5 * m->opt.timestep * d->qDeriv[k];
      a[j * nv + i] -= 0.5 * m->opt.timestep * d->qDeriv[k];
    }
  }
  for (int c = 0; c < nv; ++c) {  // Cholesky, in place in the lower triangle
    for (int k = 0; k < c; ++k) a[c * nv + c] -= a[c * nv + k] * a[c * nv + k];
    if (!(a[c * nv + c] > 0)) return false;
    a[c * nv + c] = std::sqrt(a[c * nv + c]);
    for (int r = c + 1; r < nv; ++r) {
      for (int k = 0; k < c; ++k) a[r * nv + c] -= a[r * nv + k] * a[c * nv + k];
      a[r * nv + c] /= a[c * nv + c];
    }
  }
  return true;
}

// the three mjData of a run, made once per model (under ASan, mj_makeData dominates otherwise),
// and the step matrix's scratch (StepMatrixPositive, each stable step)
struct RunData {
  DataPtr d, pre, inv;
  std::vector<double> matrix;
};

// a residual of a run's step beyond its tolerance (NaN included), reported once per run
void ReportResidual(const char* check, const char* what, double res, double tol, bool flag,
                    int step, int index, bool* reported, Failures* failures) {
  if (res <= tol || *reported) return;
  *reported = true;
  char msg[200];
  std::snprintf(msg, sizeof(msg), "%s, flag %s, step %d: %s %.3g > %.0e", check,
                flag ? "on" : "off", step, what, res, tol);
  failures->Add(index, msg);
}

RunResult Simulate(mjModel* m, const Start& start, bool flag, bool roundtrip, int index,
                   RunData* data, Failures* failures) {
  SetEnable(m, mjENBL_IMPLICITPOS, flag);
  DataPtr& d = data->d;
  DataPtr& pre = data->pre;
  DataPtr& inv = data->inv;
  mj_resetData(m, d.get());
  mju_copy(d->qpos, start.qpos.data(), m->nq);
  mju_copy(d->act, start.act.data(), m->na);
  mju_copy(d->qvel, start.qvel.data(), m->nv);

  RunResult r;
  const int bad[] = {mjWARN_BADQPOS, mjWARN_BADQVEL, mjWARN_BADQACC};
  bool roundtrip_failed = false, momentum_failed = false;
  std::vector<double> qvel0(m->nv), scratch;
  for (int t = 0; t < options.steps; ++t) {
    // inputs, every step (a reset zeroes them); bad-state counters per step (a reset zeroes them)
    mju_copy(d->ctrl, start.ctrl.data(), m->nu);
    mju_copy(d->qfrc_applied, start.qfrc_applied.data(), m->nv);
    for (int w : bad) d->warning[w].number = 0;
    if (roundtrip) {  // the inputs of the step (mj_copyData would copy megabytes)
      pre->time = d->time;
      mju_copy(pre->qpos, d->qpos, m->nq);
      mju_copy(pre->qvel, d->qvel, m->nv);
      mju_copy(pre->act, d->act, m->na);
      mju_copy(pre->ctrl, d->ctrl, m->nu);
      mju_copy(pre->qfrc_applied, d->qfrc_applied, m->nv);
    }

    mju_copy(qvel0.data(), d->qvel, m->nv);

    bool stable;
    int passes = d->timer[mjTIMER_FORWARD].number;
    if (!GuardedStep(m, d.get(), &stable)) {
      r.error = "mju_error at step " + std::to_string(t) + ": " + error_message;
      break;
    }
    r.resets += !stable;
    r.contact = r.contact || d->ncon > 0;
    // a reset clears qM: the step matrix of stable steps only
    r.indefinite = r.indefinite || (stable && !StepMatrixPositive(m, d.get(), data->matrix));
    for (int i = 0; i < m->nv; ++i) r.max_qacc = std::max(r.max_qacc, std::abs(d->qacc[i]));
    for (int w : bad) r.warnings += d->warning[w].number;
    r.hashes.push_back(HashState(m, d.get()));

    // the step's constraint rows are still in d: mj_step does not recompute them
    bool clean = true;
    for (int w : bad) clean = clean && d->warning[w].number == 0;

    // a step taken as substeps (one forward pass each, doc/usage.md) has one M per substep:
    // neither identity below is its (implicitpos_motion_test checks it against the substeps)
    if (d->timer[mjTIMER_FORWARD].number - passes > 1) {
      ++r.substepped;
      clean = false;
    }

    // the force the step reports it applied is the change of momentum (Euler and implicit; RK4
    // reports the force at the start of the step), without constraints: an iterative solver's
    // qfrc_constraint equals M qacc - qfrc_smooth only at its optimum, to its tolerance
    if (stable && clean && d->nefc == 0 && m->opt.integrator != mjINT_RK4 && FiniteGains(m) &&
        Moderate(qvel0.data(), m->nv) && Moderate(d->qvel, m->nv)) {
      double res = MomentumResidual(m, d.get(), qvel0, &scratch);
      ++r.momenta;
      ReportResidual("applied force", "momentum residual", res, kMomentumTol, flag, t, index,
                     &momentum_failed, failures);
    }
    if (roundtrip && clean && d->nefc == 0 && Moderate(pre->qvel, m->nv) &&
        Moderate(d->qvel, m->nv) && !HeldAnActuator(m, d.get())) {
      double res = RoundTripResidual(m, pre.get(), d.get(), inv.get());
      ++r.roundtrips;
      ReportResidual("invdiscrete round trip", "residual", res, kRoundTripTol, flag, t, index,
                     &roundtrip_failed, failures);
    }
  }
  return r;
}

// " (flag on's / flag off's mju_error)" if a run ended in one
std::string ErrorNote(const RunResult& on, const RunResult& off) {
  if (on.error.empty() && off.error.empty()) return "";
  return " (" + (on.error.empty() ? "-" : on.error) + " / " +
         (off.error.empty() ? "-" : off.error) + ")";
}

struct Totals {
  long long steps = 0;
  int changed = 0;     // implicit models whose trajectory the flag changes
  int roundtrips = 0;  // round trips checked
  long long momenta = 0;  // steps whose applied force was checked against their momentum
  int compared = 0;    // models in property 2's domain
  int indefinite = 0;  // models kept out of it by their step matrix alone (StepMatrixPositive)
};

// a model that does not compile: without the new flags it must fail alike. The compiler steps the
// model once, with implicitpos if the MJCF enables it (stock 2.2.2 rejects some extreme gains,
// e.g. kv = 1e300 on a free joint: "diagonal element too small in mju_factorLUSparse"); the
// stock comparison checks that stock fails too.
void CheckCompileFailure(int index, const RandomModel& rm, const std::string& error,
                         Failures* failures) {
  std::string stock_error;
  ModelPtr stock(LoadXmlString(rm.stock_xml, &stock_error));
  if (stock) {
    failures->Add(index, "compiles only without implicitpos and invdiscrete: " + error);
  } else if (stock_error != error) {
    failures->Add(index, "compile errors differ with and without implicitpos and "
                         "invdiscrete: " + error + " / " + stock_error);
  }
}

// 3a. the engine's scope is doc/scope.md's, actuator by actuator, at the start
void CheckScopeAtStart(const mjModel* m, const Start& start, mjData* d, int index,
                       Failures* failures) {
  mju_copy(d->qpos, start.qpos.data(), m->nq);
  mju_copy(d->act, start.act.data(), m->na);
  mju_copy(d->qvel, start.qvel.data(), m->nv);
  mju_copy(d->ctrl, start.ctrl.data(), m->nu);
  mju_copy(d->qfrc_applied, start.qfrc_applied.data(), m->nv);

  // stock 2.2.2's own mju_error in mj_forward (e.g. "Rank-defficient Hessian in HessianDirect"
  // from the Newton solver on some sparse models, --seed=9 --model=14276): nothing to compare;
  // the runs then record it where the step raises it
  if (!Guarded(mj_forward, m, d)) return;
  for (int i = 0; i < m->nu; ++i) {
    if (Muscle(m, i)) {
      double below, above;
      MuscleSlopes(m, d, i, &below, &above);
      if ((below < 0) != (above < 0)) continue;  // at a kink or where the slope leaves 0
      if (SubnormalMuscleForce(m, i)) continue;  // the slope's sign is the rounding's
    }
    bool engine = mjd_actuatorPosScope(m, d, i, nullptr) == mjPOSSCOPE_RESTORING;
    if (engine != ExpectRestoring(m, d, i)) {
      failures->Add(index, "actuator " + std::to_string(i) + (engine ? " in" : " not in") +
                               " mjd_actuatorPosScope's K, against doc/scope.md's scope");
    }
  }
}

// 1. no mju_error that the flag alone raises: from a state identical in both runs (none can be
// chaos), flag on must not fail where flag off steps on. True if the flag alone raised one.
bool CheckNoFlagError(const RunResult& on, const RunResult& off, int index, Failures* failures) {
  if (on.error.empty() || on.error == off.error) return false;
  size_t t = on.hashes.size();  // the step that failed
  bool flag_error = t == 0 || (t <= off.hashes.size() && on.hashes[t - 1] == off.hashes[t - 1]);
  if (flag_error) failures->Add(index, "flag on only, from the same state: " + on.error);
  return flag_error;
}

// true if flag off, run from the start with its velocities scaled by 1 -+ 1e-3 and 1 -+ 2e-3,
// is not robust there: where flag off was clean (off_clean), one of those runs resets or is wild
// (|qacc| > 1e8); where it reset, one of them has as many warnings and resets as the flag's run
// less one. The model is then chaotic at its start, and which of two runs that differ by the
// flag's step tips over first is not the flag's to keep: a free ball joint spinning a slide's
// mass against its spring, or a huge motor, diverges from some starts under either setting
// (doc/property.md, "Findings"). Only called where the flag's run was worse, so it costs the
// default run nothing.
bool StockChaoticNearStart(mjModel* m, const Start& start, const RunResult& on, bool off_clean,
                           int index) {
  RunData data{DataPtr(mj_makeData(m)), DataPtr(mj_makeData(m)), DataPtr(mj_makeData(m))};
  Failures none;
  bool chaotic = false;
  for (double scale : {1 - 2e-3, 1 - 1e-3, 1 + 1e-3, 1 + 2e-3}) {
    Start near = start;
    for (double& v : near.qvel) v *= scale;
    RunResult r = Simulate(m, near, false, false, index, &data, &none);
    if (off_clean) {
      chaotic = chaotic || r.warnings > 0 || r.resets > 0 || !r.error.empty() ||
                r.max_qacc > 1e-2 * mjMAXVAL;
    } else {
      chaotic = chaotic || (r.warnings + 1 >= on.warnings && r.resets + 1 >= on.resets);
    }
  }
  SetEnable(m, mjENBL_IMPLICITPOS, true);
  return chaotic;
}

// 2. never worse, where only the flag's scope can diverge, contact included (the step solves
// its constraints in its own metric, doc/contact.md). Where flag off is clean with a margin (|qacc| <= 1e8, a hundredth
// of mj_checkAcc's limit), flag on is clean; where flag off resets, flag on resets at most once
// more (a huge motor can drive both runs into resetting every other step, and the flag, moving
// the trajectory, may bring the first reset one step earlier); no mju_error that flag off does
// not have. A flag-off run that is clean but wild (a huge motor on a small inertia, |qacc| up to
// 7e9) is chaos that either run may tip over: no comparison there.
// Returns 1 if the model was in the property's domain (compared), 2 if only the step matrix's
// positivity kept it out, 0 otherwise.
int CheckNeverWorse(mjModel* m, const Start& start, const RunResult& on,
                    const RunResult& off, bool flag_error, int index, Failures* failures) {
  bool off_clean = off.warnings == 0 && off.resets == 0 && off.error.empty();
  bool worse = !flag_error && !on.error.empty() && off.error.empty();
  if (off_clean && off.max_qacc <= 1e-2 * mjMAXVAL) {
    worse = worse || on.warnings > 0 || on.resets > 0;
  } else if (!off_clean && !flag_error) {
    worse = worse || on.warnings > off.warnings + 1 || on.resets > off.resets + 1;
  }
  bool positive = !on.indefinite && !off.indefinite;
  bool domain = OnlyScopeCanDiverge(m, start.ctrl);
  if (worse && domain && positive && !StockChaoticNearStart(m, start, on, off_clean, index)) {
    failures->Add(index, "flag on: " + std::to_string(on.warnings) + " bad-state warnings, " +
                             std::to_string(on.resets) + " resets" +
                             (on.error.empty() ? "" : ", " + on.error) + "; flag off: " +
                             std::to_string(off.warnings) + ", " + std::to_string(off.resets) +
                             (off.error.empty() ? "" : ", " + off.error));
  }
  return domain ? (positive ? 1 : 2) : 0;
}

// 3. bit identity where the flag must not act: Euler, RK4, or nothing in scope. True if the two
// runs are identical.
bool CheckBitIdentity(const mjModel* m, const RunResult& on, const RunResult& off, int index,
                      Failures* failures) {
  int integrator = m->opt.integrator;
  bool identical = on.hashes == off.hashes && on.error == off.error;
  bool must = integrator != mjINT_IMPLICIT || NothingInScope(m);
  if (must && !identical) {
    size_t t = 0;
    while (t < on.hashes.size() && t < off.hashes.size() && on.hashes[t] == off.hashes[t]) ++t;
    const char* names[] = {"Euler", "RK4", "implicit"};
    failures->Add(index, std::string("flag on differs from flag off under ") + names[integrator] +
                             (integrator == mjINT_IMPLICIT ? " with nothing in scope" : "") +
                             " from step " + std::to_string(t) + ErrorNote(on, off));
  }
  return identical;
}

// properties 1 to 4 for one model
void CheckModel(int index, const RandomModel& rm, Totals* totals, Failures* failures) {
  std::string error;
  ModelPtr model(LoadXmlString(rm.xml, &error));
  if (!model) {
    CheckCompileFailure(index, rm, error, failures);
    return;
  }
  mjModel* m = model.get();
  Start start = MakeStart(m, index);
  bool roundtrip = (m->opt.enableflags & mjENBL_INVDISCRETE) && m->opt.integrator != mjINT_RK4 &&
                   FiniteGains(m);
  RunData data{DataPtr(mj_makeData(m)), DataPtr(mj_makeData(m)), DataPtr(mj_makeData(m))};
  CheckScopeAtStart(m, start, data.d.get(), index, failures);

  RunResult off = Simulate(m, start, false, roundtrip, index, &data, failures);
  RunResult on = Simulate(m, start, true, roundtrip, index, &data, failures);
  totals->steps += off.hashes.size() + on.hashes.size();  // completed steps
  totals->roundtrips += off.roundtrips + on.roundtrips;
  totals->momenta += off.momenta + on.momenta;

  bool flag_error = CheckNoFlagError(on, off, index, failures);
  int domain = CheckNeverWorse(m, start, on, off, flag_error, index, failures);
  totals->compared += domain == 1;
  totals->indefinite += domain == 2;
  bool identical = CheckBitIdentity(m, on, off, index, failures);
  totals->changed += m->opt.integrator == mjINT_IMPLICIT && !identical;
}

//------------------------------ stock comparison --------------------------------------------------

#ifdef MJPOS_STOCK_STATEDUMP
// model path -> first word of mjpos_statedump's line (hash, load-error or mju_error); the tool
// prints MuJoCo's own warnings on stdout too, hence the filter on the paths
std::map<std::string, std::string> RunDump(const std::string& tool, const std::string& args,
                                           const std::string& dir,
                                           const std::vector<std::string>& paths) {
  std::string cmd = "cd '" + dir + "' && '" + tool + "' --steps " +
                    std::to_string(options.steps) + " " + args;
  for (const std::string& p : paths) cmd += " '" + p + "'";
  cmd += " 2>/dev/null </dev/null";
  std::set<std::string> known(paths.begin(), paths.end());
  std::map<std::string, std::string> out;
  if (!RunStatedump(cmd, &known, &out)) out.clear();
  return out;
}

// property 5: the sample against stock 2.2.2, through mjpos_statedump
void CheckStock(const std::vector<std::pair<int, std::string>>& sample, Failures* failures) {
  std::snprintf(context, sizeof(context), "seed %" PRIu64 " stock comparison", options.seed);
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("mjpos_property_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<std::string> paths;
  std::map<std::string, int> index;
  for (const auto& [i, xml] : sample) {
    std::string path = (dir / ("model_" + std::to_string(i) + ".xml")).string();
    std::ofstream(path) << xml;
    paths.push_back(path);
    index[path] = i;
  }

  const std::string invdiscrete = std::to_string(mjENBL_INVDISCRETE);
  const std::string all = std::to_string(mjENBL_IMPLICITPOS | mjENBL_INVDISCRETE |
                                         mjENBL_POSWEIGHT);
  struct Config {
    const char* what;
    std::string stock, patched;
  };
  const Config configs[] = {
      {"flag off, model's integrator", "--integrator model", "--integrator model"},
      {"flag off, invdiscrete on, implicit", "--integrator implicit",
       "--integrator implicit --enable " + invdiscrete},
      {"flag on, Euler", "--integrator euler", "--integrator euler --enable " + all},
      {"flag on, RK4", "--integrator rk4", "--integrator rk4 --enable " + all},
  };
  for (const Config& c : configs) {
    auto stock = RunDump(MJPOS_STOCK_STATEDUMP, c.stock, dir.string(), paths);
    auto patched = RunDump(MJPOS_PATCHED_STATEDUMP, c.patched, dir.string(), paths);
    if (stock.size() != paths.size() || patched.size() != paths.size()) {
      failures->Add(-1, std::string("mjpos_statedump did not run (") + c.what + ")");
      continue;
    }
    int hashed = 0;
    for (const std::string& p : paths) {
      hashed += stock[p] != "load-error" && stock[p] != "mju_error";
      if (patched[p] != stock[p]) {
        failures->Add(index[p], std::string("differs from stock (") + c.what + "): stock " +
                                    stock[p] + ", patched " + patched[p]);
      }
    }
    if (paths.size() >= 10 && 2 * hashed < static_cast<int>(paths.size())) {  // teeth
      failures->Add(-1, std::string("stock hashed only ") + std::to_string(hashed) + " of " +
                            std::to_string(paths.size()) + " models (" + c.what + ")");
    }
  }
  fs::remove_all(dir);
}
#endif

//------------------------------ the suite ---------------------------------------------------------

TEST(PropertySuite, RandomModels) {
  mju_user_warning = OnMujocoWarning;
  mju_user_error = OnMujocoError;
  Failures failures;
  Totals totals;
  std::vector<std::pair<int, std::string>> sample;  // for the stock comparison
  int first = options.only >= 0 ? options.only : 0;
  int last = options.only >= 0 ? options.only + 1 : options.models;
  for (int i = first; i < last; ++i) {
    SetContext(i);
    RandomModel rm = MakeModel(i);
    CheckModel(i, rm, &totals, &failures);
    if (i % 10 == 0 || options.only >= 0) sample.emplace_back(i, rm.stock_xml);
  }
#ifdef MJPOS_STOCK_STATEDUMP
  CheckStock(sample, &failures);
#endif
  std::snprintf(context, sizeof(context), "seed %" PRIu64 " summary", options.seed);

  // teeth: the flag acts somewhere, the round trip and the applied force are checked somewhere,
  // and property 2 compares somewhere
  if (options.only < 0 && last - first >= 100) {
    if (totals.changed == 0) failures.Add(-1, "the flag changed no implicit model");
    if (totals.roundtrips == 0) failures.Add(-1, "no round trip was in scope");
    if (totals.momenta == 0) failures.Add(-1, "no step's applied force was checked");
    if (totals.compared == 0) failures.Add(-1, "no model was in the never-worse domain");
  }

  // the run's size, in the test's XML output (--gtest_output=xml)
  ::testing::Test::RecordProperty("models", last - first);
  ::testing::Test::RecordProperty("steps", std::to_string(totals.steps));
  ::testing::Test::RecordProperty("applied_force_steps", std::to_string(totals.momenta));
  ::testing::Test::RecordProperty("never_worse_compared", totals.compared);
  ::testing::Test::RecordProperty("never_worse_indefinite", totals.indefinite);
#ifndef MJPOS_STOCK_STATEDUMP
  ::testing::Test::RecordProperty("flag_off_equals_stock",
                                  "not checked: this build has no stock library");
#endif
  EXPECT_EQ(failures.count, 0);
  mju_user_warning = nullptr;
  mju_user_error = nullptr;
}

//------------------------------ options -----------------------------------------------------------

bool ParseInt(const char* text, long long lo, long long* value) {
  char* end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (!*text || *end || v < lo) return false;
  *value = v;
  return true;
}

// environment, then command line; false on a bad argument
bool ParseOptions(int argc, char** argv) {
  long long v;
  struct Source {
    const char* env;
    const char* flag;
    long long lo;
    std::function<void(long long)> set;
  };
  const Source sources[] = {
      {"MJPOS_PROPERTY_MODELS", "--models=", 1, [](long long x) { options.models = x; }},
      {"MJPOS_PROPERTY_SEED", "--seed=", 0, [](long long x) { options.seed = x; }},
      {"MJPOS_PROPERTY_STEPS", "--steps=", 1, [](long long x) { options.steps = x; }},
      {nullptr, "--model=", 0, [](long long x) { options.only = x; }},
  };
  for (const Source& s : sources) {
    const char* text = s.env ? std::getenv(s.env) : nullptr;
    if (text && *text) {
      if (!ParseInt(text, s.lo, &v)) return false;
      s.set(v);
    }
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    bool known = false;
    if (a == "--xml") {
      options.xml = known = true;
    }
    for (const Source& s : sources) {
      size_t n = std::strlen(s.flag);
      if (a.compare(0, n, s.flag) == 0) {
        if (!ParseInt(argv[i] + n, s.lo, &v)) return false;
        s.set(v);
        known = true;
      }
    }
    if (!known) return false;
  }
  return !options.xml || options.only >= 0;
}

}  // namespace
}  // namespace mjpos

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (!mjpos::ParseOptions(argc, argv)) {
    std::fprintf(stderr,
                 "usage: property_test [gtest flags] [--models=N] [--seed=S] [--steps=T] "
                 "[--model=I [--xml]]\n");
    return 2;
  }
  if (mjpos::options.xml) {
    std::fputs(mjpos::MakeModel(mjpos::options.only).xml.c_str(), stdout);
    return 0;
  }
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_set_death_callback(mjpos::PrintContext);
#else
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, mjpos::OnSignal);
#endif
  return RUN_ALL_TESTS();
}
