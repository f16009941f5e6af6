# Copyright 2026 The MuJoCo implicitpos Authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""The peer driver: runs jobs on upstream MuJoCo's official native build and reports, as JSON.

The build is PyPI's `mujoco` 4.0 (its `mujoco-core` wheel carries the C library), pinned with
hashes in peer/requirements.txt and installed by tools/setup.sh into the build tree's
peer-venv/.

    peer-venv/bin/python peer/driver.py [--warp[=DEVICE]] < jobs.json > results.json
    peer-venv/bin/python peer/driver.py [--warp[=DEVICE]] --version

--warp steps the jobs with MuJoCo Warp (peer/requirements-warp.txt; float32) on a Warp device,
`cpu` unless one is named (e.g. --warp=cuda:0): the model, its edits and the state are set up in
C MuJoCo as below, then put on the device; controls and traces go through the host copy.
Warp raises no warnings: its `stable` is a finite state (within vmax where given). Its
kernel cache is WARP_CACHE_PATH (default: warp-cache/ beside the interpreter's environment).

Input: {"jobs": [JOB, ...]}. A JOB is
  xml        MJCF string (required, unless `file` is given)
  file       MJCF file path, instead of `xml` (a model with <include> files)
  model      {field: value or array}: mjModel fields overwritten after compiling (e.g. the
             actuator_* arrays of servos made from motors), element by element in memory order
  integrator "euler" | "rk4" | "implicit" | "implicitfast" | "discrete" (default: the XML's)
  timestep, tolerance, iterations
             mjOption values (default: the XML's)
  enable, disable
             lists of flag names, e.g. ["contact", "limit"], or'ed into opt.enableflags /
             opt.disableflags as mjENBL_<NAME> / mjDSBL_<NAME> (names, not bits: the bits
             differ between MuJoCo versions)
  key        keyframe to reset to first (mj_resetDataKeyframe)
  qpos, qvel, act, ctrl, qacc_warmstart
             state, controls and the solver's warm start set before stepping (after `key`)
  steps      number of mj_step calls (default 1); stepping stops at the first instability
  ctrls      {"every": k, "rows": [[...], ...]}: controls set before step i (from 0) to row
             floor(i / k), while there is one (support/motion.h's commands)
  vmax       a |qvel| above it after a step is an instability too
  trace      mjData array names recorded after every step, and "mindist" (the smallest
             contact distance, 0 without contacts), "normalforce" (the contacts' summed normal
             force, mj_contactForce) and "depth" (their mean penetration, 0 without contacts):
             the samples of support/contact.h; "NAME[i]" records element i of an array
             (e.g. "xpos[5]", the z of body 1)
  every      record the trace after every k-th step only (default 1)
  report     mjData array or scalar names read after the last step
  timed      true: also report the wall-clock seconds of the stepping loop (perf_counter); a
             timed job without ctrls, trace or vmax takes its steps in one mj_step call (nstep),
             so that the seconds are MuJoCo's alone, and is judged after the last step

Output: {"version": "4.0.1", "results": [RESULT, ...]}, one per job, in order:
  stable     no bad-qpos/qvel/qacc warning (MuJoCo's reset path) and a finite state
  steps      steps taken
  warnings   {"badqpos": n, "badqvel": n, "badqacc": n}
  report     {name: value or array}
  trace      {name: [[...] per step]}
  seconds    (timed jobs only)
A job that fails to compile gives {"error": message}. Non-finite numbers are written as null.

Under valgrind --tool=callgrind --toggle-collect=mj_step the counts are those of the jobs'
mj_step calls alone (the main job's native cost table).
"""

import json
import math
import os
import re
import sys
import time

import mujoco
import numpy as np

BAD = {
    "badqpos": mujoco.mjtWarning.mjWARN_BADQPOS,
    "badqvel": mujoco.mjtWarning.mjWARN_BADQVEL,
    "badqacc": mujoco.mjtWarning.mjWARN_BADQACC,
}


def flag_bits(names, enum, prefix):
  """The or of the bits of flag names in one of MuJoCo's flag enums."""
  bits = 0
  for name in names or []:
    try:
      bits |= int(getattr(enum, prefix + name.upper()))
    except AttributeError:
      raise ValueError(f"unknown flag {prefix}{name.upper()}") from None
  return bits


def plain(x):
  """A JSON-safe copy of a number or array: non-finite values become None."""
  if np.ndim(x) == 0:
    x = float(x)
    return x if math.isfinite(x) else None
  return [float(v) if math.isfinite(v) else None for v in np.ravel(x)]


def read_field(m, d, name):
  if name == "mindist":
    return min([0.0] + [float(c) for c in d.contact.dist[:d.ncon]])
  if name == "normalforce":
    force, frame = 0.0, np.zeros(6)
    for i in range(d.ncon):
      mujoco.mj_contactForce(m, d, i, frame)
      force += frame[0]
    return plain(force)
  if name == "depth":
    return float(-np.sum(d.contact.dist[:d.ncon]) / d.ncon) if d.ncon else 0.0
  element = re.fullmatch(r"(\w+)\[(\d+)\]", name)
  field = element.group(1) if element else name
  if field.startswith("_") or not hasattr(d, field):
    raise ValueError(f"mjData has no field {name}")
  x = getattr(d, field)
  if element:
    i = int(element.group(2))
    if np.ndim(x) == 0 or i >= np.size(x):
      raise ValueError(f"{name}: no such element")
    return plain(np.ravel(x)[i])
  return plain(x)


def bad_count(d):
  return {key: int(d.warning[w].number) for key, w in BAD.items()}


def set_array(target, values, name):
  values = np.atleast_1d(np.asarray(values, dtype=float))
  if values.size > target.size:
    raise ValueError(f"{name}: {values.size} > {target.size}")
  target.flat[:values.size] = values


def setup(job):
  """The job's model and data: compiled, edited, options and state set."""
  if "file" in job:
    m = mujoco.MjModel.from_xml_path(job["file"])
  else:
    m = mujoco.MjModel.from_xml_string(job["xml"])
  d = mujoco.MjData(m)

  # model edits and options
  for name, values in (job.get("model") or {}).items():
    if name.startswith("_") or not isinstance(getattr(m, name, None), np.ndarray):
      raise ValueError(f"mjModel has no field {name}")
    set_array(getattr(m, name), values, name)
  if "integrator" in job:
    integrator = getattr(mujoco.mjtIntegrator, "mjINT_" + str(job["integrator"]).upper(), None)
    if integrator is None:
      raise ValueError(f"unknown integrator {job['integrator']}")
    m.opt.integrator = integrator
  for key in ("timestep", "tolerance", "iterations"):
    if key in job:
      setattr(m.opt, key, job[key])
  m.opt.enableflags |= flag_bits(job.get("enable"), mujoco.mjtEnableBit, "mjENBL_")
  m.opt.disableflags |= flag_bits(job.get("disable"), mujoco.mjtDisableBit, "mjDSBL_")

  # state
  if "key" in job:
    mujoco.mj_resetDataKeyframe(m, d, job["key"])
  for name in ("qpos", "qvel", "act", "ctrl", "qacc_warmstart"):
    if name in job:
      set_array(getattr(d, name), job[name], name)
  return m, d


class Warp:
  """MuJoCo Warp on one device: a model and data put there, stepped, read back to the host."""

  def __init__(self, device):
    os.environ.setdefault("WARP_CACHE_PATH", os.path.join(sys.prefix, "warp-cache"))
    import warp  # pylint: disable=import-outside-toplevel
    import mujoco_warp  # pylint: disable=import-outside-toplevel
    warp.config.log_level = warp.LOG_WARNING
    self.wp, self.mjw, self.device = warp, mujoco_warp, device
    self.version = f"mujoco_warp {mujoco_warp.__version__} (warp {warp.__version__}, {device})"

  def put(self, m, d):
    self.m, self.d = m, d
    with self.wp.ScopedDevice(self.device):
      self.mw = self.mjw.put_model(m)
      self.dw = self.mjw.put_data(m, d)

  def step(self, nstep=1, ctrl=None):
    with self.wp.ScopedDevice(self.device):
      if ctrl is not None:
        self.dw.ctrl.assign(np.asarray(ctrl, dtype=np.float32).reshape(self.dw.ctrl.shape))
      for _ in range(nstep):
        self.mjw.step(self.mw, self.dw)
      self.wp.synchronize()

  def get(self):
    self.mjw.get_data_into(self.d, self.m, self.dw)


def run_job(job, warp=None):
  m, d = setup(job)
  if warp:
    warp.put(m, d)

  # step
  steps = job.get("steps", 1)
  every = job.get("every", 1)
  names = job.get("trace") or []
  trace = {name: [] for name in names}
  before = bad_count(d)
  ctrls = job.get("ctrls")
  vmax = job.get("vmax")
  taken, stable = 0, True
  t0 = time.perf_counter()
  if job.get("timed") and not (ctrls or names or vmax is not None):
    if warp:
      warp.step(steps)
    else:
      mujoco.mj_step(m, d, nstep=steps)
    taken = steps
    stable = bad_count(d) == before
  while taken < steps:
    row = None
    if ctrls and taken // ctrls["every"] < len(ctrls["rows"]):
      row = ctrls["rows"][taken // ctrls["every"]]
    if warp:
      warp.step(1, row)
      if names or vmax is not None:
        warp.get()
    else:
      if row is not None:
        set_array(d.ctrl, row, "ctrls")
      mujoco.mj_step(m, d)
    taken += 1
    if taken % every == 0:
      for name in names:
        trace[name].append(read_field(m, d, name))
    if bad_count(d) != before or (vmax is not None and np.any(np.abs(d.qvel) > vmax)):
      stable = False
      break
  seconds = time.perf_counter() - t0
  if warp:
    warp.get()
  stable = stable and bool(np.all(np.isfinite(d.qpos)) and np.all(np.isfinite(d.qvel)))

  result = {"stable": stable, "steps": taken, "warnings": bad_count(d), "report": {},
            "trace": trace}
  for name in job.get("report") or []:
    result["report"][name] = read_field(m, d, name)
  if job.get("timed"):
    result["seconds"] = seconds
  return result


def main():
  warp = None
  for arg in sys.argv[1:]:
    if arg == "--warp" or arg.startswith("--warp="):
      warp = Warp(arg.partition("=")[2] or "cpu")
    elif arg != "--version":
      sys.exit(f"driver.py: unknown argument {arg}")
  version = warp.version if warp else mujoco.mj_versionString()
  if "--version" in sys.argv[1:]:
    print(version)
    return
  jobs = json.load(sys.stdin)["jobs"]
  results = []
  stdout = os.dup(1)
  os.dup2(2, 1)  # what the libraries print goes to stderr; stdout is the results
  try:
    for job in jobs:
      try:
        results.append(run_job(job, warp))
      except Exception as e:  # pylint: disable=broad-except
        results.append({"error": f"{type(e).__name__}: {e}"})
  finally:
    sys.stdout.flush()
    os.dup2(stdout, 1)
  json.dump({"version": version, "results": results}, sys.stdout, allow_nan=False)
  sys.stdout.write("\n")


if __name__ == "__main__":
  main()
