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

// K assembled by mjd_implicitPos against a central finite difference of the forces it claims to
// linearise: K = -d(qfrc_actuator + qfrc_passive)/dqpos, for in-scope terms only. No reference
// here knows how K is built (no kp*m'm): the forces are the engine's own, so the affine-gain
// part of the slope, gears, repeated tendon joints and joint stiffness are all checked.

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>
#include "engine/engine_support.h"
#include "test/fixture.h"
#include "support/models.h"

namespace mjpos {
namespace {

// three hinges on one chain (a, b, c) and a slide (s) on its own body; stiffness on b and s
std::string Model(const std::string& actuators, const std::string& tendons = "") {
  return "<mujoco>\n"
         "  <option integrator=\"implicit\" timestep=\"0.005\" gravity=\"0 0 -9.81\">"
         "<flag contact=\"disable\"/></option>\n"
         "  <default><joint armature=\"0.01\" damping=\"0.2\"/>"
         "<geom type=\"capsule\" size=\".02\" fromto=\"0 0 0 .2 0 0\"/></default>\n"
         "  <worldbody>\n"
         "    <body><joint name=\"a\" axis=\"0 1 0\"/><geom/>\n"
         "      <body pos=\".2 0 0\"><joint name=\"b\" axis=\"0 0 1\" stiffness=\"40\"/><geom/>\n"
         "        <body pos=\".2 0 0\"><joint name=\"c\" axis=\"0 1 0\"/><geom/></body>\n"
         "      </body>\n"
         "    </body>\n"
         "    <body pos=\"0 1 0\"><joint name=\"s\" type=\"slide\" axis=\"1 0 0\" stiffness=\"25\""
         " springref=\"0.1\"/><geom/></body>\n"
         "  </worldbody>\n" + tendons +
         "  <actuator>\n" + actuators + "  </actuator>\n"
         "</mujoco>\n";
}

// affine gain (g0 + g1*length)*input and affine bias b1*length - 0.5*velocity
std::string Affine(const std::string& target, double g0, double g1, double b1,
                   const std::string& extra = "") {
  return "    " + AffineActuator(target, g0, g1, b1, -0.5, extra);
}

// the state: angles away from rest, velocities, controls and activations
void SetPoseAndInput(const mjModel* m, mjData* d, double input) {
  for (int i = 0; i < m->nq; ++i) d->qpos[i] = 0.3 * std::sin(1.0 + 2 * i);
  for (int i = 0; i < m->nv; ++i) d->qvel[i] = 1.5 * std::cos(0.5 + i);
  for (int u = 0; u < m->nu; ++u) d->ctrl[u] = input * (1 + 0.1 * u);
  for (int a = 0; a < m->na; ++a) d->act[a] = input * (1 - 0.2 * a);
  mj_forward(m, d);
}

// K and K*qvel equal the finite difference for every kp and input, and every actuator is in
// scope and restoring, so that nothing is compared vacuously
void ExpectKMatchesFiniteDifference(const std::string& name, const std::string& xml) {
  std::string error;
  ModelPtr m(LoadXmlString(xml, &error));
  ASSERT_NE(m, nullptr) << name << ": " << error;
  DataPtr d(mj_makeData(m.get()));
  for (double input : {-0.7, 0.4, 1.3}) {
    SetPoseAndInput(m.get(), d.get(), input);
    for (int u = 0; u < m->nu; ++u) {
      EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), u, nullptr), mjPOSSCOPE_RESTORING)
          << name << " actuator " << u << " input " << input;
    }
    KError error = KAgainstFiniteDifference(m.get(), d.get(), 1e-4);
    EXPECT_LE(error.k, 1e-8) << name << " input " << input;
    EXPECT_LE(error.kv, 1e-8) << name << " input " << input;
  }
}

class ImplicitPosK : public MujocoTest {};

// Catches: a wrong kp*gear^2 term, a dropped gear, or stiffness of hinges and slides missing.
TEST_F(ImplicitPosK, JointServosWithGearsAndStiffness) {
  for (double kp : {10.0, 1e3, 1e5}) {
    ExpectKMatchesFiniteDifference(
        "kp " + std::to_string(kp),
        Model(Affine("joint=\"a\"", kp, 0, -kp) + Affine("joint=\"c\" gear=\"2.5\"", kp, 0, -kp) +
              Affine("joint=\"s\" gear=\"-0.5\"", kp, 0, -kp)));
  }
}

// Catches: the affine-gain part of the slope (gainprm[1]*input) dropped or with a wrong input,
// for actuators driven by ctrl.
TEST_F(ImplicitPosK, AffineGainDrivenByCtrl) {
  for (double kp : {10.0, 1e3, 1e5}) {
    ExpectKMatchesFiniteDifference(
        "kp " + std::to_string(kp),
        Model(Affine("joint=\"a\"", 0.3 * kp, -0.4 * kp, -kp) +
              Affine("joint=\"c\" gear=\"2\"", 0.1 * kp, 0.5 * kp, -kp)));
  }
}

// Catches: the input of the affine gain read from ctrl where the actuator has dynamics (its
// input is act), for integrator and filter dynamics.
TEST_F(ImplicitPosK, AffineGainDrivenByAct) {
  for (double kp : {10.0, 1e3, 1e5}) {
    ExpectKMatchesFiniteDifference(
        "kp " + std::to_string(kp),
        Model(Affine("joint=\"a\"", 0.3 * kp, -0.4 * kp, -kp, "dyntype=\"integrator\"") +
              Affine("joint=\"b\" gear=\"1.5\"", 0.1 * kp, 0.5 * kp, -kp,
                     "dyntype=\"filter\" dynprm=\"0.05\"")));
  }
}

// Catches: a wrong tendon block kp*gear^2*m'm or its shift, on a fixed tendon along one chain.
TEST_F(ImplicitPosK, FixedTendonOnChain) {
  const std::string tendon =
      "  <tendon><fixed name=\"t\"><joint joint=\"a\" coef=\"1.3\"/><joint joint=\"b\" "
      "coef=\"0.5\"/><joint joint=\"c\" coef=\"-0.25\"/></fixed></tendon>\n";
  for (double kp : {10.0, 1e3, 1e5}) {
    ExpectKMatchesFiniteDifference(
        "kp " + std::to_string(kp),
        Model(Affine("tendon=\"t\" gear=\"1.5\"", 0.2 * kp, -0.3 * kp, -kp), tendon));
  }
}

// Catches: a fixed tendon that lists a joint twice taken into K. MuJoCo 2.2.2's tendon moment
// keeps the joint's last coefficient while the length sums them, so the force is not the
// gradient of a potential: such a tendon is out of scope, and K holds the joint springs alone.
TEST_F(ImplicitPosK, FixedTendonWithRepeatedJointOutOfScope) {
  const std::string tendon =
      "  <tendon><fixed name=\"t\"><joint joint=\"a\" coef=\"1\"/><joint joint=\"b\" "
      "coef=\"0.5\"/><joint joint=\"a\" coef=\"0.3\"/></fixed></tendon>\n";
  std::string error;
  ModelPtr m(LoadXmlString(Model(Affine("tendon=\"t\"", 1e3, 0, -1e3), tendon), &error));
  ASSERT_NE(m, nullptr) << error;
  DataPtr d(mj_makeData(m.get()));
  SetPoseAndInput(m.get(), d.get(), 0.4);
  EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, nullptr), mjPOSSCOPE_TRANSMISSION);
  std::vector<double> k, kv;
  EngineK(m.get(), d.get(), &k, &kv);
  int nv = m->nv;
  for (int r = 0; r < nv; ++r) {
    for (int c = 0; c < nv; ++c) {
      int j = m->dof_jntid[r];
      double spring = r == c ? m->jnt_stiffness[j] : 0;
      EXPECT_EQ(k[r * nv + c], spring) << "K(" << r << ", " << c << ")";
    }
  }
}

// Catches: a piece of a muscle's force-length or passive curve with a wrong slope, the velocity
// curve or the activation left out of it, the force scale of either curve (its own force, or
// scale / acc0) wrong, or the part that is not restoring (the descending limb, where the passive
// curve is weak) taken into K. One muscle (gear 1.5) on hinge a, at normalized lengths on every
// piece of 2.2.2's curves (below lmin, the ascending limb in its two halves, the descending limb
// in its two halves with the passive curve quadratic and linear, beyond lmax), activations 0.3
// and 1, lengthening, shortening and shortening beyond vmax, peak forces scaled by acc0 (-1),
// given (300, 0.5) and zero: where its slope is restoring, K is the finite difference; where not,
// the muscle adds nothing to K; and the velocity slope mjd_actuatorSlopes reports, which the
// weights read as the term's damping, is the finite difference of the force in the velocity.
TEST_F(ImplicitPosK, MuscleOnEveryPieceOfItsCurves) {
  int restoring = 0, excluded = 0;
  for (const char* force : {"-1", "300", "0.5", "0"}) {
    std::string muscle = std::string("    <muscle joint=\"a\" gear=\"1.5\" lengthrange=\"-0.3 0.3\""
                                     " fpmax=\"0.3\" force=\"") + force + "\"/>\n";
    std::string error;
    ModelPtr m(LoadXmlString(Model(muscle), &error));
    ASSERT_NE(m, nullptr) << error;
    DataPtr d(mj_makeData(m.get()));
    const double* range = m->actuator_gainprm;  // range, force, scale, lmin, lmax, ...
    const double* lr = m->actuator_lengthrange;
    double l0 = (lr[1] - lr[0]) / (range[1] - range[0]);
    for (double norm : {0.4, 0.6, 0.7, 0.85, 0.97, 1.1, 1.25, 1.4, 1.55, 1.7}) {
      for (double act : {0.3, 1.0}) {
        for (double vel : {0.2, -0.2, -40.0}) {
          std::string at = std::string("force ") + force + " L " + std::to_string(norm) +
                           " act " + std::to_string(act) + " vel " + std::to_string(vel);
          SetPoseAndInput(m.get(), d.get(), 0.5);
          d->qpos[0] = (lr[0] + (norm - range[0]) * l0) / 1.5;
          d->qvel[0] = vel / 1.5;
          d->act[0] = act;
          mj_forward(m.get(), d.get());
          mjtNum slope;
          int scope = mjd_actuatorPosScope(m.get(), d.get(), 0, &slope);

          // the velocity slope the weights read: the finite difference of the force (the moment
          // is the constant gear; its velocity curve is quadratic on each side of rest)
          mjtNum slopes[2];
          EXPECT_EQ(mjd_actuatorSlopes(m.get(), d.get(), 0, slopes), 1) << at;
          EXPECT_EQ(slopes[0], slope) << at;
          double f[2], ev = 1e-6;
          for (int side : {0, 1}) {
            DataPtr e(mj_copyData(nullptr, m.get(), d.get()));
            e->qvel[0] += (side ? ev : -ev) / 1.5;
            mj_forward(m.get(), e.get());
            f[side] = e->actuator_force[0];
          }
          double fdv = (f[1] - f[0]) / (2 * ev);
          EXPECT_NEAR(slopes[1], fdv, 1e-6 * std::abs(fdv) + 1e-9) << at;
          if (scope == mjPOSSCOPE_RESTORING) {
            ++restoring;
            KError e = KAgainstFiniteDifference(m.get(), d.get(), 1e-6);
            EXPECT_LE(e.k, 1e-6) << at;
            EXPECT_LE(e.kv, 1e-6) << at;
          } else {
            // not restoring (or zero: shortening beyond vmax on the ascending limb)
            excluded += slope > 0;
            EXPECT_EQ(scope, slope > 0 ? mjPOSSCOPE_NONRESTORING : mjPOSSCOPE_ZERO) << at;
            std::vector<double> k, kv;
            EngineK(m.get(), d.get(), &k, &kv);
            EXPECT_EQ(k[0], 0) << at;  // hinge a: no spring, no other actuator
            // and the muscle's own slope is the finite difference
            std::vector<double> fd = FiniteDifferenceK(m.get(), d.get(), 1e-6);
            EXPECT_NEAR(-slope * 1.5 * 1.5, fd[0], 1e-6 * std::abs(fd[0]) + 1e-9) << at;
            EXPECT_GE(slope, 0) << at;
          }
        }
      }
    }
  }
  EXPECT_GT(restoring, 60);
  EXPECT_GT(excluded, 4);
}

// Catches: the slope at the lower end of the ascending limb taken from the wrong piece. 2.2.2's
// force-length curve is discontinuous at L = lmin (below it, the upper piece of the ascending
// limb continues, near -1; at lmin the lower piece starts, at 0), and the slope is that of the
// piece 2.2.2 evaluates the point with: 0 there, so an inactive or active muscle at exactly lmin
// on the ascending limb's short side has no slope (ZERO), where the other piece would put a
// steep restoring term in K. The operating range starts at lmin (range 0.5) so that the muscle
// at the start of its length range is exactly at lmin.
TEST_F(ImplicitPosK, MuscleAtLminTakesThePieceItIsEvaluatedWith) {
  ModelPtr m = LoadModelOrFail(Model("    <muscle joint=\"a\" lengthrange=\"-0.3 0.3\""
                                     " range=\"0.5 1.05\"/>\n"));
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->actuator_gainprm[4], m->actuator_gainprm[0]);  // lmin = range[0]
  DataPtr d(mj_makeData(m.get()));
  for (double act : {0.3, 1.0}) {
    SetPoseAndInput(m.get(), d.get(), 0.5);
    d->qpos[0] = m->actuator_lengthrange[0];  // gear 1: the length is exactly lengthrange[0]
    d->qvel[0] = 0;
    d->act[0] = act;
    mj_forward(m.get(), d.get());
    ASSERT_EQ(d->actuator_length[0], m->actuator_lengthrange[0]);
    mjtNum slope;
    EXPECT_EQ(mjd_actuatorPosScope(m.get(), d.get(), 0, &slope), mjPOSSCOPE_ZERO) << act;
    EXPECT_EQ(slope, 0) << act;
  }
}

}  // namespace
}  // namespace mjpos
