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
"""The one-dof formulas of the Python tests and studies, each implemented once.

One servo on one dof: inertia I, gains kp, kv, timestep h; dimensionless, h w_n = x with
w_n = sqrt(kp / I) and zeta = kv / (2 sqrt(kp I)). Two kinds of function, named apart:

  measured_*   step the patched engine through MuJoCo's Python bindings: what the engine does;
  servo_gains, scheme_*, theta_floor, stock_cap_*
               closed forms of the one-dof scheme: the references the measurements are held to.

engine_reset and joint_inertia read the engine's data; poles, spectral_radius and
bisect_geometric serve both kinds. The models themselves are in implicitpos_models.py.

mujoco is imported only by the functions that step the engine, so that the closed forms also
serve posweight.py --check, which runs without the bindings.
"""

import numpy as np

#-------------------------------------- measured: the engine --------------------------------------


def engine_reset(data):
  """Whether MuJoCo recorded a bad qpos, qvel or qacc (and so reset the state) on data."""
  import mujoco  # pylint: disable=g-import-not-at-top
  return any(data.warning[w].number for w in (mujoco.mjtWarning.mjWARN_BADQPOS,
                                              mujoco.mjtWarning.mjWARN_BADQVEL,
                                              mujoco.mjtWarning.mjWARN_BADQACC))


def joint_inertia(model):
  """The reflected inertia of a one-dof model: its joint-space inertia qM[0] at qpos0.

  For one dof this is the 1/(M^-1)_00 the benchmark and the servo report use, read without the
  round trip through the inverse.
  """
  import mujoco  # pylint: disable=g-import-not-at-top
  data = mujoco.MjData(model)
  mujoco.mj_forward(model, data)
  return data.qM[0]


def measured_step(model, q0, v0, target=0.0):
  """One mj_step of a one-dof model from (q0, v0) with ctrl = target, on fresh data; the data."""
  import mujoco  # pylint: disable=g-import-not-at-top
  data = mujoco.MjData(model)
  data.qpos[0] = q0
  data.qvel[0] = v0
  data.ctrl[0] = target
  mujoco.mj_step(model, data)
  return data


def measured_map(model, amplitude=1.0):
  """The engine's 2x2 one-step map (q, v) -> (q+, v+) of a one-dof model, target 0.

  Its columns are one mj_step each from (amplitude, 0) and (0, amplitude), divided by amplitude
  (the map is linear: a small amplitude keeps a stiff servo's forward acceleration below
  MuJoCo's bad-qacc check). Raises ValueError if MuJoCo reset the state.
  """
  cols = []
  for x0 in ((amplitude, 0.0), (0.0, amplitude)):
    data = measured_step(model, *x0)
    if engine_reset(data):
      raise ValueError('MuJoCo reset the state: the map is not the integrator\'s')
    cols.append((data.qpos[0] / amplitude, data.qvel[0] / amplitude))
  return np.array(cols).T


#-------------------------------------- closed forms: the scheme ----------------------------------


def servo_gains(inertia, h, x, zeta):
  """The gains (kp, kv) of a servo with h w_n = x and damping ratio zeta on inertia I.

  kp = I w_n^2, kv = 2 zeta I w_n (so zeta = kv / (2 sqrt(kp I))).
  """
  wn = x / h
  return inertia * wn**2, 2 * zeta * inertia * wn


def scheme_step(q, v, target, kp, kv, inertia, h, theta):
  """One step (q, v) -> (q+, v+) of the one-dof servo scheme, in closed form.

  theta weights the position stiffness: 0 is stock implicit (implicit in velocity only), 1 is
  mjENBL_IMPLICITPOS (backward Euler on the servo), in between mjENBL_POSWEIGHT; so
  v+ = v + h (kp (target - q) - (kv + theta h kp) v) / (I + h kv + theta h^2 kp), q+ = q + h v+.
  """
  v = v + h * (kp * (target - q) - kv * v - theta * h * kp * v) / (
      inertia + h * kv + theta * h * h * kp)
  return q + h * v, v


def theta_floor(x, zeta, margin=1.0):
  """The smallest theta whose scheme is stable at h w_n = x, with margin on the inertia.

  (1 - 2 theta) x^2 <= margin (4 + 4 zeta x), solved for theta: the engine's posWeightFloor
  (there margin = 1/2). Stock implicit (theta = 0) is stable where it is negative.
  """
  return 0.5 - margin * (2 / (x * x) + 2 * zeta / x)


def stock_cap_kp(inertia, kv, h):
  """The largest kp at which stock implicit is stable: h^2 kp = 4 I + 2 h kv.

  The boundary theta_floor(x, zeta) = 0, solved for kp.
  """
  return (4 * inertia + 2 * h * kv) / h**2


def stock_cap_x(zeta):
  """The largest h w_n at which stock implicit is stable: x^2 = 4 + 4 zeta x.

  The boundary theta_floor(x, zeta) = 0, solved for x.
  """
  return 2 * (zeta + np.sqrt(zeta**2 + 1))


#-------------------------------------- on either -------------------------------------------------


def poles(step_map):
  """The discrete poles of a one-step map: the eigenvalues of the 2x2 matrix."""
  return np.linalg.eigvals(step_map)


def spectral_radius(step_map):
  """The largest pole magnitude of a one-step map; the map is stable below 1."""
  return np.max(np.abs(poles(step_map)))


def bisect_geometric(crosses, lo, hi, iterations=80):
  """Where the predicate crosses turns true between lo > 0 and hi, by bisection in log scale.

  crosses(lo) must be false and crosses(hi) true. Returns the geometric mean of the last
  bracket.
  """
  if crosses(lo) or not crosses(hi):
    raise ValueError(f'crosses does not turn true between {lo:g} and {hi:g}')
  for _ in range(iterations):
    mid = np.sqrt(lo * hi)
    if crosses(mid):
      hi = mid
    else:
      lo = mid
  return np.sqrt(lo * hi)
