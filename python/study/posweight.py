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
  --table            prints the engine's theta table (src/engine/engine_posweight.c) as
                     generated here;
  --check SRC        exits 1 if the table in SRC differs from a regeneration (more than rounding);
  --figures DIR      steps the engine (MuJoCo's Python bindings on the patched library) and draws
                     the worst input class's RMS error against h w_n per zeta for stock, backward
                     Euler and the mode (DIR/posweight_rms.png); prints the one-dof acceptance
                     numbers of doc/posweight.md, from the closed form on the dense grid.

The table is made on the dimensionless one-dof scheme (I = w_n = 1, step x = h w_n): the weighted
scheme is stock implicit with damping kv + theta h kp, so its response to each class of input
depends on x, zeta and theta only. The classes (support/accuracy.h has the same for the engine): a
unit step, a free decay from a velocity, sinusoidal targets at W/w_n = 0.02, 0.1, 0.3 and 1
(targets held over each step), and a load step, which for one linear dof is the unit step again.
Each is measured by the RMS of q - q_exact (the exact continuous response to the held targets)
over max(20, 2 pi w_n / W) / w_n, at least 50 steps.

The rule the table encodes, per term of K alone:
  - below stock's own cap (x^2 < 4 + 4 zeta x) theta = THETA_MIN: stock, which is at least as
    accurate as any weight there on every class; coupled terms make this necessary, as any added
    damping slows their slower modes (doc/posweight.md measures it);
  - from the cap on, the weight of least worst-class error within NODE_ACCEPT x backward Euler's
    on every class, ties to the larger weight; the engine's stability gate gives backward Euler
    to a weight below its stability bound, and so does the lookup here.
Between the nodes the table is checked on a dense grid (x 0.05 ... 300, zeta 0 ... 3) against
ACCEPT x the baseline (stock where it is stable, else backward Euler); a cell that fails is
moved half-way to backward Euler, and the check repeated.
"""

import argparse
import re
import sys

import numpy as np
from scipy.linalg import expm

from implicitpos_onedof import engine_reset
from implicitpos_onedof import joint_inertia
from implicitpos_onedof import scheme_step
from implicitpos_onedof import servo_gains
from implicitpos_onedof import stock_cap_x

# The table's grid: s = log10(x / x_cap(zeta)) from 0 to 1 by 0.1 (clamped above), these zeta.
S = np.round(np.arange(0, 1.0001, 0.1), 10)
ZETA = np.array([0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3])
THETA_MIN = 1e-4     # the weight below the cap: an undamped servo still loses energy
GATE = 1e-3          # the engine's relative margin of its stability gate (mjPOSW_GATE)
ACCEPT = 1.05        # the acceptance bound against the baseline, on every class
NODE_ACCEPT = 1.03   # the nodes' bound, with room for the interpolation between them
THETAS = np.unique(np.concatenate([np.geomspace(THETA_MIN, 0.05, 40), np.linspace(0.05, 1, 96)]))

CLASSES = ('step', 'decay', 'track 0.02', 'track 0.1', 'track 0.3', 'track 1')


#-------------------------------------- the one-dof scheme ---------------------------------------

def window_steps(x, cls):
  """Steps of class cls at h w_n = x (array): max(20, 2 pi / ratio) / x, at least 50."""
  t = 20.0
  if cls.startswith('track'):
    t = max(t, 2 * np.pi / float(cls.split()[1]))
  return np.maximum(np.ceil(t / np.asarray(x)).astype(int), 50)


def exact_maps(x, zeta):
  """The exact one-step maps of q'' = r - q - 2 zeta q' with r held: (Phi, Gamma) per element."""
  phi = np.empty(x.shape + (2, 2))
  gamma = np.empty(x.shape + (2,))
  for i, (xi, zi) in enumerate(zip(x, zeta)):
    e = expm(np.array([[0, 1, 0], [-1, -2 * zi, 1], [0, 0, 0]]) * xi)
    phi[i], gamma[i] = e[:2, :2], e[:2, 2]
  return phi, gamma


def rms(x, zeta, theta, cls, maps=None):
  """RMS error of the weighted scheme (theta 0: stock, 1: backward Euler) on class cls, against
  the exact response; elementwise over x, zeta, theta (broadcast); inf where it diverged."""
  x, zeta, theta = (np.ravel(a) for a in np.broadcast_arrays(
      np.asarray(x, float), np.asarray(zeta, float), np.asarray(theta, float)))
  phi, gamma = maps if maps is not None else exact_maps(x, zeta)
  n = window_steps(x, cls)
  ratio = float(cls.split()[1]) if cls.startswith('track') else 0.0
  q, v = np.zeros_like(x), np.zeros_like(x)
  if cls == 'decay':
    v[:] = 1
  rq, rv = q.copy(), v.copy()
  acc = np.zeros_like(x)
  with np.errstate(all='ignore'):
    for k in range(n.max()):
      r = 1.0 if cls == 'step' else np.sin(ratio * k * x) if ratio else 0.0
      q, v = scheme_step(q, v, r, 1.0, 2 * zeta, 1.0, x, theta)
      rq, rv = (phi[:, 0, 0] * rq + phi[:, 0, 1] * rv + gamma[:, 0] * r,
                phi[:, 1, 0] * rq + phi[:, 1, 1] * rv + gamma[:, 1] * r)
      acc += np.where(k < n, (q - rq)**2, 0)
  e = np.sqrt(acc / n)
  e[~np.isfinite(e)] = np.inf
  return e


def stock_stable(x, zeta):
  return x < stock_cap_x(zeta)


def gate(x, zeta, theta):
  """The engine's stability gate for one term: 4 (1 - GATE) > (1 - 2 theta) x^2 - 4 zeta x."""
  return (1 - 2 * theta) * x * x - 4 * zeta * x < 4 * (1 - GATE)


#-------------------------------------- the table ------------------------------------------------

def lookup(table, x, zeta):
  """The engine's weight of one term (thetaTable, then the gate): THETA_MIN below the cap,
  bilinear in (s, zeta) from it on, clamped; 1 where the gate fails."""
  x, zeta = np.broadcast_arrays(np.asarray(x, float), np.minimum(np.asarray(zeta, float), ZETA[-1]))
  cap = stock_cap_x(zeta)
  with np.errstate(divide='ignore'):
    u = np.minimum(np.log10(x / cap) / 0.1, len(S) - 1)
  i = np.clip(u.astype(int), 0, len(S) - 2)
  fu = u - i
  j = np.clip(np.searchsorted(ZETA, zeta, side='right') - 1, 0, len(ZETA) - 2)
  fz = (zeta - ZETA[j]) / (ZETA[j + 1] - ZETA[j])
  theta = ((1 - fz) * ((1 - fu) * table[j, i] + fu * table[j, i + 1]) +
           fz * ((1 - fu) * table[j + 1, i] + fu * table[j + 1, i + 1]))
  theta = np.where(x > cap, theta, THETA_MIN)
  return np.where(gate(x, zeta, theta), theta, 1.0)


def node_weight(s, zeta):
  """The weight at a node from the cap on: least worst-class error within NODE_ACCEPT x backward
  Euler's on every class, ties (0.5 %) to the larger weight."""
  x = 10**s * stock_cap_x(zeta)
  xs, zs = np.full(THETAS.size, x), np.full(THETAS.size, zeta)
  maps = exact_maps(xs, zs)
  err = np.array([rms(xs, zs, THETAS, c, maps) for c in CLASSES])
  be = err[:, -1]
  worst = np.max(err / be[:, None], axis=0)
  ok = np.all(err <= NODE_ACCEPT * be[:, None], axis=0) & gate(x, zeta, THETAS)
  worst = np.where(ok, worst, np.inf)
  return float(THETAS[np.nonzero(worst <= worst.min() + 0.005)[0][-1]])


def dense_ratios(table, xs, zetas):
  """On the grid xs x zetas: the worst class's error ratio of the table's weight to the
  baseline (stock where stable, else backward Euler) and to the better of the two; and stock's."""
  x, zeta = (a.ravel() for a in np.meshgrid(xs, zetas))
  theta = lookup(table, x, zeta)
  maps = exact_maps(x, zeta)
  tile = lambda a: np.concatenate([a, a, a])
  maps3 = (np.concatenate([maps[0]] * 3), np.concatenate([maps[1]] * 3))
  stable = stock_stable(x, zeta)
  to_base, to_best, stock_to_best = (np.zeros_like(x) for _ in range(3))
  for c in CLASSES:
    st, be, mo = np.split(rms(tile(x), tile(zeta), np.concatenate(
        [np.zeros_like(x), np.ones_like(x), theta]), c, maps3), 3)
    best = np.where(stable, np.minimum(st, be), be)
    to_base = np.maximum(to_base, mo / np.where(stable, st, be))
    to_best = np.maximum(to_best, mo / best)
    stock_to_best = np.maximum(stock_to_best, st / best)
  shape = (len(zetas), len(xs))
  return to_base.reshape(shape), to_best.reshape(shape), stock_to_best.reshape(shape)


DENSE_X = 10**np.arange(np.log10(0.05), np.log10(300) + 1e-9, 0.0125)
DENSE_ZETA = np.arange(0, 3.0001, 0.05)


def make_table():
  """The nodes, then the dense check and its repairs; rounded as the engine's source."""
  table = np.array([[node_weight(s, z) for s in S] for z in ZETA])
  for _ in range(10):
    to_base = dense_ratios(table, DENSE_X, DENSE_ZETA)[0]
    bad = np.argwhere(to_base > ACCEPT - 0.01)
    if not len(bad):
      break
    for j, i in bad:
      x, z = DENSE_X[i], DENSE_ZETA[j]
      c = min(int(np.log10(x / stock_cap_x(z)) / 0.1), len(S) - 2)
      r = min(int(np.searchsorted(ZETA, z, side='right') - 1), len(ZETA) - 2)
      if c >= 0:
        table[r:r + 2, c:c + 2] = 0.5 * (table[r:r + 2, c:c + 2] + 1)
  return np.round(table, 4)


def c_rows(table):
  """The table as the engine's C initialiser rows."""
  lines = []
  for j, z in enumerate(ZETA):
    vals = ', '.join(f'{v:.4f}' for v in table[j])
    lines.append(f'    // zeta = {z:g}')
    lines.append(f'    {{{vals}}},')
  return '\n'.join(lines)


def read_c_table(path):
  src = open(path).read()
  body = src[src.index('posw_theta[mjPOSW_NZETA][mjPOSW_NS] = {'):]
  body = body[:body.index('};')]
  rows = re.findall(r'\{([^{}]*)\}', body)
  return np.array([[float(v) for v in r.split(',') if v.strip()] for r in rows])


#------------------------------------------ the engine -------------------------------------------

def engine_study(figures):
  """Steps the patched engine: the worst class's RMS error of stock, backward Euler and the mode."""
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

  def engine_rms(x, zeta, flags, cls):
    kp, kv = servo_gains(inertia, h, x, zeta)
    model.actuator_gainprm[0, 0] = kp
    model.actuator_biasprm[0, 1] = -kp
    model.actuator_biasprm[0, 2] = -kv
    model.opt.enableflags = flags
    mujoco.mj_resetData(model, data)
    wn = x / h
    n = int(window_steps(x, cls))
    ratio = float(cls.split()[1]) if cls.startswith('track') else 0.0
    if cls == 'decay':
      data.qvel[0] = wn
    q = np.empty(n)
    for k in range(n):
      data.ctrl[0] = 1.0 if cls == 'step' else np.sin(ratio * k * x) if ratio else 0.0
      mujoco.mj_step(model, data)
      q[k] = data.qpos[0]
    if engine_reset(data) or not np.all(np.isfinite(q)) or np.max(np.abs(q)) > 1e6:
      return np.inf
    ref = exact_reference(x, zeta, cls, n)
    return float(np.sqrt(np.mean((q - ref)**2)))

  def exact_reference(x, zeta, cls, n):
    phi, gamma = (a[0] for a in exact_maps(np.array([x]), np.array([zeta])))
    ratio = float(cls.split()[1]) if cls.startswith('track') else 0.0
    s = np.array([0.0, 1.0 if cls == 'decay' else 0.0])
    out = np.empty(n)
    for k in range(n):
      r = 1.0 if cls == 'step' else np.sin(ratio * k * x) if ratio else 0.0
      s = phi @ s + gamma * r
      out[k] = s[0]
    return out

  def worst(x, zeta, flags):
    """The worst class's error, each class's error relative to the exact response's RMS."""
    return max(engine_rms(x, zeta, flags, c) for c in CLASSES)

  xs = 10**np.arange(-1.3, 2.5001, 0.1)
  zetas = [0, 0.1, 0.5, 1]
  fig, axes = plt.subplots(1, len(zetas), figsize=(16, 4), sharey=True)
  for ax, zeta in zip(axes, zetas):
    for name, flags in schemes.items():
      ax.loglog(xs, [worst(x, zeta, flags) for x in xs], label=name)
    ax.axvline(stock_cap_x(zeta), color='gray', lw=0.5)
    ax.set_title(f'zeta = {zeta}')
    ax.set_xlabel('h w_n')
    ax.grid(True, which='both', alpha=0.3)
  axes[0].set_ylabel('worst class: RMS of q - q_exact')
  axes[0].legend(fontsize=8)
  fig.suptitle(f'One hinge (I = {INERTIA}), h = {h*1e3:g} ms, unit inputs: the worst of step, '
               'decay and tracking at W/w_n = 0.02, 0.1, 0.3, 1 (grey: stock\'s cap)')
  fig.tight_layout()
  fig.savefig(f'{figures}/posweight_rms.png', dpi=80)
  plt.close(fig)

  # the acceptance numbers of the closed form, on the dense grid
  table = read_c_table(SOURCE)
  to_base, to_best, stock_to_best = dense_ratios(table, DENSE_X, DENSE_ZETA)
  band = (DENSE_X >= 0.5) & (DENSE_X <= 5)
  print(f'one dof, h w_n 0.05 ... 300 x zeta 0 ... 3 (dense grid), closed form:')
  print(f'  worst class over the baseline (stock where stable, else backward Euler): '
        f'{to_base.max():.4f}')
  print(f'  h w_n in [0.5, 5], worst class over the better of stock and backward Euler: '
        f'median {np.median(to_best[:, band]):.3f}, maximum {to_best[:, band].max():.2f} '
        f'(stock alone: median {np.median(stock_to_best[:, band]):.3f})')


SOURCE = 'src/engine/engine_posweight.c'


def main():
  parser = argparse.ArgumentParser(description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument('--table', action='store_true')
  parser.add_argument('--check')
  parser.add_argument('--figures')
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
  elif args.figures:
    engine_study(args.figures)
  else:
    parser.print_help()
    sys.exit(2)


if __name__ == '__main__':
  main()
