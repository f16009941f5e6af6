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

// Servo report: whether the position gains of a model are stable for a given timestep and
// integrator, per actuator and per joint spring, and for the coupled linearised system; and what
// mjENBL_IMPLICITPOS would deliver instead. See servo_report/README.md for the formulas.

#ifndef MJPOS_SERVO_REPORT_SERVO_REPORT_H_
#define MJPOS_SERVO_REPORT_SERVO_REPORT_H_

#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include "support/one_dof.h"  // Discrete, OneDofMap, OneDofCap

namespace mjpos {

struct ServoOptions {
  double timestep = 0;    // <= 0: the model's
  int integrator = -1;    // mjtIntegrator; < 0: the model's
  int key = -1;           // keyframe; < 0: qpos0
  int system_max_nv = 200;  // coupled analysis only up to this many dofs
  bool posweight = false;   // the flag columns: implicitpos with mjENBL_POSWEIGHT's weights
};

// Stability verdict.
enum class Verdict { kStable, kNear, kUnstable, kNonRestoring, kUnknown };
const char* VerdictName(Verdict v);

// One actuator, or one joint spring (jnt_stiffness), in the units of its own length.
struct ServoRow {
  bool spring = false;         // joint spring instead of actuator
  int id = -1;                 // actuator id or joint id
  std::string name;
  std::string transmission;    // joint, jointinparent, slidercrank, tendon, site, body; spring: joint type
  std::string target;          // joint / tendon / site / body name(s), and the dofs
  std::string gain;            // gain/bias types (actuators)
  double gear = 1;             // gear[0]
  bool slopes_known = false;   // kp and kv are known (the engine's: all but a user gain or bias)
  double kp = 0;               // -d force / d length
  double kv = 0;               // -d force / d velocity (explicit under Euler)
  double damping = 0;          // joint damping reflected to the actuator (implicit under Euler)
  double inertia = 0;          // reflected inertia 1/(m M^-1 m'), includes armature; inf if m = 0
  double omega_n = 0;          // sqrt(kp / inertia)
  double f_n = 0;              // omega_n / (2 pi)
  double zeta = 0;             // (kv + damping) / (2 sqrt(kp inertia))
  double h_omega = 0;          // h * omega_n
  double cap = 0;              // largest stable kp for the chosen integrator (inf: none)
  double ratio = 0;            // kp / cap
  Discrete stock;              // the chosen integrator's one-dof map
  Verdict verdict = Verdict::kUnknown;
  int scope = -1;              // mjtPosScope under mjENBL_IMPLICITPOS
  std::string scope_name;      // e.g. "RESTORING", "TRANSMISSION"
  bool in_scope = false;       // made implicit in position by the flag
  std::string why;             // when excluded: why (mjd_posScopeReason)
  double theta = 1;            // weight of the term under mjENBL_POSWEIGHT (1: backward Euler)
  Discrete flag;               // implicit + flag (excluded: stock implicit)
  Verdict flag_verdict = Verdict::kUnknown;
  double flag_kp_step = 0;     // force the flag's step applies per unit error, from rest: one
                               // step's actuator_force_step from a unit error (kp I / (I + h c
                               // + theta h^2 kp) in scope; excluded: stock implicit's)
};

// The coupled linearised system (all dofs, all actuators and springs; no constraints, no gravity
// gradient, at rest).
struct ServoSystem {
  bool analysed = false;
  std::string note;            // why not analysed
  double rho = 0;              // spectral radius of the chosen integrator's one-step map
  double margin = 0;           // factor on all position slopes at which that map gets unstable
  Verdict verdict = Verdict::kUnknown;
  double rho_flag = 0;         // spectral radius of implicit + flag
  Verdict flag_verdict = Verdict::kUnknown;
};

struct ServoReport {
  std::string model;
  double timestep = 0;
  int integrator = 0;
  int key = -1;
  int nv = 0;
  bool posweight = false;      // flag columns include mjENBL_POSWEIGHT
  std::vector<ServoRow> rows;
  ServoSystem system;
  int unstable = 0;            // number of unstable rows, plus 1 if the system is unstable
};

// Analyses m at qpos0 (or keyframe options.key) for options.timestep and options.integrator.
// Returns false (and error) if the options do not fit the model.
bool AnalyzeServos(const mjModel* m, const ServoOptions& options, ServoReport* report,
                   std::string* error = nullptr);

std::string FormatText(const ServoReport& report);
std::string FormatJson(const ServoReport& report);

}  // namespace mjpos

#endif  // MJPOS_SERVO_REPORT_SERVO_REPORT_H_
