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

// The C++ side of the peer suite: runs jobs on upstream MuJoCo's official native build (4.0,
// through peer/driver.py in the build tree's peer-venv/) and gives the results to the
// comparisons. The job format is documented in driver.py; this header adds what both sides
// share: the state of a model of ours as a job, and the servo edits of mjpos::MakeServos as
// mjModel field values.

#ifndef MJPOS_PEER_PEER_H_
#define MJPOS_PEER_PEER_H_

#include <string>
#include <vector>

#include <mujoco/mujoco.h>
#include <nlohmann/json.hpp>
#include "support/contact.h"
#include "support/motion.h"

namespace mjpos::peer {

using Json = nlohmann::json;

// Runs the jobs (a JSON array) in one driver process; returns the array of results, one per job,
// in order. Throws std::runtime_error if the driver cannot run or its output does not parse.
// args: the driver's options, e.g. kWarp.
Json Run(const Json& jobs, const std::string& args = "");

// The version string of the peer build (mj_versionString), or with args that of its backend.
std::string Version(const std::string& args = "");

// The driver's option that steps the jobs with MuJoCo Warp on the CPU (peer/driver.py).
inline constexpr char kWarp[] = "--warp=cpu";

// A job for the peer: MJCF text, integrator name, and the state and controls of d (qpos, qvel,
// act, ctrl) so that both sides step from the same state.
Json StateJob(const std::string& xml, const std::string& integrator, const mjModel* m,
              const mjData* d);

// The mjModel fields that MakeServos and LoadWithServos change, with their values in m: sent
// as the job's "model" edits, they make the peer's copy of a shipped model the same servos.
Json ServoEdits(const mjModel* m);

// A job running support/motion.h's setting s (its subject from model_dir, the pristine source's
// model/) under `integrator` at timestep h from qpos0 for `steps` steps (-1: kMotionSeconds):
// the subject's MJCF, its tuned servos as edits, the
// command's controls (MotionControls, as rows repeated every k steps where they repeat) and
// kMotionVmax as the job's vmax.
Json MotionJob(const MotionSetting& s, const std::string& model_dir,
               const std::string& integrator, double h, int steps = -1);

// The controls of a run, `steps` rows of nu (row k applied before step k, as MotionControls
// gives them), as a job's "ctrls": the rows repeated every k steps, k as large as they allow.
Json ControlRows(const std::vector<double>& ctrl, int nu, int steps);

// A result's array field ("report" or "trace" entry) as numbers; NaN where the driver wrote null.
std::vector<double> Numbers(const Json& array);

// The trace name of element a (0 x, 1 y, 2 z) of body's position: "xpos[3*body+a]".
std::string Xpos(int body, int a);

// The standing metrics of a result whose job ran `seconds` at h and traced "normalforce",
// "depth" and "ncon" every ContactStride(h) steps (and body's Xpos, if body >= 0): MeasureContact's
// over the last kContactWindow s (support/contact.h); unstable if the job failed or diverged.
ContactMetrics StandingOf(double seconds, int body, double h, const Json& r);

// The shell command that runs the driver (reads jobs on stdin, writes results on stdout).
std::string DriverCommand();

// The MJCF text of a file (the peer compiles from a string).
std::string ReadFile(const std::string& path);

}  // namespace mjpos::peer

#endif  // MJPOS_PEER_PEER_H_
