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

// mjENBL_POSWEIGHT: the accuracy-weighted implicit-in-position mode. Its accuracy on every class
// of input (one hinge against the exact response; coupled models tuned per joint against stock
// at h/100), its stability (one dof over twelve decades of gain; chains, random chains and the
// humanoid tuned per joint, where the stability gate decides), its statics, its cache, and the
// discrete inverse that mirrors it.

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "support/one_dof.h"
#include "support/accuracy.h"
#include "test/fixture.h"
#include "support/models.h"

namespace mjpos {
namespace {

constexpr double kInertia = 0.01576;

// the one hinge servo, its gains set in place: kp = I w^2, kv = 2 zeta sqrt(kp I)
class Hinge {
 public:
  Hinge() : m_(LoadXmlString(OneHingeXml(kInertia, 1, 0, 0.005))), d_(mj_makeData(m_.get())) {}

  void Set(double hw, double zeta, double h) {
    double inertia = Inertia();
    double w = hw / h;
    kp_ = inertia * w * w;
    kv_ = 2 * zeta * std::sqrt(kp_ * inertia);
    m_->opt.timestep = h;
    m_->actuator_gainprm[0] = kp_;
    m_->actuator_biasprm[1] = -kp_;
    m_->actuator_biasprm[2] = -kv_;
  }

  // spectral radius of the one-step map of (q, v), target 0, from unit-scaled columns
  double SpectralRadius(Scheme s) {
    SetScheme(m_.get(), s);
    // columns of 1e-9: small enough to stay below the acceleration check
    return SpectralRadius2(EngineStepMap(m_.get(), 1e-9));
  }

  // the exact inertia about the axis (armature and the body's own)
  double Inertia() {
    mj_forward(m_.get(), d_.get());
    return d_->qM[0];
  }

  mjModel* model() { return m_.get(); }

 private:
  ModelPtr m_;
  DataPtr d_;
  double kp_ = 0, kv_ = 0;
};

// the baseline of one dof at h w_n = hw and damping ratio zeta: stock where stable, else BE
bool StockStable(double hw, double zeta) { return hw * hw < 4 + 4 * zeta * hw; }

// Errors of stock, backward Euler and the mode on the one hinge tuned to h w_n = hw and zeta at
// timestep h, under input c, against the exact response to the held targets; the window in
// units of 1/w_n as the study's (no cap in seconds).
SchemeErrors OneDofErrors(Hinge* hinge, double hw, double zeta, double h, Input c) {
  hinge->Set(hw, zeta, h);
  mjModel* m = hinge->model();
  std::vector<TunedServo> servos = TuneServos(m, {hw / h / (2 * M_PI)}, zeta);
  double wn = hw / h;
  double window = c == Input::kStep || c == Input::kDecay || c == Input::kLoad
                      ? 20 / wn : std::max(20.0, 2 * M_PI / TrackingRatio(c)) / wn;
  int steps = std::max(50, static_cast<int>(std::ceil(window / h)));
  std::vector<double> exact = ExactOneDofResponse(wn, zeta, c, h, steps);
  WarningCapture warnings;  // stock diverges above its cap
  auto error = [&](Scheme s) {
    return ResponseError(Response(m, servos, wn, c, s, h, steps), exact);
  };
  return {error(Scheme::kStock), error(Scheme::kBackwardEuler), error(Scheme::kWeighted)};
}

// The mode's worst class at one point: its error over the baseline's (stock where stable, else
// backward Euler), and over the better of the two (*to_best).
double WorstOverBaseline(Hinge* hinge, double hw, double zeta, double h, double* to_best,
                         std::string* worst_class) {
  double worst = 0;
  *to_best = 0;
  for (Input c : kInputs) {
    SchemeErrors e = OneDofErrors(hinge, hw, zeta, h, c);
    double base = StockStable(hw, zeta) ? e.stock : e.backward_euler;
    double best = StockStable(hw, zeta) ? std::min(e.stock, e.backward_euler) : e.backward_euler;
    if (e.weighted / base > worst) {
      worst = e.weighted / base;
      *worst_class = InputName(c);
    }
    *to_best = std::max(*to_best, e.weighted / best);
  }
  return worst;
}

class PosWeight : public MujocoTest {};

// Catches: weights that make the mode less accurate than stock where stock is stable, or than
// backward Euler where it is not, on any class of input (step, decay, tracking at four speeds,
// load): one hinge on the table's grid of h w_n and zeta and off it, h = 1, 2, 5, 10 ms.
TEST_F(PosWeight, EveryInputWithinTheBaselineOnTheGrid) {
  Hinge hinge;
  const double hs[] = {1e-3, 2e-3, 5e-3, 10e-3};
  std::vector<double> band;
  double worst = 0;
  int k = 0;
  for (double zeta : {0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0}) {
    for (double hw : {0.05, 0.1, 0.3, 0.5, 1.0, 1.5, 1.9, 2.05, 2.2, 2.5, 3.0, 4.0, 5.0, 10.0,
                      30.0, 100.0, 300.0}) {
      double h = hs[k++ % 4], to_best;
      std::string cls;
      double ratio = WorstOverBaseline(&hinge, hw, zeta, h, &to_best, &cls);
      EXPECT_LE(ratio, 1.05) << "h w_n " << hw << " zeta " << zeta << " h " << h << ": " << cls;
      worst = std::max(worst, ratio);
      if (hw >= 0.5 && hw <= 5) band.push_back(to_best);
    }
  }
  RecordProperty("worst_ratio_to_baseline", std::to_string(worst));
  RecordProperty("band_median_ratio_to_best", std::to_string(Median(band)));
  RecordProperty("band_max_ratio_to_best",
                 std::to_string(*std::max_element(band.begin(), band.end())));
}

// Catches: weights that fail between the grid's points (the table's interpolation, its clamps,
// the cap at which it starts): h w_n every 0.05 decades from 0.05 to 300, zeta off the grid.
TEST_F(PosWeight, EveryInputWithinTheBaselineBetweenThePoints) {
  Hinge hinge;
  const double hs[] = {1e-3, 2e-3, 5e-3, 10e-3};
  double worst = 0;
  int k = 0;
  for (double zeta : {0.025, 0.15, 0.4, 0.85, 1.25, 2.5}) {
    for (double u = std::log10(0.05) + 0.013; u <= std::log10(300.0); u += 0.05) {
      double hw = std::pow(10.0, u), h = hs[k++ % 4], to_best;
      std::string cls;
      double ratio = WorstOverBaseline(&hinge, hw, zeta, h, &to_best, &cls);
      EXPECT_LE(ratio, 1.05) << "h w_n " << hw << " zeta " << zeta << " h " << h << ": " << cls;
      worst = std::max(worst, ratio);
    }
  }
  RecordProperty("worst_ratio_to_baseline", std::to_string(worst));
}

// Catches: a weight below the stability bound, or zero (an undamped servo would then keep its
// energy): one dof, kp 1e-3 ... 1e12, kv >= 0, h = 1, 2, 5, 10 ms.
TEST_F(PosWeight, OneDofStableForEveryGain) {
  Hinge hinge;
  mjModel* m = hinge.model();
  double inertia = hinge.Inertia();
  for (double h : {1e-3, 2e-3, 5e-3, 10e-3}) {
    for (double kv : {0.0, 1e-3, 0.1, 1.0, 100.0}) {
      for (double u = -3; u <= 12.0001; u += 0.25) {
        double kp = std::pow(10.0, u);
        m->opt.timestep = h;
        m->actuator_gainprm[0] = kp;
        m->actuator_biasprm[1] = -kp;
        m->actuator_biasprm[2] = -kv;
        double radius = hinge.SpectralRadius(Scheme::kWeighted);
        EXPECT_LT(radius, 1) << "kp " << kp << " kv " << kv << " h " << h;
        // the bound is not vacuous: stock is unstable above its cap
        if (kp > 1.5 * OneDofCap(mjINT_IMPLICIT, h, inertia, kv, 0)) {
          EXPECT_GT(hinge.SpectralRadius(Scheme::kStock), 1) << "kp " << kp << " kv " << kv;
        }
      }
    }
  }
}

// Catches: the damping of an affine gain's velocity term (gainprm[2] * input) taken with the
// wrong sign or left out of zeta: it weighs like the same damping in the bias (above the cap,
// h w_n = 2.5, where the weight depends on zeta).
TEST_F(PosWeight, GainVelocityTermIsDamping) {
  const double kp = 4000, kv = 0.8, input = 0.5;
  ModelPtr bias(LoadXmlString(OneHingeXml(kInertia, kp, kv, 0.005)));
  ModelPtr gain(LoadXmlString(OneHingeXml(kInertia, kp, 0, 0.005)));
  gain->actuator_gaintype[0] = mjGAIN_AFFINE;
  gain->actuator_gainprm[0] = kp;
  gain->actuator_gainprm[2] = -kv / input;
  DataPtr db(mj_makeData(bias.get())), dg(mj_makeData(gain.get()));
  db->ctrl[0] = dg->ctrl[0] = input;
  mj_forward(bias.get(), db.get());
  mj_forward(gain.get(), dg.get());
  double wb = mjd_posWeight(bias.get(), db.get(), mjOBJ_ACTUATOR, 0);
  double wg = mjd_posWeight(gain.get(), dg.get(), mjOBJ_ACTUATOR, 0);
  EXPECT_NEAR(wg, wb, 1e-12);
  ModelPtr undamped(LoadXmlString(OneHingeXml(kInertia, kp, 0, 0.005)));
  DataPtr du(mj_makeData(undamped.get()));
  mj_forward(undamped.get(), du.get());
  EXPECT_GT(std::abs(mjd_posWeight(undamped.get(), du.get(), mjOBJ_ACTUATOR, 0) - wb), 1e-3);
}

// Catches: an id outside the model read as an actuator or joint (out of bounds), or a joint id
// read as an actuator's: such a term has weight 1, as one outside the scope of K; the terms on
// one dof weighted apart.
TEST_F(PosWeight, WeightOfAnIdOutsideTheModelIsOne) {
  ModelPtr m(LoadXmlString(OneHingeXml(kInertia, 300, 0.1, 0.005)));
  DataPtr d(mj_makeData(m.get()));
  mj_forward(m.get(), d.get());
  EXPECT_LT(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, 0), 1);
  for (int id : {-1, m->nu, m->nu + 1000000}) {
    EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, id), 1) << id;
  }
  for (int id : {-1, m->njnt, m->njnt + 1000000}) {
    EXPECT_EQ(mjd_posWeight(m.get(), d.get(), mjOBJ_JOINT, id), 1) << id;
  }

  // a joint is asked for as a joint, not as the actuator of the same index: joint 0 of a chain
  // carries a spring only, actuator 0 acts on joint 1 only
  ModelPtr chain(LoadXmlString(ChainXml(2, 3e5, 0.1, 0.005)));  // above the cap: weight 1
  chain->actuator_trnid[0] = 1;  // both servos on joint 1
  chain->jnt_stiffness[0] = 30;
  DataPtr dc(mj_makeData(chain.get()));
  mj_forward(chain.get(), dc.get());
  double joint = mjd_posWeight(chain.get(), dc.get(), mjOBJ_JOINT, 0);
  EXPECT_LT(joint, 1);  // below the cap
  EXPECT_GT(std::abs(joint - mjd_posWeight(chain.get(), dc.get(), mjOBJ_ACTUATOR, 0)), 1e-3);
  // a joint's own servos and spring are one term: the same weight asked either way
  EXPECT_EQ(mjd_posWeight(chain.get(), dc.get(), mjOBJ_JOINT, 1),
            mjd_posWeight(chain.get(), dc.get(), mjOBJ_ACTUATOR, 0));
}

// random serial chain: hinges and slides with armature and damping, servos with gears on every
// joint (so that no mode is free), and sometimes a fixed-tendon servo over two neighbours
std::string RandomChain(std::mt19937* rng) {
  std::uniform_real_distribution<double> unit(0, 1);
  auto logu = [&](double lo, double hi) { return std::pow(10.0, lo + (hi - lo) * unit(*rng)); };
  int n = 2 + static_cast<int>(unit(*rng) * 5);
  char buf[512];
  std::string body, actuators, tendon;
  std::string close;
  for (int i = 0; i < n; ++i) {
    const char* axis[3] = {"1 0 0", "0 1 0", "0 0 1"};
    bool slide = unit(*rng) < 0.2;
    std::snprintf(buf, sizeof(buf),
                  "<body pos=\"%.3f 0 0\"><joint name=\"j%d\" type=\"%s\" axis=\"%s\" "
                  "armature=\"%.4g\" damping=\"%.4g\"/><geom type=\"capsule\" size=\"0.02\" "
                  "fromto=\"0 0 0 %.3f 0 0\" mass=\"%.4g\"/>",
                  i ? 0.1 + 0.3 * unit(*rng) : 0.0, i, slide ? "slide" : "hinge",
                  axis[static_cast<int>(unit(*rng) * 3) % 3], logu(-3, -1), logu(-3, 0),
                  0.1 + 0.3 * unit(*rng), logu(-1, 1));
    body += buf;
    close += "</body>";
    double kp = logu(0, 8), kv = unit(*rng) < 0.3 ? 0 : logu(-3, 1);
    std::snprintf(buf, sizeof(buf),
                  "<general joint=\"j%d\" gear=\"%.3f\" gainprm=\"%.6g\" biastype=\"affine\" "
                  "biasprm=\"0 %.6g %.6g\"/>",
                  i, 0.5 + 2.5 * unit(*rng), kp, -kp, -kv);
    actuators += buf;
  }
  if (unit(*rng) < 0.5) {
    int a = static_cast<int>(unit(*rng) * (n - 1));
    double kp = logu(0, 8);
    std::snprintf(buf, sizeof(buf),
                  "<tendon><fixed name=\"t\"><joint joint=\"j%d\" coef=\"%.3f\"/>"
                  "<joint joint=\"j%d\" coef=\"%.3f\"/></fixed></tendon>",
                  a, 0.5 + unit(*rng), a + 1, unit(*rng) - 0.5);
    tendon = buf;
    std::snprintf(buf, sizeof(buf),
                  "<general tendon=\"t\" gainprm=\"%.6g\" biastype=\"affine\" biasprm=\"0 %.6g "
                  "-0.01\"/>", kp, -kp);
    actuators += buf;
  }
  std::snprintf(buf, sizeof(buf), "%.4g", logu(-3.3, -2));
  return std::string("<mujoco><option integrator=\"implicit\" timestep=\"") + buf +
         "\" gravity=\"0 0 0\"><flag contact=\"disable\"/></option><worldbody>" + body + close +
         "</worldbody>" + tendon + "<actuator>" + actuators + "</actuator></mujoco>";
}

// spectral radius of mj_step's transition Jacobian at rest, servos holding the pose
double TransitionRadius(mjModel* m, Scheme s) {
  SetScheme(m, s);
  DataPtr d(mj_makeData(m));
  for (int i = 0; i < m->nq; ++i) d->qpos[i] = 0.3 * std::sin(1.0 + i);
  HoldPose(m, d.get());
  int n = 2 * m->nv + m->na;
  std::vector<mjtNum> a(n * n);
  mjd_transitionFD(m, d.get(), 1e-7, 1, a.data(), nullptr, nullptr, nullptr);
  return SpectralRadius(a.data(), n);
}

// Catches: per-term weights that destabilise a coupled system (terms weighted below 1/2 are
// only conditionally stable on their own): 200 random chains with gears and fixed tendons.
TEST_F(PosWeight, RandomChainsStable) {
  std::mt19937 rng(20261202);
  int chains = 0, stock_unstable = 0;
  for (int c = 0; c < 200; ++c) {
    std::string xml = RandomChain(&rng);
    std::string error;
    ModelPtr m(LoadXmlString(xml, &error));
    ASSERT_NE(m, nullptr) << error;
    double radius = TransitionRadius(m.get(), Scheme::kWeighted);
    EXPECT_LT(radius, 1 - 1e-9) << xml;
    if (TransitionRadius(m.get(), Scheme::kStock) > 1) ++stock_unstable;
    ++chains;
  }
  EXPECT_EQ(chains, 200);
  EXPECT_GT(stock_unstable, 20);  // the sample reaches beyond the stock cap
  RecordProperty("stock_unstable", std::to_string(stock_unstable));
}

// Runs 2 s of tracking (sinusoidal targets at W/w_n = 0.1 on every servo) on m as it is set;
// true if it stays finite with no bad-state warning.
bool TracksStably(mjModel* m, const std::vector<TunedServo>& servos, double wn) {
  int steps = static_cast<int>(std::ceil(2 / m->opt.timestep));
  int enable = m->opt.enableflags;
  bool stable = !Response(m, servos, wn, Input::kTrack01, Scheme::kWeighted, m->opt.timestep,
                          steps).empty();
  m->opt.enableflags = enable;
  return stable;
}

// Catches: the stability gate removed or weakened, or weights that destabilise coupled terms
// that are each below stock's cap: chains of 2 to 12 links (hinges, slides, gears, a fixed
// tendon), every servo tuned from its reflected inertia to one f_n and zeta, or to f_n, f_n/2
// and 2 f_n in turn; h w_n 0.1 ... 10, zeta 0 ... 1, h = 1, 2, 5, 10 ms. Wherever backward
// Euler's linearised one-step map has spectral radius below 1, the mode's has too, and where h
// is 2 or 10 ms a 2 s tracking run stays finite with no warning. Without gravity, so that the
// pose held is an equilibrium.
TEST_F(PosWeight, TunedChainsStableWhereverBackwardEulerIs) {
  std::vector<ChainSpec> specs;
  for (const char* name : {"chain2", "chain3", "chain5", "chain7", "chain12", "chain5 mixed",
                           "chain8 mixed"}) {
    specs.push_back(NamedChainSpec(name));
  }

  WarningCapture warnings;  // stock diverges
  int settings = 0, stock_unstable = 0;
  for (const ChainSpec& spec : specs) {
    for (double h : {1e-3, 2e-3, 5e-3, 10e-3}) {
      ModelPtr m = LoadModelOrFail(ChainSpecXml(spec, h));
      ASSERT_NE(m, nullptr);
      mju_zero3(m->opt.gravity);  // the pose held is an equilibrium
      for (double hw : {0.1, 0.5, 1.0, 1.5, 2.5, 10.0}) {
        for (double zeta : {0.0, 0.2, 1.0}) {
          for (bool equal : {true, false}) {
            double fn = hw / h / (2 * M_PI);
            std::vector<double> fns = {fn};
            if (!equal) fns = {fn, fn / 2, 2 * fn, fn, fn / 2, 2 * fn, fn, fn / 2, 2 * fn,
                               fn, fn / 2, 2 * fn, fn};
            std::vector<TunedServo> servos = TuneServos(m.get(), fns, zeta);
            std::string where = "n " + std::to_string(spec.n) + " h " + std::to_string(h) +
                                " h w_n " + std::to_string(hw) + " zeta " +
                                std::to_string(zeta) + (equal ? " equal" : " mixed");
            double be = TransitionRadius(m.get(), Scheme::kBackwardEuler);
            double weighted = TransitionRadius(m.get(), Scheme::kWeighted);
            if (be < 1) EXPECT_LT(weighted, 1) << where;
            if (TransitionRadius(m.get(), Scheme::kStock) > 1) ++stock_unstable;
            if (h == 2e-3 || h == 10e-3) {
              EXPECT_TRUE(TracksStably(m.get(), servos, 2 * M_PI * fn)) << where;
            }
            ++settings;
          }
        }
      }
    }
  }
  EXPECT_GT(stock_unstable, settings / 4);  // the grid reaches beyond stock's cap
  RecordProperty("settings", std::to_string(settings));
  RecordProperty("stock_unstable", std::to_string(stock_unstable));
}

// Catches: the gate missing a coupled mode when the terms share one frequency (the random
// gains of RandomChainsStable rarely do): 100 random chains of 2 to 12 links, every servo tuned
// to one f_n and zeta, h w_n drawn from 0.5 ... 5, zeta from 0 ... 0.5, h from 1 ... 10 ms.
TEST_F(PosWeight, RandomEqualFrequencyChainsStable) {
  std::mt19937 rng(20261203);
  std::uniform_real_distribution<double> unit(0, 1);
  WarningCapture warnings;
  int stock_unstable = 0;
  for (int c = 0; c < 100; ++c) {
    ChainSpec spec = RandomChainSpec(&rng);
    double h = std::pow(10.0, -3 + unit(rng));
    double hw = 0.5 * std::pow(10.0, unit(rng)), zeta = 0.5 * unit(rng);
    ModelPtr m = LoadModelOrFail(ChainSpecXml(spec, h));
    ASSERT_NE(m, nullptr);
    mju_zero3(m->opt.gravity);  // the pose held is an equilibrium
    double fn = hw / h / (2 * M_PI);
    std::vector<TunedServo> servos = TuneServos(m.get(), {fn}, zeta);
    double be = TransitionRadius(m.get(), Scheme::kBackwardEuler);
    if (be < 1) {
      EXPECT_LT(TransitionRadius(m.get(), Scheme::kWeighted), 1) << ChainSpecXml(spec, h);
    }
    if (TransitionRadius(m.get(), Scheme::kStock) > 1) ++stock_unstable;
  }
  EXPECT_GT(stock_unstable, 20);
  RecordProperty("stock_unstable", std::to_string(stock_unstable));
}

// Catches: weights that destabilise the humanoid tuned the way robots are: every servo tuned
// from its reflected inertia to one f_n in 20 ... 400 Hz and zeta 0, 0.2 or 1, contact off and
// on, h = 2, 5, 10 ms: wherever 2 s of tracking (no gravity) or of a fall under gravity are
// stable under backward Euler they are under the mode.
TEST_F(PosWeight, HumanoidTunedPerJointStable) {
  WarningCapture warnings;
  int runs = 0;
  for (bool contact : {false, true}) {
    std::string error;
    ModelPtr m(LoadWithServos(MJPOS_MODEL_DIR "/humanoid/humanoid.xml", 1, 0, &error));
    ASSERT_NE(m, nullptr) << error;
    m->opt.integrator = mjINT_IMPLICIT;
    if (!contact) m->opt.disableflags |= mjDSBL_CONTACT;
    for (double fn : {20.0, 50.0, 100.0, 200.0, 400.0}) {
      for (double zeta : {0.0, 0.2, 1.0}) {
        std::vector<TunedServo> servos = TuneServos(m.get(), {fn}, zeta);
        for (double h : {2e-3, 5e-3, 10e-3}) {
          m->opt.timestep = h;
          double wn = 2 * M_PI * fn;
          int steps = static_cast<int>(std::ceil(2 / h));
          // tracking without gravity, and falling (onto the floor where contact is on)
          for (Input c : {Input::kTrack01, Input::kLoad}) {
            auto run = [&](Scheme s) {
              return !Response(m.get(), servos, wn, c, s, h, steps, 1, true).empty();
            };
            if (!run(Scheme::kBackwardEuler)) continue;
            EXPECT_TRUE(run(Scheme::kWeighted)) << "f_n " << fn << " zeta " << zeta << " h " << h
                                                << " contact " << contact << " " << InputName(c);
            ++runs;
          }
        }
      }
    }
  }
  EXPECT_GT(runs, 120);
  RecordProperty("runs", std::to_string(runs));
}

// The worst class of the mode on a model tuned per joint at (fn, zeta), timestep h: its error
// over the baseline's (stock where it ran stably, else backward Euler), each against stock at
// h/100; windows of at most max_window seconds.
double CoupledWorst(mjModel* m, double fn, double zeta, double h, bool gravity_load,
                    double max_window, std::string* worst_class) {
  std::vector<TunedServo> servos = TuneServos(m, {fn}, zeta);
  double worst = 0;
  for (Input c : kInputs) {
    double ratio = RatioToBaseline(
        CompareSchemes(m, servos, 2 * M_PI * fn, c, h, gravity_load, max_window));
    if (ratio > worst) {
      worst = ratio;
      *worst_class = InputName(c);
    }
  }
  return worst;
}

// Catches: weights that cost accuracy on coupled models tuned the way robots are (a weight below
// stock's cap slows their slow modes, a missed gate lets them diverge, a raise that overshoots
// adds damping where stock is stable): chains (3 links, the 7-dof arm, 5 links with slides,
// gears and a tendon) and the servo humanoid without contact, every class of input, h = 1, 2, 5,
// 10 ms: the mode's error is at most 1.05 x stock's where stock is stable, and 1.05 x backward
// Euler's where it is not. (The main job runs the full table: mjpos_bench, doc/posweight.md.)
TEST_F(PosWeight, CoupledEveryInputWithinTheBaseline) {
  WarningCapture warnings;  // stock diverges
  struct Subject {
    std::string name;
    ModelPtr m;
    bool gravity;
    std::vector<std::pair<double, double>> settings;  // (f_n, zeta)
    std::vector<double> hs;
  };
  std::vector<std::pair<double, double>> chain_settings = {{30, 0}, {30, 0.2}, {100, 0.2},
                                                           {100, 0.7}};
  std::vector<Subject> subjects;
  subjects.push_back({"chain3", LoadModelOrFail(ChainSpecXml(NamedChainSpec("chain3"), 0.005)),
                      true, chain_settings, {1e-3, 2e-3, 5e-3, 10e-3}});
  subjects.push_back({"arm7", LoadModelOrFail(ChainXml(7, 1, 0, 0.005)), true, chain_settings,
                      {1e-3, 2e-3, 5e-3, 10e-3}});
  subjects.push_back({"chain5 mixed",
                      LoadModelOrFail(ChainSpecXml(NamedChainSpec("chain5 mixed"), 0.005)), true,
                      chain_settings, {1e-3, 2e-3, 5e-3, 10e-3}});
  std::string error;
  ModelPtr humanoid(LoadWithServos(MJPOS_MODEL_DIR "/humanoid/humanoid.xml", 1, 0, &error));
  ASSERT_NE(humanoid, nullptr) << error;
  humanoid->opt.integrator = mjINT_IMPLICIT;
  humanoid->opt.disableflags |= mjDSBL_CONTACT;
  subjects.push_back({"servo humanoid", std::move(humanoid), false, {{30, 0.2}, {100, 0}},
                      {2e-3, 5e-3, 10e-3}});

  double worst = 0;
  for (Subject& s : subjects) {
    ASSERT_NE(s.m, nullptr) << s.name;
    for (auto [fn, zeta] : s.settings) {
      for (double h : s.hs) {
        std::string cls;
        double ratio = CoupledWorst(s.m.get(), fn, zeta, h, s.gravity, 0.25, &cls);
        EXPECT_LE(ratio, 1.05) << s.name << " f_n " << fn << " zeta " << zeta << " h " << h
                               << ": " << cls;
        worst = std::max(worst, ratio);
      }
    }
  }
  RecordProperty("worst_ratio_to_baseline", std::to_string(worst));
}

// Catches: weights that destabilise the coupled servo humanoid (kv 0, contact off and on; 2 s
// from small joint velocities) or the test suite's arms, anywhere on kp 1 ... 1e12.
TEST_F(PosWeight, HumanoidAndArmsStableToTheGridTop) {
  for (int k = 0; k <= 12; ++k) {
    double kp = std::pow(10.0, k);
    for (bool contact : {false, true}) {
      std::string error;
      ModelPtr m(LoadWithServos(MJPOS_MODEL_DIR "/humanoid/humanoid.xml", kp, 0, &error));
      ASSERT_NE(m, nullptr) << error;
      m->opt.integrator = mjINT_IMPLICIT;
      if (!contact) m->opt.disableflags |= mjDSBL_CONTACT;
      SetScheme(m.get(), Scheme::kWeighted);
      DataPtr d(mj_makeData(m.get()));
      HoldPose(m.get(), d.get());
      for (int i = 6; i < m->nv; ++i) d->qvel[i] = 0.1 * std::sin(3.0 * i);
      EXPECT_TRUE(StepStable(m.get(), d.get(), 400)) << "kp " << kp << " contact " << contact;
    }
    for (const std::string& xml : {ChainXml(7, kp, 1, 0.005), GearTendonArmXml(kp, 1, 0.005)}) {
      std::string error;
      ModelPtr m(LoadXmlString(xml, &error));
      ASSERT_NE(m, nullptr) << error;
      SetScheme(m.get(), Scheme::kWeighted);
      DataPtr d(mj_makeData(m.get()));
      for (int i = 0; i < m->nq; ++i) d->qpos[i] = 0.2 * std::sin(1.0 + i);
      HoldPose(m.get(), d.get());
      for (int i = 0; i < m->nv; ++i) d->qvel[i] = 0.1 * std::sin(3.0 * i);
      EXPECT_TRUE(StepStable(m.get(), d.get(), 400)) << "kp " << kp << "\n" << xml;
    }
  }
}

// Catches: a weighted shift or matrix that moves the steady state: under a constant load (a
// constant applied torque and gravity on the arm) the mode settles where stock does.
TEST_F(PosWeight, StaticsEqualStock) {
  for (double kp : {10.0, 30.0}) {
    std::string error;
    ModelPtr m(LoadXmlString(GearTendonArmXml(kp, 1, 0.005), &error));
    ASSERT_NE(m, nullptr) << error;
    std::vector<std::vector<double>> rest;
    for (Scheme s : {Scheme::kStock, Scheme::kBackwardEuler, Scheme::kWeighted}) {
      SetScheme(m.get(), s);
      DataPtr d(mj_makeData(m.get()));
      for (int u = 0; u < m->nu; ++u) d->ctrl[u] = 0.2;
      for (int i = 0; i < m->nv; ++i) d->qfrc_applied[i] = 0.5 * std::cos(i);
      for (int k = 0; k < 20000; ++k) mj_step(m.get(), d.get());
      rest.emplace_back(d->qpos, d->qpos + m->nq);
    }
    EXPECT_LE(RelDiff(rest[2].data(), rest[0].data(), m->nq), 1e-12) << "kp " << kp;
    EXPECT_LE(RelDiff(rest[1].data(), rest[0].data(), m->nq), 1e-12) << "kp " << kp;
  }
}

// Catches: mj_inverse under invdiscrete not mirroring the weights: the forces it returns for the
// step's discrete acceleration are the ones that were applied.
TEST_F(PosWeight, DiscreteInverseMirrorsTheWeights) {
  std::string error;
  ModelPtr m(LoadXmlString(GearTendonArmXml(3e4, 0.5, 0.005), &error));
  ASSERT_NE(m, nullptr) << error;
  SetScheme(m.get(), Scheme::kWeighted);
  SetEnable(m.get(), mjENBL_INVDISCRETE, true);
  DataPtr d(mj_makeData(m.get()));
  for (int i = 0; i < m->nv; ++i) {
    d->qpos[i] = 0.2 * std::sin(1.0 + i);
    d->qvel[i] = 1.5 * std::cos(2.0 + i);
    d->qfrc_applied[i] = 0.3 * std::sin(3.0 + i);
  }
  for (int u = 0; u < m->nu; ++u) d->ctrl[u] = 0.4 * std::cos(u);
  DataPtr next(mj_makeData(m.get()));
  mj_copyData(next.get(), m.get(), d.get());
  mj_step(m.get(), next.get());

  // the same state, with the discrete acceleration of the step
  mj_forward(m.get(), d.get());
  std::vector<double> applied(m->nv);
  for (int i = 0; i < m->nv; ++i) {
    applied[i] = d->qfrc_applied[i] + d->qfrc_actuator[i];
    d->qacc[i] = (next->qvel[i] - d->qvel[i]) / m->opt.timestep;
  }
  mj_inverse(m.get(), d.get());
  EXPECT_LE(RelDiff(d->qfrc_inverse, applied.data(), m->nv), 1e-10);

  // and the weights matter here: without them the inverse misses
  SetEnable(m.get(), mjENBL_POSWEIGHT, false);
  mj_inverse(m.get(), d.get());
  EXPECT_GT(RelDiff(d->qfrc_inverse, applied.data(), m->nv), 1e-6);
}

// Steps d n times, and a copy of it n times with its weight cache (d->dof_posweightcache) cleared
// before the first step, or before every step; true if both end in the same qpos and qvel, bit for
// bit.
bool SameWithoutCache(const mjModel* m, mjData* d, int n, bool clear_every_step = false) {
  DataPtr fresh(mj_makeData(m));
  mj_copyData(fresh.get(), m, d);
  for (int k = 0; k < n; ++k) {
    if (k == 0 || clear_every_step) mju_zero(fresh->dof_posweightcache, 3 * m->nv);
    mj_step(m, d);
    mj_step(m, fresh.get());
  }
  return std::vector<double>(d->qpos, d->qpos + m->nq) ==
             std::vector<double>(fresh->qpos, fresh->qpos + m->nq) &&
         std::vector<double>(d->qvel, d->qvel + m->nv) ==
             std::vector<double>(fresh->qvel, fresh->qvel + m->nv);
}

// Catches: a cached weight (d->dof_posweightcache) outliving what it was read for: after the gains,
// the damping or the timestep change, stepping on with the cache equals stepping on without it,
// bit for bit.
TEST_F(PosWeight, CachedWeightFollowsTheModel) {
  std::string error;
  ModelPtr m(LoadXmlString(GearTendonArmXml(300, 0.5, 0.005), &error));
  ASSERT_NE(m, nullptr) << error;
  SetScheme(m.get(), Scheme::kWeighted);
  DataPtr d(mj_makeData(m.get()));
  for (int u = 0; u < m->nu; ++u) d->ctrl[u] = 0.3;
  for (int k = 0; k < 20; ++k) mj_step(m.get(), d.get());
  m->actuator_gainprm[0] *= 4;
  m->actuator_biasprm[1] *= 4;
  EXPECT_TRUE(SameWithoutCache(m.get(), d.get(), 20)) << "gain";
  m->actuator_biasprm[2] *= 3;
  m->dof_damping[1] *= 2;
  EXPECT_TRUE(SameWithoutCache(m.get(), d.get(), 20)) << "damping";
  m->opt.timestep *= 0.5;
  EXPECT_TRUE(SameWithoutCache(m.get(), d.get(), 20)) << "timestep";
}

// Catches: a cache key that is not the pair ((h w_n)^2, zeta) exactly (one number compared twice,
// one stored in the other's place, or theta stored over zeta): one hinge with its inverse weight
// set to 1 and h = 0.5 s, so that (h w_n)^2 = k / 4 and zeta = c / (2 sqrt(k)) exactly, is
// switched between gains whose keys share one number, or whose zeta equals the last theta; after
// each switch one step with the cache equals one step with it cleared, bit for bit.
TEST_F(PosWeight, CacheKeyIsThePair) {
  ModelPtr m = LoadModelOrFail(OneHingeXml(1, 1, 0, 0.5));
  ASSERT_NE(m, nullptr);
  SetScheme(m.get(), Scheme::kWeighted);
  m->dof_invweight0[0] = 1;
  DataPtr d(mj_makeData(m.get()));
  d->ctrl[0] = 1;
  auto step_as_fresh = [&](double k, double c) {
    m->actuator_gainprm[0] = k;
    m->actuator_biasprm[1] = -k;
    m->actuator_biasprm[2] = -c;
    return SameWithoutCache(m.get(), d.get(), 1);
  };
  // (h w_n)^2, zeta: (1, 0.25), then (0.25, 0.25): the new (h w_n)^2 is the old zeta
  EXPECT_TRUE(step_as_fresh(4, 1));
  EXPECT_TRUE(step_as_fresh(1, 0.5)) << "(h w_n)^2 compared with the cached zeta";
  // (0.25, 0.5), then (0.25, 0.25): the new zeta is the cached (h w_n)^2
  EXPECT_TRUE(step_as_fresh(1, 1));
  EXPECT_TRUE(step_as_fresh(1, 0.5)) << "zeta compared with the cached (h w_n)^2";
  // (0.25, 0.5), then (0.25, 0): zeta 0
  EXPECT_TRUE(step_as_fresh(1, 1));
  EXPECT_TRUE(step_as_fresh(1, 0)) << "zeta not stored";
  // (0.25, 0.5), then (0.25, theta of the last lookup)
  EXPECT_TRUE(step_as_fresh(1, 1));
  double theta = d->dof_posweightcache[2];
  ASSERT_GT(theta, 0);
  ASSERT_LT(theta, 1);
  EXPECT_TRUE(step_as_fresh(1, 2 * theta)) << "theta stored over zeta";
}

// Catches: the stability gate read from the cache (which holds the table's weight only): on a
// two-link arm folded so that the first joint's inertia is a fraction of its inertia at qpos0,
// where the gate raises the weights that pass it at qpos0, stepping with the cache equals
// stepping with the cache cleared before every step, bit for bit.
TEST_F(PosWeight, GateIsNotCached) {
  const double h = 0.005, hw = 1.8, zeta[2] = {0.0, 2};
  ModelPtr m = LoadModelOrFail(ChainXml(2, 1, 0, h));
  ASSERT_NE(m, nullptr);
  SetScheme(m.get(), Scheme::kWeighted);
  DataPtr d(mj_makeData(m.get()));
  for (int i = 0; i < m->nv; ++i) m->dof_armature[i] = 1e-4;
  mj_setConst(m.get(), d.get());
  ASSERT_EQ(m->nu, 2);
  for (int u = 0; u < m->nu; ++u) {  // h w_n = 1.8 at qpos0 for every servo
    double invweight0 = m->dof_invweight0[u];
    double kp = hw * hw / (h * h * invweight0);
    m->actuator_gainprm[mjNGAIN * u] = kp;
    m->actuator_biasprm[mjNBIAS * u + 1] = -kp;
    m->actuator_biasprm[mjNBIAS * u + 2] = -2 * zeta[u] * std::sqrt(kp / invweight0);
  }

  // folded: the gate raises the first joint's weight above its weight at qpos0
  mj_forward(m.get(), d.get());
  double at_qpos0 = mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, 0);
  d->qpos[1] = 3.0;
  d->ctrl[1] = 3.0;
  mj_forward(m.get(), d.get());
  ASSERT_GT(mjd_posWeight(m.get(), d.get(), mjOBJ_ACTUATOR, 0), at_qpos0 + 0.01);

  EXPECT_TRUE(SameWithoutCache(m.get(), d.get(), 50, true));
}

// Catches: the weighted pass writing outside its own arrays in mjData (e.g. a cache entry before
// or past dof_posweightcache, into the arrays next to it): from the same state, a weighted step
// leaves every array that the integrator does not write as the unweighted step leaves it,
// cfrc_ext too, the last stock array, which lies just before the cache in mjData's buffer.
TEST_F(PosWeight, WeightedStepWritesOnlyItsOwnArrays) {
  std::string error;
  ModelPtr m(LoadXmlString(GearTendonArmXml(300, 0.5, 0.005), &error));
  ASSERT_NE(m, nullptr) << error;
  DataPtr d(mj_makeData(m.get()));
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = std::cos(i);
  for (int u = 0; u < m->nu; ++u) d->ctrl[u] = 0.2 * (u + 1);
  std::vector<std::vector<double>> out;
  for (Scheme s : {Scheme::kBackwardEuler, Scheme::kWeighted}) {
    SetScheme(m.get(), s);
    DataPtr step(mj_makeData(m.get()));
    mj_copyData(step.get(), m.get(), d.get());
    mj_step(m.get(), step.get());
    std::vector<double> v(step->actuator_force, step->actuator_force + m->nu);
    v.insert(v.end(), step->qfrc_actuator, step->qfrc_actuator + m->nv);
    v.insert(v.end(), step->qfrc_passive, step->qfrc_passive + m->nv);
    v.insert(v.end(), step->qLD, step->qLD + m->nM);
    v.insert(v.end(), step->cfrc_ext, step->cfrc_ext + 6 * m->nbody);
    out.push_back(v);
  }
  EXPECT_EQ(out[0], out[1]);
}

// The weight of each actuator's term (mjd_posWeight) of m after mj_forward at the joint positions
// qpos (the first of d->qpos).
std::vector<double> ActuatorWeightsAt(const mjModel* m, mjData* d,
                                      const std::vector<double>& qpos) {
  std::copy(qpos.begin(), qpos.end(), d->qpos);
  mj_forward(m, d);
  std::vector<double> w;
  for (int u = 0; u < m->nu; ++u) {
    w.push_back(mjd_posWeight(m, d, mjOBJ_ACTUATOR, u));
  }
  return w;
}

// Catches: the terms on the dofs an active constraint acts on not weighted 1 (constrainedDofs,
// doc/contact.md), under a dense or a sparse Jacobian, for a row on one dof or on several, or a
// servo with a moment row on such a dof keeping its table weight; the whole model weighted 1
// while any constraint is active (the mode was then the flag on every joint limit); a row read
// past the last (the same mjData first had more rows). A four-hinge arm with light servos (their
// table weight, far below 1) on joints a, b and c and on tendons of a, b and d alone: hinge a and
// the tendon of c and d pushed past their limits, or hinge b past its own; the terms on the dofs
// of no active row keep the weights of the arm held within its limits. (The servo on c tells the
// tendon's row from a joint limit's, whose dofs are its joint's.)
TEST_F(PosWeight, ConstrainedDofsWeighOne) {
  const std::string xml =
      "<mujoco><option timestep=\"0.002\" gravity=\"0 0 0\"/>"
      "<default><geom type=\"capsule\" size=\".02\" fromto=\"0 0 0 .3 0 0\" mass=\"1\" "
      "contype=\"0\" conaffinity=\"0\"/><joint axis=\"0 0 1\" armature=\".01\"/></default>"
      "<worldbody><body><joint name=\"a\" limited=\"true\" range=\"-30 30\"/><geom/>"
      "<body pos=\".3 0 0\"><joint name=\"b\" limited=\"true\" range=\"-30 30\"/><geom/>"
      "<body pos=\".3 0 0\"><joint name=\"c\"/><geom/>"
      "<body pos=\".3 0 0\"><joint name=\"d\"/><geom/>"
      "</body></body></body></body></worldbody>"
      "<tendon><fixed name=\"ta\"><joint joint=\"a\" coef=\"1\"/></fixed>"
      "<fixed name=\"tb\"><joint joint=\"b\" coef=\"1\"/></fixed>"
      "<fixed name=\"td\"><joint joint=\"d\" coef=\"1\"/></fixed>"
      "<fixed name=\"tcd\" limited=\"true\" range=\"-.5 .5\"><joint joint=\"c\" coef=\"1\"/>"
      "<joint joint=\"d\" coef=\"1\"/></fixed></tendon>"
      "<actuator><position joint=\"a\" kp=\"1\"/><position joint=\"b\" kp=\"1\"/>"
      "<position tendon=\"tb\" kp=\"1\"/><position tendon=\"td\" kp=\"1\"/>"
      "<position tendon=\"ta\" kp=\"1\"/><position joint=\"c\" kp=\"1\"/></actuator>"
      "</mujoco>";
  ModelPtr m = LoadModelOrFail(xml);
  ASSERT_NE(m, nullptr);
  SetScheme(m.get(), Scheme::kWeighted);
  for (int jacobian : {mjJAC_DENSE, mjJAC_SPARSE}) {
    m->opt.jacobian = jacobian;
    DataPtr d(mj_makeData(m.get()));
    // hinges a and b past their limits (30 degrees) or not; c and d turning tendon tcd past its
    // limit or not
    auto weights = [&](double a, double b, double cd, int nefc) {
      std::vector<double> w = ActuatorWeightsAt(m.get(), d.get(), {a, b, cd, cd});
      EXPECT_EQ(d->nefc, nefc) << jacobian;
      return w;
    };
    std::vector<double> two = weights(0.6, 0.2, 0.4, 2);
    std::vector<double> none = weights(0.2, 0.2, 0, 0);
    std::vector<double> limit = weights(0.2, 0.6, 0, 1);
    for (int u = 0; u < m->nu; ++u) {
      EXPECT_LT(none[u], 0.01) << "actuator " << u << ", jacobian " << jacobian;
    }
    // the limit of b: a's servos and the tendon servo of d keep their weights, b's are whole
    EXPECT_EQ(limit[0], none[0]) << jacobian;
    EXPECT_EQ(limit[3], none[3]) << jacobian;
    EXPECT_EQ(limit[4], none[4]) << jacobian;
    EXPECT_EQ(limit[5], none[5]) << jacobian;
    EXPECT_EQ(limit[1], 1) << jacobian;
    EXPECT_EQ(limit[2], 1) << jacobian;
    // the limits of a and of tcd (a row on two dofs): a's servos and the tendon servo of d are
    // whole, b's servos keep their weights
    EXPECT_EQ(two[0], 1) << jacobian;
    EXPECT_EQ(two[3], 1) << jacobian;
    EXPECT_EQ(two[4], 1) << jacobian;
    EXPECT_EQ(two[5], 1) << jacobian;
    EXPECT_EQ(two[1], none[1]) << jacobian;
    EXPECT_EQ(two[2], none[2]) << jacobian;
  }
}

// Catches: the joints' damping left out of a dof's damping (its zeta): one hinge whose servo has
// no damping of its own and whose joint has the damping c weighs as the same hinge with a servo of
// damping c, at h w_n = 2.5, just above stock's cap at zeta 0.1 (2.21), where the table's weight
// at zeta 0.1 is not its weight at zeta 0.
TEST_F(PosWeight, JointDampingCountsInTheDofsDamping) {
  const double kp = 62500, c = 50;  // I = 1, h = 0.01: w_n = 250, zeta = c / (2 w_n) = 0.1
  ModelPtr servo = LoadModelOrFail(OneHingeXml(1, kp, c, 0.01));
  ModelPtr joint = LoadModelOrFail(OneHingeXml(1, kp, 0, 0.01));
  ModelPtr none = LoadModelOrFail(OneHingeXml(1, kp, 0, 0.01));
  ASSERT_TRUE(servo && joint && none);
  joint->dof_damping[0] += c;
  auto weight = [](mjModel* m) {
    SetScheme(m, Scheme::kWeighted);
    DataPtr d(mj_makeData(m));
    mj_forward(m, d.get());
    return mjd_posWeight(m, d.get(), mjOBJ_ACTUATOR, 0);
  };
  double w = weight(servo.get());
  EXPECT_EQ(weight(joint.get()), w);
  EXPECT_NE(weight(none.get()), w);
  EXPECT_LT(w, 1);
}

// Catches: a contact's dofs found wrong: the dofs of its bodies' chains below their first common
// dof are whole, the others keep their weights. A three-hinge arm with light servos whose tip
// (body c) touches an obstacle of the world, or, folded back, the link of its root hinge a:
// there the contact does not move a (its Jacobian's column is zero), and a keeps its weight. The
// tip is an ellipsoid, geom1 of its contact with the box and geom2 of that with the capsule
// (MuJoCo orders a pair by geom type), so that each chain is the deeper one in one of them. Turned
// by -0.2, link a also touches a second box: each of two contacts marks its own dofs (frictionless,
// one row each, where the tip's contact with the world box has the rows of a pyramid).
TEST_F(PosWeight, ContactDofsWeighOne) {
  const std::string link = "<geom type=\"capsule\" size=\".02\" fromto=\"0 0 0 .3 0 0\"/>";
  const std::string xml =
      "<mujoco><option timestep=\"0.002\" gravity=\"0 0 0\"/>"
      "<default><geom mass=\"1\"/><joint axis=\"0 0 1\" armature=\".01\"/>"
      "<position kp=\"1\"/></default>"
      "<worldbody><geom type=\"box\" size=\".03 .03 .03\" pos=\".96 0 0\"/>"
      "<geom type=\"box\" size=\".03 .03 .03\" pos=\".15 -.075 0\" condim=\"1\"/>"
      "<body><joint name=\"a\"/>"
      "<geom type=\"capsule\" size=\".02\" fromto=\"0 0 0 .3 0 0\" condim=\"1\"/>"
      "<body pos=\".3 0 0\"><joint name=\"b\"/>" + link +
      "<body pos=\".3 0 0\"><joint name=\"c\"/>" + link +
      "<geom type=\"ellipsoid\" size=\".05 .05 .05\" pos=\".3 0 0\" condim=\"1\"/>"
      "</body></body></body></worldbody>"
      "<actuator><position joint=\"a\"/><position joint=\"b\"/><position joint=\"c\"/>"
      "</actuator></mujoco>";
  ModelPtr m = LoadModelOrFail(xml);
  ASSERT_NE(m, nullptr);
  SetScheme(m.get(), Scheme::kWeighted);
  for (int jacobian : {mjJAC_DENSE, mjJAC_SPARSE}) {
    m->opt.jacobian = jacobian;
    DataPtr d(mj_makeData(m.get()));
    auto weights = [&](double a, double b, double c) {
      return ActuatorWeightsAt(m.get(), d.get(), {a, b, c});
    };
    std::vector<double> none = weights(0.5, 0, 0);
    EXPECT_EQ(d->ncon, 0) << jacobian;
    std::vector<double> world = weights(0, 0, 0);
    ASSERT_EQ(d->ncon, 1) << jacobian;
    EXPECT_EQ(m->geom_bodyid[d->contact[0].geom1] * m->geom_bodyid[d->contact[0].geom2], 0)
        << jacobian;
    // the tip 0.06 from the axis of a's link (a sphere of 0.05 on a capsule of 0.02)
    std::vector<double> self = weights(0, 1.4629, 2.5963);
    ASSERT_EQ(d->ncon, 1) << jacobian;
    EXPECT_EQ(m->geom_bodyid[d->contact[0].geom1] + m->geom_bodyid[d->contact[0].geom2], 4)
        << jacobian;
    for (int u = 0; u < m->nu; ++u) {
      EXPECT_LT(none[u], 0.01) << "actuator " << u << ", jacobian " << jacobian;
      EXPECT_EQ(world[u], 1) << "actuator " << u << ", jacobian " << jacobian;
    }
    EXPECT_EQ(self[0], none[0]) << jacobian;
    EXPECT_EQ(self[1], 1) << jacobian;
    EXPECT_EQ(self[2], 1) << jacobian;
    // folded and turned onto the second box: two contacts of one type, their rows in turn
    std::vector<double> both = weights(-0.2, 1.4629, 2.5963);
    ASSERT_EQ(d->ncon, 2) << jacobian;
    for (int u = 0; u < m->nu; ++u) {
      EXPECT_EQ(both[u], 1) << "actuator " << u << ", jacobian " << jacobian;
    }
  }
}

// Catches: the mode acting without mjENBL_IMPLICITPOS (documented as a no-op), or under Euler.
TEST_F(PosWeight, NoEffectWithoutImplicitPos) {
  std::string error;
  ModelPtr m(LoadXmlString(GearTendonArmXml(300, 0.5, 0.005), &error));
  ASSERT_NE(m, nullptr) << error;
  for (int integrator : {mjINT_IMPLICIT, mjINT_EULER}) {
    m->opt.integrator = integrator;
    std::vector<std::vector<double>> out;
    for (bool weight : {false, true}) {
      m->opt.enableflags = weight ? mjENBL_POSWEIGHT : 0;
      DataPtr d(mj_makeData(m.get()));
      for (int i = 0; i < m->nv; ++i) d->qvel[i] = std::cos(i);
      for (int k = 0; k < 50; ++k) mj_step(m.get(), d.get());
      out.emplace_back(d->qpos, d->qpos + m->nq);
    }
    EXPECT_EQ(out[0], out[1]) << "integrator " << integrator;
  }
}

}  // namespace
}  // namespace mjpos
