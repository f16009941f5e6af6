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
"""The weights of mjENBL_POSWEIGHT: how the engine's table is made, and what the mode delivers.

Three modes:
  --table            prints the engine's theta table (src/engine/engine_derivative_pos.c) as
                     generated here;
  --check SRC        exits 1 if the table in SRC differs from a regeneration (more than rounding);
  --doc DOC --figures DIR
                     steps the engine (MuJoCo's Python bindings on the patched library) and
                     writes DOC and its figures: RMS error against h w_n per zeta for stock,
                     backward Euler and the mode, and the delivered w_n and zeta.

The table is made on the dimensionless one-dof scheme (I = w_n = 1, step x = h w_n): the weighted
scheme is stock implicit with damping kv + theta h kp, so its unit step response depends on x,
zeta and theta only.
"""

import argparse
import re
import sys

import numpy as np
from scipy.optimize import minimize_scalar

from implicitpos_onedof import engine_reset
from implicitpos_onedof import joint_inertia
from implicitpos_onedof import measured_map
from implicitpos_onedof import poles
from implicitpos_onedof import scheme_step
from implicitpos_onedof import servo_gains
from implicitpos_onedof import theta_floor

# The table's grid: u = log10(h w_n) from -1.3 to 2.5 by 0.1, and these zeta.
U = np.round(np.arange(-1.3, 2.5001, 0.1), 10)
ZETA = np.array([0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3])
THETA_MIN = 1e-3     # keeps the spectral radius below 1 for an undamped servo
MARGIN = 0.5         # below theta = 1/2: (1 - 2 theta) x^2 <= MARGIN (4 + 4 zeta x)
ACCEPT = 1.05        # the acceptance bound against min(stock where stable, backward Euler)


def exact_unit_step(zeta, t):
  """Unit step response from rest of q'' + 2 zeta q' + q = 1 (w_n = 1), in closed form.

  The same response as stability.py's exact_step_expm (matrix exponential, any kp, kv, I),
  kept apart: the table is made from thousands of these, the matrix exponential is too slow.
  """
  if zeta < 1:
    wd = np.sqrt(1 - zeta * zeta)
    return 1 - np.exp(-zeta * t) * (np.cos(wd * t) + zeta / wd * np.sin(wd * t))
  if zeta == 1:
    return 1 - np.exp(-t) * (1 + t)
  s = np.sqrt(zeta * zeta - 1)
  r1, r2 = -zeta + s, -zeta - s
  return 1 + (r2 * np.exp(r1 * t) - r1 * np.exp(r2 * t)) / (r1 - r2)


def steps(x):
  """The acceptance measure's number of steps: max(ceil(20 / (h w_n)), 50)."""
  return max(int(np.ceil(20 / x)), 50)


def scheme_rms(x, zeta, theta):
  """RMS error of the weighted scheme's unit step (theta = 0: stock, 1: backward Euler)."""
  n = steps(x)
  q = v = 0.0
  out = np.empty(n)
  for k in range(n):
    q, v = scheme_step(q, v, 1.0, 1.0, 2 * zeta, 1.0, x, theta)
    if abs(q) > 1e8:
      return np.inf
    out[k] = q
  return float(np.sqrt(np.mean((out - exact_unit_step(zeta, x * np.arange(1, n + 1)))**2)))


def best_theta(x, zeta):
  """The theta of least RMS error in [theta_floor, 1]: a grid search, then a bounded refinement."""
  lo = max(THETA_MIN, theta_floor(x, zeta, MARGIN))
  grid = np.linspace(lo, 1, 81)
  err = [scheme_rms(x, zeta, t) for t in grid]
  i = int(np.argmin(err))
  a, b = grid[max(i - 1, 0)], grid[min(i + 1, 80)]
  if b > a:
    r = minimize_scalar(lambda t: scheme_rms(x, zeta, t), bounds=(a, b), method='bounded',
                        options={'xatol': 1e-4})
    if r.fun < err[i]:
      return float(r.x)
  return float(grid[i])


def interpolate(table, x, zeta):
  """The engine's lookup (posWeight): bilinear in (log10 x, zeta), clamped to the table."""
  u = np.clip((np.log10(x) - U[0]) / 0.1, 0, len(U) - 1) if x > 0 else 0.0
  i = min(int(u), len(U) - 2)
  fu = u - i
  z = min(max(zeta, 0.0), ZETA[-1])
  j = 0
  while j < len(ZETA) - 2 and z >= ZETA[j + 1]:
    j += 1
  fz = (z - ZETA[j]) / (ZETA[j + 1] - ZETA[j])
  r0, r1 = table[j], table[j + 1]
  return ((1 - fz) * ((1 - fu) * r0[i] + fu * r0[i + 1]) +
          fz * ((1 - fu) * r1[i] + fu * r1[i + 1]))


def engine_weight(table, x, zeta):
  """The engine's weight for one dof: the table's, raised to its stability floor (posWeightFloor,
  at the current inertia; for one dof the current inertia is the table's)."""
  return max(interpolate(table, x, zeta), theta_floor(x, zeta, MARGIN))


def ratio_to_best(table, x, zeta):
  best = scheme_rms(x, zeta, 1)
  if theta_floor(x, zeta) < 0:  # stock stable
    best = min(best, scheme_rms(x, zeta, 0))
  return scheme_rms(x, zeta, engine_weight(table, x, zeta)) / best


def make_table():
  """Least-error theta per node, non-decreasing in h w_n, raised to 1 where a dense sweep between
  the nodes (h w_n >= 2, where the error is not smooth in theta) finds the bound missed."""
  table = np.array([[best_theta(10**u, z) for u in U] for z in ZETA])
  table = np.maximum.accumulate(table, axis=1)
  dense_x = 10**np.arange(U[0], U[-1], 0.0125)
  dense_z = np.arange(0, ZETA[-1] + 1e-9, 0.05)
  for _ in range(10):
    missed = [(x, z) for z in dense_z for x in dense_x
              if x >= 2 and ratio_to_best(table, x, z) > ACCEPT - 0.01]
    if not missed:
      break
    for x, z in missed:
      i = min(int((np.log10(x) - U[0]) / 0.1), len(U) - 2)
      j = min(int(np.searchsorted(ZETA, z, side='right') - 1), len(ZETA) - 2)
      table[j:j + 2, i:i + 2] = 1.0
    table = np.maximum.accumulate(table, axis=1)
  return np.round(table, 4)


def c_rows(table):
  """The table as the engine's C initialiser rows."""
  lines = []
  for j, z in enumerate(ZETA):
    vals = [f'{v:.4f}' for v in table[j]]
    cur, out = '    {', []
    for k, v in enumerate(vals):
      piece = v + (', ' if k < len(vals) - 1 else '')
      if len(cur) + len(piece.rstrip()) > 99:
        out.append(cur.rstrip())
        cur = '     ' + piece
      else:
        cur += piece
    out.append(cur.rstrip() + f'}},  // zeta = {z:g}')
    lines += out
  return '\n'.join(lines)


def read_c_table(path):
  src = open(path).read()
  body = src[src.index('posw_theta[mjPOSW_NZETA][mjPOSW_NU] = {'):]
  body = body[:body.index('};')]
  rows = re.findall(r'\{([^{}]*)\}', body)
  return np.array([[float(v) for v in r.split(',') if v.strip()] for r in rows])


#------------------------------------------ the engine -------------------------------------------

def engine_study(doc, figures, command):
  """Steps the patched engine: RMS error and delivered w_n, zeta of stock, backward Euler, mode."""
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use('Agg')
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  import mujoco  # pylint: disable=g-import-not-at-top
  from implicitpos_models import one_hinge_xml, INERTIA  # pylint: disable=g-import-not-at-top

  pos = int(mujoco.mjtEnableBit.mjENBL_IMPLICITPOS)
  weight = int(mujoco.mjtEnableBit.mjENBL_POSWEIGHT)
  schemes = {'stock implicit': 0, 'backward Euler (implicitpos)': pos,
             'weighted (implicitpos + posweight)': pos | weight}
  h = 0.005
  model = mujoco.MjModel.from_xml_string(one_hinge_xml(1.0, 0.0, h=h))
  data = mujoco.MjData(model)
  inertia = joint_inertia(model)

  def set_gains(x, zeta):
    kp, kv = servo_gains(inertia, h, x, zeta)
    model.actuator_gainprm[0, 0] = kp
    model.actuator_biasprm[0, 1] = -kp
    model.actuator_biasprm[0, 2] = -kv
    return kp, kv

  def rms(x, zeta, flags):
    set_gains(x, zeta)
    model.opt.enableflags = flags
    mujoco.mj_resetData(model, data)
    data.ctrl[0] = 1
    n = steps(x)
    q = np.empty(n)
    for k in range(n):
      mujoco.mj_step(model, data)
      q[k] = data.qpos[0]
    if engine_reset(data) or not np.all(np.isfinite(q)) or np.max(np.abs(q)) > 1e6:
      return np.nan  # diverged (MuJoCo's reset path)
    return float(np.sqrt(np.mean((q - exact_unit_step(zeta, x * np.arange(1, n + 1)))**2)))

  def delivered(x, zeta, flags):
    """w_n and zeta of the engine's one-step map, relative to the servo's own."""
    set_gains(x, zeta)
    model.opt.enableflags = flags
    z = poles(measured_map(model, amplitude=1e-6))
    s = np.log(z.astype(complex)) / h
    s = s[np.argmax(s.imag)] if np.any(s.imag > 0) else s[np.argmax(s.real)]
    wn = abs(s)
    return wn / (x / h), -s.real / wn if wn > 0 else np.nan

  xs = 10**np.arange(-1, 2.0001, 0.05)
  zetas = [0, 0.1, 0.5, 1]
  fig, axes = plt.subplots(1, len(zetas), figsize=(16, 4), sharey=True)
  for ax, zeta in zip(axes, zetas):
    for name, flags in schemes.items():
      ax.loglog(xs, [rms(x, zeta, flags) for x in xs], label=name)
    ax.set_title(f'zeta = {zeta}')
    ax.set_xlabel('h w_n')
    ax.grid(True, which='both', alpha=0.3)
  axes[0].set_ylabel('RMS error of the unit step')
  axes[0].legend(fontsize=8)
  fig.suptitle(f'One hinge (I = {INERTIA}), h = {h*1e3:g} ms: RMS of q - q_exact over '
               'max(ceil(20/(h w_n)), 50) steps')
  fig.tight_layout()
  fig.savefig(f'{figures}/posweight_rms.png', dpi=80)
  plt.close(fig)

  xs = 10**np.arange(-1, 0.5, 0.025)
  fig, axes = plt.subplots(1, 2, figsize=(12, 4))
  for zeta, style in ((0.1, '-'), (0.5, '--')):
    for name, flags in schemes.items():
      d = np.array([delivered(x, zeta, flags) for x in xs])
      axes[0].semilogx(xs, d[:, 0], style, label=f'{name}, zeta {zeta}')
      axes[1].semilogx(xs, d[:, 1], style, label=f'{name}, zeta {zeta}')
  axes[0].set_ylabel('delivered w_n / w_n')
  axes[1].set_ylabel('delivered zeta')
  for ax in axes:
    ax.set_xlabel('h w_n')
    ax.grid(True, which='both', alpha=0.3)
  axes[0].legend(fontsize=7)
  fig.tight_layout()
  fig.savefig(f'{figures}/posweight_delivered.png', dpi=80)
  plt.close(fig)

  # the acceptance numbers, from the engine
  worst, band = 0.0, []
  for zeta in (0, 0.05, 0.1, 0.3, 0.5, 0.7, 1, 2):
    for x in (0.1, 0.2, 0.5, 1, 1.5, 2, 3, 5, 10, 30, 100):
      st, be, mo = (rms(x, zeta, f) for f in schemes.values())
      best = min(be, st) if np.isfinite(st) else be
      worst = max(worst, mo / best)
      if 0.5 <= x <= 3:
        band.append(mo / be)
  rows = []
  for zeta in (0.1, 0.5, 1):
    for x in (0.5, 1, 2, 3):
      st, be, mo = (rms(x, zeta, f) for f in schemes.values())
      stock = f'{st:.4f}' if np.isfinite(st) else 'unstable'
      rows.append(f'| {x:g} | {zeta:g} | {stock} | {be:.4f} | {mo:.4f} | {mo/be:.2f} |')
  with open(doc, 'w') as f:
    f.write(DOC.format(command=command, worst=worst, median=float(np.median(band)),
                       rows='\n'.join(rows)))


DOC = """# Accuracy-weighted implicit position (`posweight`)

Generated by `{command}` from runs of the patched engine; do not edit by hand.

`<flag implicitpos="enable" posweight="enable"/>` (`mjENBL_IMPLICITPOS | mjENBL_POSWEIGHT`)
weights each term of the position stiffness `K` by `theta` in (0, 1], in the matrix and in the
shift alike; a term is a fixed-tendon servo, or everything on one dof alone (the servos on its
joint and its spring, with the joint's damping). For one dof this is stock `implicit` with damping `kv + theta h kp`: `theta = 0` is
stock (accurate below its cap, unstable above it), `theta = 1` is backward Euler (stable for
every gain, numerically damped). `theta` is read from a table over `log10(h w_n)` and `zeta`,
each entry the least-error weight of the unit step response, kept inside the stable region
with a factor 2 of margin on the inertia, non-decreasing in `h w_n`, and 1 where aliasing makes
the error rough in `theta` (`h w_n` above about 4). `w_n` and `zeta` use the inertia the term
sees with every other dof free, from the model's inverse weights at `qpos0` (`dof_invweight0`,
`tendon_invweight0`: constants, as for the constraint solver's regularization). Where the inertia
at the current configuration is smaller, the weight is raised to the stability floor
`1/2 - 1/(h w_n)^2 - zeta/(h w_n)` evaluated with it (the same margin), so every term stays
stable; that inertia is computed only when a bound from the armature leaves the floor in
question.

Acceptance measure (one hinge, I = 0.01576, unit step from rest, RMS of `q - q_exact` over the
steps `k = 1 ... max(ceil(20/(h w_n)), 50)`), on the grid `h w_n` in
{{0.1, 0.2, 0.5, 1, 1.5, 2, 3, 5, 10, 30, 100}} x `zeta` in {{0, 0.05, 0.1, 0.3, 0.5, 0.7, 1, 2}},
h = 5 ms, from the engine: the mode is at most **{worst:.4f}** x min(stock where stable,
backward Euler); over `h w_n` in [0.5, 3] its median ratio to backward Euler is **{median:.3f}**.
(`test/implicitpos_posweight_test.cc` asserts both, at h = 5 and 2 ms, and between the points.)

| h w_n | zeta | stock | backward Euler | weighted | weighted / BE |
|---|---|---|---|---|---|
{rows}

![RMS error](figures/posweight_rms.png)

Delivered natural frequency and damping ratio (from the eigenvalues of the engine's one-step
map): stock keeps `zeta` and shifts `w_n` until it goes unstable at `h w_n = 2`; backward Euler
overdamps from small `h w_n` on; the weighted mode stays close to the servo's own values well
past the point where backward Euler has lost them.

![delivered](figures/posweight_delivered.png)
"""


def main():
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument('--table', action='store_true')
  parser.add_argument('--check')
  parser.add_argument('--doc')
  parser.add_argument('--figures')
  parser.add_argument('--command', default='python/study/run.sh')
  args = parser.parse_args()
  if args.table:
    print(c_rows(make_table()))
  elif args.check:
    committed, fresh = read_c_table(args.check), make_table()
    if committed.shape != fresh.shape or np.max(np.abs(committed - fresh)) > 2e-4:
      print('the engine table differs from a regeneration: run posweight.py --table',
            file=sys.stderr)
      sys.exit(1)
    print(f'engine table matches its regeneration ({fresh.size} entries)')
  elif args.doc:
    engine_study(args.doc, args.figures, args.command)
  else:
    parser.print_help()
    sys.exit(2)


if __name__ == '__main__':
  main()
