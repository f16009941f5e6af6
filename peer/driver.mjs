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

// The peer driver: runs jobs on upstream MuJoCo's official WebAssembly build (@mujoco/mujoco,
// pinned in package-lock.json) and reports what the comparisons need, as JSON.
//
//   node peer/driver.mjs < jobs.json > results.json
//   node peer/driver.mjs --version
//
// Input: {"jobs": [JOB, ...]}. A JOB is
//   xml        MJCF string (required)
//   model      {field: value or array}: mjModel fields overwritten after compiling (e.g. the
//              actuator_* arrays of servos made from motors), element by element
//   integrator "euler" | "rk4" | "implicit" | "implicitfast" | "discrete" (default: the XML's)
//   timestep, tolerance, iterations
//              mjOption values (default: the XML's)
//   enable, disable
//              lists of flag names, e.g. ["contact", "limit"], or'ed into opt.enableflags /
//              opt.disableflags as mjENBL_<NAME> / mjDSBL_<NAME> (names, not bits: the bits
//              differ between MuJoCo versions)
//   key        keyframe to reset to first (mj_resetDataKeyframe)
//   qpos, qvel, act, ctrl
//              state and controls set before stepping (after `key`)
//   steps      number of mj_step calls (default 1); stepping stops at the first instability
//   ctrls      {"every": k, "rows": [[...], ...]}: controls set before step i (from 0) to row
//              floor(i / k), while there is one (support/motion.h's commands)
//   vmax       a |qvel| above it after a step is an instability too
//   trace      mjData array names recorded after every step, and "mindist" (the smallest
//              contact distance, 0 without contacts), "normalforce" (the contacts' summed normal
//              force, mj_contactForce) and "depth" (their mean penetration, 0 without contacts):
//              the samples of support/contact.h; "NAME[i]" records element i of an array
//              (e.g. "xpos[5]", the z of body 1)
//   every      record the trace after every k-th step only (default 1)
//   report     mjData array or scalar names read after the last step
//   timed      true: also report the wall-clock seconds of the stepping loop (performance.now)
//
// Output: {"version": "3.14.0", "results": [RESULT, ...]}, one per job, in order:
//   stable     no bad-qpos/qvel/qacc warning (MuJoCo's reset path) and a finite state
//   steps      steps taken
//   warnings   {"badqpos": n, "badqvel": n, "badqacc": n}
//   report     {name: value or array}
//   trace      {name: [[...] per step]}
//   seconds    (timed jobs only)
// A job that fails to compile gives {"error": message}. Non-finite numbers are written as null.

import load from '@mujoco/mujoco';
import {readFileSync} from 'node:fs';

const mj = await load();

if (process.argv.includes('--version')) {
  console.log(mj.mj_versionString());
  process.exit(0);
}

const INTEGRATORS = {
  euler: mj.mjtIntegrator.mjINT_EULER.value,
  rk4: mj.mjtIntegrator.mjINT_RK4.value,
  implicit: mj.mjtIntegrator.mjINT_IMPLICIT.value,
  implicitfast: mj.mjtIntegrator.mjINT_IMPLICITFAST.value,
  discrete: mj.mjtIntegrator.mjINT_DISCRETE.value,
};
const BAD = {
  badqpos: mj.mjtWarning.mjWARN_BADQPOS.value,
  badqvel: mj.mjtWarning.mjWARN_BADQVEL.value,
  badqacc: mj.mjtWarning.mjWARN_BADQACC.value,
};

// the bit of a flag name in one of MuJoCo's flag enums
function flagBits(names, enumType, prefix) {
  let bits = 0;
  for (const name of names || []) {
    const e = enumType[prefix + name.toUpperCase()];
    if (e === undefined) throw new Error(`unknown flag ${prefix}${name.toUpperCase()}`);
    bits |= e.value;
  }
  return bits;
}

// a JSON-safe copy of a number or typed array: non-finite values become null
function plain(x) {
  if (typeof x === 'number') return Number.isFinite(x) ? x : null;
  return Array.from(x, (v) => (Number.isFinite(v) ? v : null));
}

function readField(m, d, name) {
  if (name === 'mindist') {
    let dist = 0;
    for (let i = 0; i < d.ncon; ++i) dist = Math.min(dist, d.contact.get(i).dist);
    return dist;
  }
  if (name === 'normalforce') {
    let force = 0;
    const frame = new mj.DoubleBuffer(6);
    try {
      for (let i = 0; i < d.ncon; ++i) {
        mj.mj_contactForce(m, d, i, frame);
        force += frame.GetView()[0];
      }
    } finally {
      frame.delete();
    }
    return plain(force);
  }
  if (name === 'depth') {
    let depth = 0;
    for (let i = 0; i < d.ncon; ++i) depth -= d.contact.get(i).dist;
    return d.ncon ? depth / d.ncon : 0;
  }
  const element = /^(\w+)\[(\d+)\]$/.exec(name);
  const x = d[element ? element[1] : name];
  if (x === undefined) throw new Error(`mjData has no field ${name}`);
  if (element) {
    const i = Number(element[2]);
    if (typeof x === 'number' || i >= x.length) throw new Error(`${name}: no such element`);
    return plain(x[i]);
  }
  return plain(x);
}

function badCount(d) {
  const n = {};
  for (const [key, w] of Object.entries(BAD)) n[key] = d.warning.get(w).number;
  return n;
}

function finite(arr) {
  for (const v of arr) if (!Number.isFinite(v)) return false;
  return true;
}

function setArray(target, values, name) {
  if (typeof values === 'number') values = [values];
  if (values.length > target.length) throw new Error(`${name}: ${values.length} > ${target.length}`);
  values.forEach((v, i) => { target[i] = v; });
}

function runJob(job) {
  const m = mj.MjModel.from_xml_string(job.xml);
  const d = new mj.MjData(m);
  try {
    // model edits and options
    for (const [name, values] of Object.entries(job.model || {})) {
      if (m[name] === undefined) throw new Error(`mjModel has no field ${name}`);
      setArray(m[name], values, name);
    }
    if (job.integrator !== undefined) {
      if (!(job.integrator in INTEGRATORS)) throw new Error(`unknown integrator ${job.integrator}`);
      m.opt.integrator = INTEGRATORS[job.integrator];
    }
    for (const key of ['timestep', 'tolerance', 'iterations']) {
      if (job[key] !== undefined) m.opt[key] = job[key];
    }
    m.opt.enableflags |= flagBits(job.enable, mj.mjtEnableBit, 'mjENBL_');
    m.opt.disableflags |= flagBits(job.disable, mj.mjtDisableBit, 'mjDSBL_');

    // state
    if (job.key !== undefined) mj.mj_resetDataKeyframe(m, d, job.key);
    for (const name of ['qpos', 'qvel', 'act', 'ctrl']) {
      if (job[name] !== undefined) setArray(d[name], job[name], name);
    }

    // step
    const steps = job.steps ?? 1;
    const every = job.every ?? 1;
    const trace = {};
    for (const name of job.trace || []) trace[name] = [];
    const before = badCount(d);
    const changed = () => Object.keys(BAD).some((k) => d.warning.get(BAD[k]).number !== before[k]);
    let taken = 0;
    let stable = true;
    const t0 = performance.now();
    const ctrls = job.ctrls;
    const fast = () => job.vmax !== undefined && d.qvel.some((v) => Math.abs(v) > job.vmax);
    while (taken < steps) {
      if (ctrls && Math.floor(taken / ctrls.every) < ctrls.rows.length) {
        setArray(d.ctrl, ctrls.rows[Math.floor(taken / ctrls.every)], 'ctrls');
      }
      mj.mj_step(m, d);
      ++taken;
      if (taken % every === 0) {
        for (const name of job.trace || []) trace[name].push(readField(m, d, name));
      }
      if (changed() || fast()) {
        stable = false;
        break;
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    stable = stable && finite(d.qpos) && finite(d.qvel);

    const result = {stable, steps: taken, warnings: badCount(d), report: {}, trace};
    for (const name of job.report || []) result.report[name] = readField(m, d, name);
    if (job.timed) result.seconds = seconds;
    return result;
  } finally {
    d.delete();
    m.delete();
  }
}

const input = JSON.parse(readFileSync(0, 'utf8'));
const results = input.jobs.map((job) => {
  try {
    return runJob(job);
  } catch (e) {
    return {error: String(e.message || e)};
  }
});
process.stdout.write(JSON.stringify({version: mj.mj_versionString(), results}) + '\n');
