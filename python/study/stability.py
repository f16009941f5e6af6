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
"""Stability and accuracy of mjENBL_IMPLICITPOS, measured by stepping the engine.

Writes doc/stability.md and the figures of doc/figures/. Every number in the document is computed
here from runs of the patched engine through MuJoCo's Python bindings; closed forms appear only as
references to compare with (the stock stability cap, pi/(2h), the exact continuous response).
Run through python/study/run.sh.
"""

import argparse
import os

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
import mujoco
import numpy as np
import scipy.linalg

from implicitpos_models import one_hinge_xml
from implicitpos_onedof import bisect_geometric
from implicitpos_onedof import engine_reset
from implicitpos_onedof import joint_inertia
from implicitpos_onedof import measured_map
from implicitpos_onedof import measured_step
from implicitpos_onedof import poles
from implicitpos_onedof import servo_gains
from implicitpos_onedof import spectral_radius
from implicitpos_onedof import stock_cap_kp
from implicitpos_onedof import stock_cap_x

BIT = int(mujoco.mjtEnableBit.mjENBL_IMPLICITPOS)
H = 0.005


def one_hinge(kp, kv, flag, h=H):
  """The one-hinge position servo: rotor inertia via armature, no gravity, no contact."""
  model = mujoco.MjModel.from_xml_string(one_hinge_xml(kp, kv, h=h))
  model.opt.enableflags = BIT if flag else 0
  return model


def hinge_poles(kp, kv, flag):
  """The poles of the engine's one-step map of the one hinge."""
  return poles(measured_map(one_hinge(kp, kv, flag)))


def hinge_radius(kp, kv, flag):
  """The spectral radius of the engine's one-step map of the one hinge."""
  return spectral_radius(measured_map(one_hinge(kp, kv, flag)))


def simulate_step(kp, kv, flag, duration, target=1.0):
  """q(t_k) of a step from rest at 0 to target; nan from the first MuJoCo instability warning."""
  model = one_hinge(kp, kv, flag)
  data = mujoco.MjData(model)
  data.ctrl[0] = target
  n = int(round(duration / model.opt.timestep))
  q = np.full(n + 1, np.nan)
  q[0] = data.qpos[0]
  for k in range(1, n + 1):
    mujoco.mj_step(model, data)
    if engine_reset(data) or not np.isfinite(data.qpos[0]):
      break
    q[k] = data.qpos[0]
  return q


def exact_step_expm(kp, kv, inertia, times, target=1.0):
  """The continuous PD servo's step response (matrix exponential of the augmented system).

  The same response as posweight.py's exact_unit_step (closed form, w_n = 1), kept apart: this
  document states that its reference is scipy.linalg.expm.
  """
  a = np.array([[0, 1, 0], [-kp / inertia, -kv / inertia, kp * target / inertia], [0, 0, 0]])
  return np.array([(scipy.linalg.expm(a * t) @ np.array([0.0, 0.0, 1.0]))[0] for t in times])


def trips_warning(kp, kv, flag):
  """Whether one step from (q, v) = (1, 0), target 0, trips MuJoCo's bad-qacc check."""
  return engine_reset(measured_step(one_hinge(kp, kv, flag), 1.0, 0.0))


def bisect_warning(kv, flag):
  """The smallest kp at which one step from (1, 0) trips MuJoCo's bad-qacc check."""
  return bisect_geometric(lambda kp: trips_warning(kp, kv, flag), 1e6, 1e12)


def bisect_cap(kv):
  """The smallest kp whose stock one-step map has a pole outside the unit circle."""
  return bisect_geometric(lambda kp: hinge_radius(kp, kv, False) > 1, 1.0, 1e7)


#-------------------------------------- 1. poles vs kp --------------------------------------------


def study_poles(fig_dir, out):
  kv = 1.0
  inertia = joint_inertia(one_hinge(1.0, kv, False))
  kps = np.logspace(0, 8, 321)
  rad = {f: np.array([hinge_radius(kp, kv, f) for kp in kps]) for f in (False, True)}
  freq = {f: np.array([np.max(np.abs(np.angle(hinge_poles(kp, kv, f)))) / H for kp in kps])
          for f in (False, True)}
  cap_formula = stock_cap_kp(inertia, kv, H)
  cap_measured = bisect_cap(kv)
  flag_max_radius = rad[True].max()
  flag_freq_max = freq[True].max()
  flag_freq_argmax = kps[np.argmax(freq[True])]
  flag_freq_last = freq[True][-1]
  warn_kp = bisect_warning(kv, True)

  fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
  ax = axes[0]
  ax.loglog(kps, rad[False], label='stock implicit')
  ax.loglog(kps, rad[True], label='implicitpos flag')
  ax.axhline(1, color='k', lw=0.8)
  ax.axvline(cap_formula, color='r', ls='--', lw=0.8,
             label=r'stock cap $h^2k_p = 4I + 2hk_v$')
  ax.set_xlabel('kp [N m/rad]')
  ax.set_ylabel('spectral radius of the one-step map')
  ax.set_title(f'One hinge, I = {inertia:.5f}, kv = {kv:g}, h = {H*1e3:g} ms')
  ax.legend()
  ax.grid(True, which='both', alpha=0.3)
  ax = axes[1]
  ax.loglog(kps, np.sqrt(kps / inertia), 'k:', label=r'continuous $\omega_n=\sqrt{k_p/I}$')
  ax.loglog(kps, freq[False], label='stock implicit')
  ax.loglog(kps, freq[True], label='implicitpos flag')
  ax.axhline(np.pi / (2 * H), color='g', ls='--', lw=0.8, label=r'$\pi/(2h)$')
  ax.axhline(np.pi / H, color='gray', ls='--', lw=0.8, label=r'$\pi/h$')
  ax.axvline(cap_formula, color='r', ls='--', lw=0.8)
  ax.set_xlabel('kp [N m/rad]')
  ax.set_ylabel('delivered frequency |arg(pole)|/h [rad/s]')
  ax.set_title('Delivered frequency')
  ax.legend(fontsize=8)
  ax.grid(True, which='both', alpha=0.3)
  fig.tight_layout()
  fig.savefig(os.path.join(fig_dir, 'poles_vs_kp.png'), dpi=110)
  plt.close(fig)

  out.append('## 1. One hinge: discrete poles vs kp\n')
  out.append(
      f'One hinge servo, rotor inertia via armature 0.01576 (joint-space inertia read from '
      f'`qM`: I = {inertia:.6g}), kv = {kv:g}, h = {H*1e3:g} ms, implicit integrator. For each kp '
      f'(321 values, 1 to 1e8, log-spaced) the 2x2 one-step map (q, v) -> (q+, v+) is recovered by '
      f'two `mj_step` calls from the unit states (1, 0) and (0, 1) with target 0; its eigenvalues '
      f'are the discrete poles.\n')
  out.append('| quantity | value |\n|---|---|')
  out.append(f'| stock cap, closed form (4I + 2h kv)/h^2 | {cap_formula:.6g} |')
  out.append(f'| stock cap, measured (bisection on spectral radius = 1) | {cap_measured:.6g} |')
  out.append(f'| relative difference | {abs(cap_measured / cap_formula - 1):.1e} |')
  out.append(f'| flag: largest spectral radius on the grid | {flag_max_radius:.6f} |')
  out.append(f'| flag: largest delivered frequency on the grid [rad/s] | {flag_freq_max:.6g} '
             f'(at kp = {flag_freq_argmax:.3g}) |')
  out.append(f'| flag: delivered frequency at kp = 1e8 [rad/s] | {flag_freq_last:.6g} |')
  out.append(f'| pi/(2h) [rad/s] | {np.pi / (2 * H):.6g} |')
  out.append(f'| stock: delivered frequency beyond the cap (real negative pole) [rad/s] | '
             f'{freq[False][-1]:.6g} (pi/h = {np.pi / H:.6g}) |')
  out.append(f'| flag: smallest kp at which one step from (1, 0) trips the bad-qacc check '
             f'(bisection) | {warn_kp:.6g} |')
  out.append(f'| mjMAXVAL * I (the check is on the forward acceleration kp/I) | '
             f'{mujoco.mjMAXVAL * inertia:.6g} |\n')
  out.append(
      'The flag keeps every pole inside the unit circle; the delivered frequency rises towards '
      'pi/(2h) and stays just below it, with a spectral radius that falls as kp grows (heavy '
      'numerical damping). The stock poles leave the unit circle at the cap, as a real negative '
      'pole (delivered frequency pi/h). One limit remains with the flag: MuJoCo checks the '
      '*forward* acceleration `d.qacc` = M^-1 tau of every step against mjMAXVAL and resets the '
      'state when it is exceeded, so a servo error e resets the simulation once kp e / I > '
      'mjMAXVAL, whatever the integrator; the grid stops below that for the unit state.\n')
  out.append('![poles vs kp](figures/poles_vs_kp.png)\n')
  return inertia


#-------------------------------------- 2. step responses -----------------------------------------


def study_steps(fig_dir, out, inertia):
  kv = 1.0
  duration = 0.1
  times = np.arange(int(round(duration / H)) + 1) * H
  fine = np.linspace(0, duration, 1001)
  fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
  rows = []
  for ax, fn in zip(axes, (100.0, 200.0)):
    wn = 2 * np.pi * fn
    kp = inertia * wn**2
    zeta = kv / (2 * np.sqrt(kp * inertia))
    stock = simulate_step(kp, kv, False, duration)
    flag = simulate_step(kp, kv, True, duration)
    exact = exact_step_expm(kp, kv, inertia, fine)
    exact_k = exact_step_expm(kp, kv, inertia, times)
    ax.plot(fine * 1e3, exact, 'k', lw=1, label='exact continuous PD')
    ax.plot(times * 1e3, np.clip(stock, -3, 3), 'o-', ms=3, label='stock implicit')
    ax.plot(times * 1e3, flag, 's-', ms=3, label='implicitpos flag')
    ax.set_ylim(-3, 3)
    ax.set_xlabel('t [ms]')
    ax.set_ylabel('q [rad] (step to 1; stock clipped to +-3)')
    ax.set_title(f'f_n = {fn:g} Hz: kp = {kp:.4g}, zeta = {zeta:.3f}, h*omega_n = {H*wn:.3g}')
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    finite = np.isfinite(stock)
    last = int(np.max(np.nonzero(finite)[0]))
    stock_desc = (f'diverges: abs(q) = {abs(stock[last]):.3g} at t = {times[last]*1e3:.0f} ms, '
                  f'bad-qacc warning at the next step' if not finite.all()
                  else f'max abs(q) = {np.max(np.abs(stock)):.3g}')
    rows.append(f'| {fn:g} | {kp:.5g} | {zeta:.4f} | {H*wn:.4g} | {stock_desc} | '
                f'{np.max(flag):.4f} | {np.sqrt(np.mean((flag - exact_k)**2)):.4f} | '
                f'{np.max(exact):.4f} |')
  fig.tight_layout()
  fig.savefig(os.path.join(fig_dir, 'step_responses.png'), dpi=110)
  plt.close(fig)
  out.append('## 2. Step responses at f_n = 100 Hz and 200 Hz\n')
  out.append(
      f'Same hinge, kv = {kv:g}, kp = I (2 pi f_n)^2, step of the target from 0 to 1 rad, '
      f'{duration*1e3:g} ms, h = {H*1e3:g} ms. Exact: the continuous PD servo through the matrix '
      f'exponential (scipy.linalg.expm). RMS over the step times 0..{duration*1e3:g} ms.\n')
  out.append('| f_n [Hz] | kp | zeta | h omega_n | stock | flag: peak q | flag: RMS error vs exact '
             '| exact: peak q |')
  out.append('|---|---|---|---|---|---|---|---|')
  out.extend(rows)
  out.append('\n![step responses](figures/step_responses.png)\n')


#-------------------------------------- 3. RMS error vs h omega_n ---------------------------------


WINDOW = 20.0  # error window: 0 <= t <= WINDOW / omega_n


def rms_error(h_wn, zeta, flag, inertia):
  kp, kv = servo_gains(inertia, H, h_wn, zeta)
  n = max(1, int(np.ceil(WINDOW / h_wn)))
  q = simulate_step(kp, kv, flag, n * H)
  times = np.arange(n + 1) * H
  exact = exact_step_expm(kp, kv, inertia, times)
  if not np.all(np.isfinite(q)):
    return np.inf
  return np.sqrt(np.mean((q - exact)**2))


def crossovers(x, stock, flag):
  """h*omega_n where (stock - flag) changes sign from negative to positive, log-interpolated."""
  d = np.log(np.where(np.isfinite(stock), stock, 1e300)) - np.log(flag)
  found = []
  for i in range(len(x) - 1):
    if d[i] < 0 <= d[i + 1]:
      if not np.isfinite(stock[i + 1]):
        found.append((x[i + 1], 'stock unstable'))
      else:
        t = d[i] / (d[i] - d[i + 1])
        found.append((float(np.exp(np.log(x[i]) + t * (np.log(x[i + 1]) - np.log(x[i])))),
                      'interpolated'))
  return found


def study_rms(fig_dir, out, inertia):
  x = np.logspace(np.log10(0.05), np.log10(10), 161)
  zetas = (0.1, 0.5, 1.0, 2.0)
  claimed = {0.1: 1.26, 0.5: 1.36, 1.0: 1.12, 2.0: 0.73}
  fig, axes = plt.subplots(2, 2, figsize=(12, 8), sharex=True)
  rows = []
  for ax, zeta in zip(axes.flat, zetas):
    stock = np.array([rms_error(v, zeta, False, inertia) for v in x])
    flag = np.array([rms_error(v, zeta, True, inertia) for v in x])
    cross = crossovers(x, stock, flag)
    cap = stock_cap_x(zeta)
    ax.loglog(x, np.where(np.isfinite(stock), stock, np.nan), label='stock implicit')
    ax.loglog(x, flag, label='implicitpos flag')
    for c, _ in cross:
      ax.axvline(c, color='g', ls='--', lw=0.8)
    ax.axvline(cap, color='r', ls=':', lw=0.8, label='stock cap (closed form)')
    ax.set_title(f'zeta = {zeta:g}; crossover(s): ' + ', '.join(f'{c:.3g}' for c, _ in cross))
    ax.set_ylabel('RMS step error [rad]')
    ax.grid(True, which='both', alpha=0.3)
    ax.legend(fontsize=8)
    # Where the stock one-step map (measured as in section 1) has a pole outside the unit circle.
    diverging = np.array(
        [hinge_radius(*servo_gains(inertia, H, v, zeta), False) > 1 for v in x])
    first_unstable = x[np.argmax(diverging)] if diverging.any() else None
    rows.append(f'| {zeta:g} | ' + (', '.join(f'{c:.3f} ({how})' for c, how in cross) or 'none')
                + f' | {claimed[zeta]} | {cap:.3f} | '
                + (f'{first_unstable:.3f}' if first_unstable is not None else '-') + ' |')
  for ax in axes[1]:
    ax.set_xlabel('h * omega_n')
  fig.suptitle(f'RMS error of the step response vs exact, window 0 <= t <= {WINDOW:g}/omega_n, '
               f'h = {H*1e3:g} ms')
  fig.tight_layout()
  fig.savefig(os.path.join(fig_dir, 'rms_error.png'), dpi=110)
  plt.close(fig)
  out.append('## 3. RMS step error vs h omega_n\n')
  out.append(
      f'Same hinge, h = {H*1e3:g} ms, omega_n = x/h for 161 values x = h omega_n in [0.05, 10] '
      f'(log-spaced), kp = I omega_n^2, kv = 2 zeta I omega_n (kv through the actuator, so the '
      f'implicit integrator treats the damping implicitly in both cases). Unit step from rest; error = '
      f'simulated q minus the exact continuous response at the step times, RMS over the window '
      f'**0 <= t <= {WINDOW:g}/omega_n** (at least one step). A crossover is where the flag '
      f'becomes more accurate than stock (log-interpolated between grid points; if stock goes '
      f'unstable first, the first unstable grid point). A stock run that trips MuJoCo\'s '
      f'instability warning within the window counts as infinite error. The upstream proposal '
      f'claims the crossovers in the third column; they depend on the error window (the window '
      f'here is the one stated above, chosen before comparing).\n')
  out.append('| zeta | measured crossover(s) h omega_n | proposal claims | stock cap 2(zeta + '
             'sqrt(zeta^2+1)), closed form | first grid x with a stock pole outside the unit '
             'circle (measured) |')
  out.append('|---|---|---|---|---|')
  out.extend(rows)
  out.append('\n![rms error](figures/rms_error.png)\n')


#-------------------------------------- 4. servo humanoid ------------------------------------------


def servo_humanoid(path, kp, kv, flag, contact):
  model = mujoco.MjModel.from_xml_path(path)
  model.actuator_gaintype[:] = mujoco.mjtGain.mjGAIN_FIXED
  model.actuator_biastype[:] = mujoco.mjtBias.mjBIAS_AFFINE
  model.actuator_gainprm[:] = 0
  model.actuator_biasprm[:] = 0
  model.actuator_gainprm[:, 0] = kp
  model.actuator_biasprm[:, 1] = -kp
  model.actuator_biasprm[:, 2] = -kv
  model.actuator_ctrllimited[:] = 0
  model.actuator_forcelimited[:] = 0
  model.actuator_gear[:] = 0
  model.actuator_gear[:, 0] = 1
  model.opt.timestep = H
  model.opt.integrator = mujoco.mjtIntegrator.mjINT_IMPLICIT
  model.opt.enableflags = BIT if flag else 0
  if not contact:
    model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
  return model


def humanoid_stable(path, kp, flag, contact, duration=2.0):
  model = servo_humanoid(path, kp, 0.0, flag, contact)
  data = mujoco.MjData(model)
  mujoco.mj_forward(model, data)
  data.ctrl[:] = data.actuator_length  # hold the initial pose
  for _ in range(int(round(duration / H))):
    mujoco.mj_step(model, data)
    if engine_reset(data):
      return False
  return bool(np.all(np.isfinite(data.qpos)) and np.all(np.isfinite(data.qvel)))


def study_humanoid(fig_dir, out, model_dir):
  path = os.path.join(model_dir, 'humanoid', 'humanoid.xml')
  nu = mujoco.MjModel.from_xml_path(path).nu
  kps = [10.0**e for e in range(0, 13)]
  cases = [(False, True), (True, True), (False, False), (True, False)]
  table = {c: [humanoid_stable(path, kp, *c) for kp in kps] for c in cases}
  fig, ax = plt.subplots(figsize=(10, 3.2))
  labels = []
  for row, c in enumerate(cases):
    for col, ok in enumerate(table[c]):
      ax.scatter(col, row, marker='o' if ok else 'x', s=80, c='g' if ok else 'r')
    labels.append(f"{'flag' if c[0] else 'stock'}, contact {'on' if c[1] else 'off'}")
  ax.set_yticks(range(len(cases)), labels)
  ax.set_xticks(range(len(kps)), [f'1e{e}' for e in range(0, len(kps))])
  ax.set_xlabel('servo kp (kv = 0), gear 1')
  ax.set_title(f'Servo humanoid, h = {H*1e3:g} ms, implicit: stable over 2 s (o) / unstable (x)')
  ax.set_ylim(-0.5, len(cases) - 0.5)
  fig.tight_layout()
  fig.savefig(os.path.join(fig_dir, 'humanoid_kp.png'), dpi=110)
  plt.close(fig)

  def largest(oks):
    # The largest grid kp up to which every grid kp is stable.
    best = None
    for kp, ok in zip(kps, oks):
      if not ok:
        break
      best = kp
    return best

  out.append('## 4. Servo humanoid: largest stable kp\n')
  out.append(
      f'model/humanoid/humanoid.xml of the patched tree, its {nu} motors replaced by position '
      f'servos (gain kp, bias -kp q, kv = 0, gear 1, no control or force limits) holding the '
      f'initial pose (ctrl = actuator length after mj_forward), h = {H*1e3:g} ms, implicit '
      f'integrator, gravity on; contact on (as in the model) or off (mjDSBL_CONTACT). Stable: over '
      f'2 s (400 steps) no bad-qpos/qvel/qacc warning and a finite state at the end. Decade grid '
      f'kp = 1 .. 1e{len(kps) - 1}.\n')
  out.append('| case | ' + ' | '.join(f'1e{e}' for e in range(0, len(kps))) +
             ' | largest stable kp (all smaller grid kp stable too) |')
  out.append('|---|' + '---|' * len(kps) + '---|')
  for c, label in zip(cases, labels):
    best = largest(table[c])
    out.append(f'| {label} | ' + ' | '.join('ok' if ok else 'x' for ok in table[c]) + ' | ' +
               (f'{best:.0e}' if best else 'none') + ' |')
  out.append('\n![humanoid kp](figures/humanoid_kp.png)\n')


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument('--doc', required=True, help='the Markdown file to write')
  parser.add_argument('--figures', required=True, help='directory of the PNG figures')
  parser.add_argument('--model-dir', required=True, help="MuJoCo's model/ directory")
  parser.add_argument('--command', default='python/study/run.sh',
                      help='the command named in the document')
  args = parser.parse_args()
  os.makedirs(args.figures, exist_ok=True)
  out = ['# Stability and accuracy of mjENBL_IMPLICITPOS\n']
  out.append(
      f'Generated by `{args.command}` (python/study/stability.py), which steps the patched '
      f'engine (MuJoCo {mujoco.mj_versionString()}) through its Python bindings. Do not edit by '
      f'hand: every number below comes from that run; closed forms appear only as references.\n')
  inertia = study_poles(args.figures, out)
  study_steps(args.figures, out, inertia)
  study_rms(args.figures, out, inertia)
  study_humanoid(args.figures, out, args.model_dir)
  with open(args.doc, 'w') as f:
    f.write('\n'.join(out))


if __name__ == '__main__':
  main()
