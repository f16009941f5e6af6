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
"""The servo humanoid under violent random targets: what makes the flag's step diverge.

Each motor of MuJoCo's humanoid becomes a position servo tuned from its joint's reflected inertia at
qpos0 (kp = M_jj w_n^2 / g^2, kv = 2 zeta M_jj w_n / g^2, w_n = 2 pi f_n; M_jj the diagonal of qM at
qpos0, armature included); a policy sends a new uniformly random target inside each joint's range
every 40 ms for 2 s. The script measures, on the settings where the flag was reported to diverge,
which factor is responsible: the free root, the constraints, gravity, and, on the steps before the
divergence, the residual of the backward-Euler equations at the end state split into the terms the
step neglects (mass-matrix change, bias-force change, actuator and constraint force change). It
prints Markdown to stdout. Every number is computed here by stepping the patched engine.

  nice -n 19 env PYTHONPATH=BUILD/python MUJOCO_GL=disable python3 \
      python/study/violent_motion.py --model HUMANOID_XML --part all
"""

import argparse
import copy
import re

import mujoco
import numpy as np

BIT = int(mujoco.mjtEnableBit.mjENBL_IMPLICITPOS)
POSWEIGHT = int(mujoco.mjtEnableBit.mjENBL_POSWEIGHT)
SCHEMES = {'stock': 0, 'flag': BIT, 'flag+posweight': BIT | POSWEIGHT}
DSBL = mujoco.mjtDisableBit
BAD = (mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL,
       mujoco.mjtWarning.mjWARN_BADQACC)

# (f_n [Hz], zeta, h [s]): the two failing and two bounded settings.
SETTINGS = {
    'A': (100.0, 0.7, 0.010),
    'B': (300.0, 0.7, 0.005),
    'C': (100.0, 0.7, 0.005),
    'D': (300.0, 1.0, 0.002),
}
FAILING = ('A', 'B')
DURATION = 2.0
PERIOD = 0.040  # a new target every 40 ms
VMAX = 1e4  # |qvel| above this counts as diverged
SEEDS = (0, 1, 2)

# Factors: (welded root, disable bits).
FACTORS = {
    'model as is': (False, 0),
    'root welded': (True, 0),
    'no contact': (False, int(DSBL.mjDSBL_CONTACT)),
    'no joint limits': (False, int(DSBL.mjDSBL_LIMIT)),
    'no contact, no limits': (False, int(DSBL.mjDSBL_CONTACT) | int(DSBL.mjDSBL_LIMIT)),
    'no constraints': (False, int(DSBL.mjDSBL_CONSTRAINT)),
    'no gravity': (False, int(DSBL.mjDSBL_GRAVITY)),
    'welded, no constraints, no gravity': (True, int(DSBL.mjDSBL_CONSTRAINT) |
                                           int(DSBL.mjDSBL_GRAVITY)),
}


#-------------------------------------- model and policy ------------------------------------------


def humanoid_xml(path, welded):
  """The humanoid's MJCF text; welded: without the freejoint, so the torso is fixed in the world."""
  with open(path) as f:
    text = f.read()
  if welded:
    text, n = re.subn(r'<freejoint[^>]*/>', '', text)
    assert n == 1, 'expected one freejoint'
  return text


def servo_model(xml, fn, zeta, h, enable, disable=0, targets='joint'):
  """The humanoid with its motors turned into position servos tuned at qpos0.

  Actuator i on hinge dof j with gear g: gainprm[0] = kp_i, biasprm = [0, -kp_i, -kv_i],
  kp_i = M_jj w^2 / g^2, kv_i = 2 zeta M_jj w / g^2. The actuator length is g q, so the joint
  sees the torque M_jj w^2 (ctrl / g - q) - 2 zeta M_jj w qdot.
  targets 'joint': ctrlrange = g * (the joint's range), so ctrl = g * (target angle) and the
  joint's target is an angle drawn from its whole range. targets 'literal': ctrlrange = the
  joint's range and ctrl = the target angle as a number, so the joint's target is (angle) / g,
  1/20 to 1/120 of the range.
  """
  model = mujoco.MjModel.from_xml_string(xml)
  data = mujoco.MjData(model)
  mujoco.mj_forward(model, data)
  w = 2 * np.pi * fn
  for i in range(model.nu):
    jnt = model.actuator_trnid[i, 0]
    dof = model.jnt_dofadr[jnt]
    gear = model.actuator_gear[i, 0]
    mjj = data.qM[model.dof_Madr[dof]]
    kp = mjj * w**2 / gear**2
    kv = 2 * zeta * mjj * w / gear**2
    model.actuator_gaintype[i] = mujoco.mjtGain.mjGAIN_FIXED
    model.actuator_biastype[i] = mujoco.mjtBias.mjBIAS_AFFINE
    model.actuator_dyntype[i] = mujoco.mjtDyn.mjDYN_NONE
    model.actuator_gainprm[i, :] = 0
    model.actuator_biasprm[i, :] = 0
    model.actuator_gainprm[i, 0] = kp
    model.actuator_biasprm[i, 1] = -kp
    model.actuator_biasprm[i, 2] = -kv
    model.actuator_ctrllimited[i] = 1
    scale = gear if targets == 'joint' else 1.0
    model.actuator_ctrlrange[i] = np.sort(scale * model.jnt_range[jnt])
    model.actuator_forcelimited[i] = 0
  model.opt.timestep = h
  model.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICIT
  model.opt.enableflags = enable
  model.opt.disableflags = disable
  return model


def policy(model, seed):
  """The targets (ctrl) of every 40 ms period, drawn uniformly inside ctrlrange; fixed seed."""
  rng = np.random.default_rng(seed)
  n = int(np.ceil(DURATION / PERIOD)) + 1
  lo, hi = model.actuator_ctrlrange[:, 0], model.actuator_ctrlrange[:, 1]
  return lo + (hi - lo) * rng.random((n, model.nu))


def hinge_dofs(model):
  return np.array([model.jnt_dofadr[j] for j in range(model.njnt)
                   if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE])


#-------------------------------------- simulation ------------------------------------------------


def bad(data):
  return any(data.warning[w].number for w in BAD)


def diverged(model, data):
  if bad(data):
    return 'warning ' + ','.join(str(w).split('.')[-1] for w in BAD if data.warning[w].number)
  if not np.all(np.isfinite(data.qvel)):
    return 'non-finite qvel'
  if np.max(np.abs(data.qvel)) > VMAX:
    return f'|qvel| > {VMAX:g}'
  return None


def substeps(model, data, n):
  """n steps of h/n from data (the model's own h restored); returns data."""
  h = model.opt.timestep
  model.opt.timestep = h / n
  try:
    for _ in range(n):
      mujoco.mj_step(model, data)
  finally:
    model.opt.timestep = h
  return data


def one_step(model, data, remedy):
  """One control step of length h: mj_step, or the remedy's substeps (the flag's own h changed).

  Returns the mjData after the step (a new object when the cap remedy keeps its trial step).
  """
  h = model.opt.timestep
  if remedy is None:
    mujoco.mj_step(model, data)
    return data
  kind, arg = remedy
  if kind == 'substep':
    return substeps(model, data, arg)
  # kind == 'cap': try the step; if it moves a hinge by more than arg rad, redo it in n substeps.
  trial = copy.copy(data)
  mujoco.mj_step(model, trial)
  hinge = hinge_dofs(model)
  move = h * np.max(np.abs(trial.qvel[hinge])) if np.all(np.isfinite(trial.qvel)) else np.inf
  if move <= arg:
    return trial
  n = int(min(64, np.ceil(move / arg))) if np.isfinite(move) else 64
  return substeps(model, data, n)


def root_speed(model, data):
  """The free root's linear speed [m/s]; 0 if the root is welded."""
  if model.jnt_type[0] != mujoco.mjtJoint.mjJNT_FREE:
    return 0.0
  return float(np.linalg.norm(data.qvel[:3]))


def simulate(model, seed, keep=12, remedy=None, launch=None):
  """Runs the random-target policy for 2 s.

  launch: if given, a root speed above it [m/s] ends the run too (why = 'launch'), for the
  analysis of the step that launches the body.
  Returns t_div (None if bounded), the reason, the peak hinge speed before divergence, the peak
  root speed, the
  per-step history of max |qvel| over hinge dofs, and copies of mjData before each of the last
  `keep` steps (the ring buffer the residual analysis re-steps from).
  """
  data = mujoco.MjData(model)
  targets = policy(model, seed)
  h = model.opt.timestep
  n = int(round(DURATION / h))
  hinge = hinge_dofs(model)
  ring = []
  hist = []
  peak = 0.0
  rpeak = 0.0
  for k in range(n):
    data.ctrl[:] = targets[int(np.floor(k * h / PERIOD + 1e-9))]
    if keep:
      ring.append(copy.copy(data))
      ring = ring[-keep:]
    data = one_step(model, data, remedy)
    why = diverged(model, data)
    if not why and launch is not None and root_speed(model, data) > launch:
      why = f'launch: root speed > {launch:g} m/s'
    if why:
      return dict(t_div=(k + 1) * h, why=why, peak=peak, rpeak=rpeak, hist=np.array(hist),
                  ring=ring, step=k)
    vh = float(np.max(np.abs(data.qvel[hinge])))
    hist.append(vh)
    peak = max(peak, vh)
    rpeak = max(rpeak, root_speed(model, data))
  return dict(t_div=None, why=None, peak=peak, rpeak=rpeak, hist=np.array(hist), ring=ring,
              step=n)


def describe(res):
  """Bounded or the time of divergence; the peak hinge speed [rad/s] / root speed [m/s] before."""
  peaks = f"{res['peak']:.3g} / {res['rpeak']:.3g}"
  if res['t_div'] is None:
    return f'bounded ({peaks})'
  return f"**{res['t_div'] * 1e3:.0f} ms** ({res['why']}; {peaks})"


#-------------------------------------- residual split --------------------------------------------


def full_m(model, data):
  mat = np.zeros((model.nv, model.nv))
  mujoco.mj_fullM(model, mat, data.qM)
  return mat


def bias_at(model, data, qpos, qvel):
  d = copy.copy(data)
  d.qpos[:] = qpos
  d.qvel[:] = qvel
  mujoco.mj_forward(model, d)
  return d.qfrc_bias.copy()


def bias_vel_jacobian(model, data, eps=1e-6):
  """d qfrc_bias / d qvel at data's state, central differences (exact for a quadratic)."""
  jac = np.zeros((model.nv, model.nv))
  for j in range(model.nv):
    v = data.qvel.copy()
    v[j] += eps
    bp = bias_at(model, data, data.qpos, v)
    v[j] -= 2 * eps
    bm = bias_at(model, data, data.qpos, v)
    jac[:, j] = (bp - bm) / (2 * eps)
  return jac


def residual_split(model, before):
  """The backward-Euler residual at the end state of the step from `before`, split by term.

  Step: M(q) a = f_step + c, a = (v+ - v)/h, f_step = qfrc_smooth_step, c = qfrc_constraint at the
  start. Residual at the end: R = M(q+) a - f(q+, v+) - c(q+, v+), f = qfrc_smooth. Then
  R = (M(q+) - M(q)) a + [bias+ - bias - Dbias (v+ - v)] - [act+ - act_step]
      - [passive+ - passive - lin_passive] - [c+ - c],
  Dbias = d bias / d v at the start (the velocity derivative the step's qDeriv holds; the step has
  no position derivative of the bias), act_step = qfrc_actuator_step, lin_passive what remains of
  f_step - f after the actuator and bias parts (the joint springs' K and damping).
  The bias part is further split into its position part bias(q+, v+) - bias(q, v+) and its
  second-order velocity part bias(q, v+) - bias(q, v) - Dbias (v+ - v).
  """
  h = model.opt.timestep
  d0 = copy.copy(before)
  mujoco.mj_forward(model, d0)  # the start state's forces, as mj_step computes them
  dbias = bias_vel_jacobian(model, d0)
  d1 = copy.copy(before)
  mujoco.mj_step(model, d1)
  q, v = d0.qpos.copy(), d0.qvel.copy()
  v1 = d1.qvel.copy()
  q1 = q.copy()
  mujoco.mj_integratePos(model, q1, v1, h)
  assert np.allclose(q1, d1.qpos, atol=1e-9 * max(1.0, np.max(np.abs(q1)))), 'q+ mismatch'
  a = (v1 - v) / h
  m0 = full_m(model, d0)
  # The step's own identity: M(q) a = qfrc_smooth_step + qfrc_constraint (start).
  ident = m0 @ a - d1.qfrc_smooth_step - d0.qfrc_constraint
  e = copy.copy(d1)
  mujoco.mj_forward(model, e)  # forces and M at (q+, v+)
  m1 = full_m(model, e)
  lin_total = d1.qfrc_smooth_step - d0.qfrc_smooth
  lin_act = d1.qfrc_actuator_step - d0.qfrc_actuator
  lin_bias = dbias @ (v1 - v)  # the linearised change of the bias force (enters with minus)
  lin_passive = lin_total - lin_act + lin_bias
  parts = {
      '(a) mass matrix': (m1 - m0) @ a,
      '(b) bias': (e.qfrc_bias - d0.qfrc_bias) - lin_bias,
      '(c) actuator': -((e.qfrc_actuator - d0.qfrc_actuator) - lin_act),
      '(c2) passive': -((e.qfrc_passive - d0.qfrc_passive) - lin_passive),
      '(d) constraint': -(e.qfrc_constraint - d0.qfrc_constraint),
  }
  bias_qv1 = bias_at(model, d0, q, v1)
  parts_b = {
      '(b1) bias, position part': e.qfrc_bias - bias_qv1,
      '(b2) bias, 2nd-order velocity part': bias_qv1 - d0.qfrc_bias - lin_bias,
  }
  resid = m1 @ a - e.qfrc_smooth - e.qfrc_constraint
  scale = np.linalg.norm(m0 @ a)
  closure = resid - sum(parts.values()) + ident
  return dict(scale=scale, resid=np.linalg.norm(resid) / scale,
              cons=np.linalg.norm(d0.qfrc_constraint) / scale,
              act=np.linalg.norm(d1.qfrc_actuator_step) / scale,
              root=(root_speed(model, d0), root_speed(model, d1)),
              parts={k: np.linalg.norm(p) / scale for k, p in {**parts, **parts_b}.items()},
              ident=np.linalg.norm(ident) / scale, closure=np.linalg.norm(closure) / scale,
              t=d0.time, move=h * np.max(np.abs(v1[hinge_dofs(model)])),
              vmax=np.max(np.abs(v1[hinge_dofs(model)])))


#-------------------------------------- step map radius -------------------------------------------


def step_map_radius(model, before, eps=1e-6):
  """The spectral radius of the one-step map's Jacobian at `before` (2 nv tangent coordinates)."""
  nv = model.nv
  base = copy.copy(before)
  mujoco.mj_step(model, base)
  jac = np.zeros((2 * nv, 2 * nv))
  for j in range(2 * nv):
    d = copy.copy(before)
    dx = np.zeros(nv)
    if j < nv:
      dx[j] = eps
      mujoco.mj_integratePos(model, d.qpos, dx, 1.0)
    else:
      d.qvel[j - nv] += eps
    mujoco.mj_step(model, d)
    dq = np.zeros(nv)
    mujoco.mj_differentiatePos(model, dq, 1.0, base.qpos, d.qpos)
    jac[:nv, j] = dq / eps
    jac[nv:, j] = (d.qvel - base.qvel) / eps
  return float(np.max(np.abs(np.linalg.eigvals(jac))))


#-------------------------------------- parts of the study ----------------------------------------


def part_table(path, seeds, targets):
  xml = humanoid_xml(path, False)
  print('## 1. Settings x schemes (time of divergence per seed)\n')
  print(f'Random target inside each joint range every {PERIOD*1e3:g} ms for {DURATION:g} s, '
        f'seeds {list(seeds)}. Diverged: a bad-qpos/qvel/qacc warning, non-finite qvel or '
        f'|qvel| > {VMAX:g}; the time is that of the end of the step that diverged. In brackets: '
        'the largest |qvel| of a hinge dof [rad/s] / the largest linear speed of the free root '
        '[m/s] before it.\n')
  print('| setting | f_n, zeta, h | scheme | ' + ' | '.join(f'seed {s}' for s in seeds) + ' |')
  print('|---|---|---|' + '---|' * len(seeds))
  for name, (fn, zeta, h) in SETTINGS.items():
    rows = [(scheme, enable, h) for scheme, enable in SCHEMES.items()]
    rows.append(('stock, h/10', 0, h / 10))
    for scheme, enable, hh in rows:
      model = servo_model(xml, fn, zeta, hh, enable, targets=targets)
      cells = [describe(simulate(model, s, keep=0)) for s in seeds]
      print(f'| {name} | {fn:g} Hz, {zeta:g}, {hh*1e3:g} ms | {scheme} | ' + ' | '.join(cells) + ' |')
  print()


def part_factors(path, seeds, targets, settings=FAILING, scheme='flag'):
  print(f'## 2-4. Factors, scheme {scheme!r}, failing settings\n')
  print('| setting | factor | ' + ' | '.join(f'seed {s}' for s in seeds) + ' |')
  print('|---|---|' + '---|' * len(seeds))
  for name in settings:
    fn, zeta, h = SETTINGS[name]
    for label, (welded, disable) in FACTORS.items():
      model = servo_model(humanoid_xml(path, welded), fn, zeta, h, SCHEMES[scheme], disable,
                          targets=targets)
      cells = [describe(simulate(model, s, keep=0)) for s in seeds]
      print(f'| {name} | {label} | ' + ' | '.join(cells) + ' |')
  print()


def part_residual(path, seeds, targets, settings=FAILING, last=10, welded=False, disable=0,
                  launch=None):
  print('## 5-6. Residual split, per-step motion and step-map radius before divergence\n')
  if launch is not None:
    print(f'The run ends, for this analysis, at the first step whose root speed exceeds {launch:g} '
          'm/s (the launch), if that comes before a divergence.\n')
  print('Norms relative to ||M(q)(v+ - v)/h||. resid: the backward-Euler residual at the end '
        'state; ident: the step\'s own identity M(q)a - qfrc_smooth_step - qfrc_constraint (should '
        'be ~0); closure: resid minus the sum of the parts (should be ~0). move: h max|v+| over '
        'hinge dofs [rad per step]; growth: max|v+|/max|v| of the step; rho: spectral radius of '
        'the one-step map\'s Jacobian at the start of the step (finite differences). |Ma|: '
        '||M(q)(v+ - v)/h|| [N m, N]; cons, act: ||qfrc_constraint (start)|| and '
        '||qfrc_actuator_step|| relative to it; root: the root speed before -> after [m/s].\n')
  xml = humanoid_xml(path, welded)
  for name in settings:
    fn, zeta, h = SETTINGS[name]
    model = servo_model(xml, fn, zeta, h, BIT, disable, targets=targets)
    hinge = hinge_dofs(model)
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, model.dof_jntid[j])
             for j in range(model.nv)]
    for seed in seeds:
      res = simulate(model, seed, keep=last + 1, launch=launch)
      if res['t_div'] is None:
        print(f'{name}, seed {seed}: bounded\n')
        continue
      print(f"### {name} ({fn:g} Hz, zeta {zeta:g}, h {h*1e3:g} ms), seed {seed}: diverged at "
            f"{res['t_div']*1e3:.0f} ms ({res['why']})\n")
      rows = []
      # The ring ends with the state before the step that diverged (or launched): analyse it too
      # unless MuJoCo reset the state on that step.
      ring = res['ring'] if not res['why'].startswith('warning') else res['ring'][:-1]
      for before in ring:
        r = residual_split(model, before)
        vb = np.max(np.abs(before.qvel[hinge]))
        big = hinge[np.argmax(np.abs(before.qvel[hinge]))]
        rows.append((r, vb, names[big], step_map_radius(model, before)))
      keys = list(rows[0][0]['parts'])
      print('| t [ms] | max abs v [rad/s] (joint) | move h max abs v+ | growth | rho | root | |Ma| '
            '| cons | act | resid | ' + ' | '.join(keys) + ' | ident | closure |')
      print('|---|---|---|---|---|---|---|---|---|---|' + '---|' * len(keys) + '---|---|')
      for r, vb, jname, rho in rows:
        print(f"| {r['t']*1e3:.0f} | {vb:.3g} ({jname}) | {r['move']:.3g} | {r['vmax']/vb:.3g} | "
              f"{rho:.3g} | {r['root'][0]:.3g} -> {r['root'][1]:.3g} | {r['scale']:.3g} | "
              f"{r['cons']:.3g} | {r['act']:.3g} | {r['resid']:.3g} | " +
              ' | '.join(f"{r['parts'][k]:.3g}" for k in keys) +
              f" | {r['ident']:.1e} | {r['closure']:.1e} |")
      print()
  # Typical bounded steps: setting C, the flag, every 20th step of its first 200 ms (before any
  # divergence or launch on every seed and both target readings measured).
  fn, zeta, h = SETTINGS['C']
  model = servo_model(xml, fn, zeta, h, BIT, disable, targets=targets)
  data = mujoco.MjData(model)
  ctrl = policy(model, seeds[0])
  rows = []
  for k in range(int(round(0.2 / h))):
    data.ctrl[:] = ctrl[int(np.floor(k * h / PERIOD + 1e-9))]
    if k % 20 == 19:
      rows.append((residual_split(model, data), step_map_radius(model, data)))
    mujoco.mj_step(model, data)
    assert not diverged(model, data), 'the reference run diverged'
  print(f'### Bounded reference: C ({fn:g} Hz, zeta {zeta:g}, h {h*1e3:g} ms), flag, seed '
        f'{seeds[0]}, every 20th step of the first 200 ms\n')
  keys = list(rows[0][0]['parts'])
  print('| t [ms] | move | rho | root | |Ma| | cons | act | resid | ' + ' | '.join(keys) + ' |')
  print('|---|---|---|---|---|---|---|---|' + '---|' * len(keys))
  for r, rho in rows:
    print(f"| {r['t']*1e3:.0f} | {r['move']:.3g} | {rho:.3g} | {r['root'][1]:.3g} | "
          f"{r['scale']:.3g} | {r['cons']:.3g} | {r['act']:.3g} | {r['resid']:.3g} | " +
          ' | '.join(f"{r['parts'][k]:.3g}" for k in keys) + ' |')
  print()


def part_remedy(path, seeds, targets, settings=FAILING):
  print('## 7. Remedy probe (outside the engine)\n')
  print('substep n: n mj_steps of h/n per control step, the flag on. cap x: the step is redone in '
        'ceil(h max|v+|/x) substeps (at most 64) when its hinge motion h max|v+| exceeds x rad.\n')
  xml = humanoid_xml(path, False)
  remedies = [('substep', 2), ('substep', 4), ('cap', 0.5), ('cap', 0.25)]
  print('| setting | remedy | ' + ' | '.join(f'seed {s}' for s in seeds) + ' |')
  print('|---|---|' + '---|' * len(seeds))
  for name in settings:
    fn, zeta, h = SETTINGS[name]
    model = servo_model(xml, fn, zeta, h, BIT, targets=targets)
    for rem in remedies:
      cells = [describe(simulate(model, s, keep=0, remedy=rem)) for s in seeds]
      print(f'| {name} | {rem[0]} {rem[1]} | ' + ' | '.join(cells) + ' |')
  print()


def part_sweep(path, seeds, targets):
  print('## 8. Sweep: f_n 10-1000 Hz, zeta 0-1, h 2/5/10 ms\n')
  print('Each cell: bounded (peak hinge speed / root speed) or the time of divergence, first seed '
        'of --seeds; the reference is stock at h/10.\n')
  xml = humanoid_xml(path, False)
  print('| f_n | zeta | h | stock, h/10 | stock | flag | flag+posweight |')
  print('|---|---|---|---|---|---|---|')
  for fn in (10, 30, 100, 300, 1000):
    for zeta in (0.0, 0.3, 0.7, 1.0):
      for h in (0.002, 0.005, 0.010):
        cells = [describe(simulate(servo_model(xml, fn, zeta, h / 10, 0, targets=targets),
                                   seeds[0], keep=0))]
        for bits in SCHEMES.values():
          cells.append(describe(simulate(servo_model(xml, fn, zeta, h, bits, targets=targets),
                                         seeds[0], keep=0)))
        print(f'| {fn} Hz | {zeta:g} | {h * 1e3:g} ms | ' + ' | '.join(cells) + ' |')
  print()


def main():
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument('--model', required=True, help="MuJoCo's model/humanoid/humanoid.xml")
  parser.add_argument('--part', default='all',
                      choices=['table', 'factors', 'residual', 'remedy', 'sweep', 'all'])
  parser.add_argument('--seeds', type=int, nargs='+', default=list(SEEDS))
  parser.add_argument('--targets', default='joint', choices=['joint', 'literal'],
                      help="joint: ctrl = gear * angle (the joint's target spans its range); "
                      'literal: ctrl = angle (the target is angle / gear)')
  parser.add_argument('--settings', nargs='+', default=list(FAILING), choices=list(SETTINGS),
                      help='the settings of the factor, residual and remedy parts')
  parser.add_argument('--launch', type=float, default=None,
                      help='residual part: end the run at a root speed above this [m/s]')
  parser.add_argument('--scheme', default='flag', choices=list(SCHEMES),
                      help='the scheme of the factor study')
  args = parser.parse_args()
  print(f'MuJoCo {mujoco.mj_versionString()}, model {args.model}, targets {args.targets!r}\n')
  if args.part in ('table', 'all'):
    part_table(args.model, args.seeds, args.targets)
  if args.part in ('factors', 'all'):
    part_factors(args.model, args.seeds, args.targets, args.settings, scheme=args.scheme)
  if args.part in ('residual', 'all'):
    part_residual(args.model, args.seeds, args.targets, args.settings, launch=args.launch)
  if args.part in ('remedy', 'all'):
    part_remedy(args.model, args.seeds, args.targets, args.settings)
  if args.part == 'sweep':
    part_sweep(args.model, args.seeds, args.targets)


if __name__ == '__main__':
  main()
