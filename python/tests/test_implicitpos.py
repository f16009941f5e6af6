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
"""mjENBL_IMPLICITPOS through MuJoCo's Python bindings."""

import os
import pickle

from implicitpos_models import INERTIA
from implicitpos_models import one_hinge_xml
from implicitpos_onedof import joint_inertia
from implicitpos_onedof import measured_step
from implicitpos_onedof import scheme_step
from implicitpos_onedof import stock_cap_kp
import mujoco
import numpy as np
import pytest

BIT = int(mujoco.mjtEnableBit.mjENBL_IMPLICITPOS)


def test_enum_bit_and_string_are_bound():
  assert BIT == 1 << 5
  assert int(mujoco.mjtEnableBit.mjNENABLE) > 5
  assert len(mujoco.mjENABLESTRING) == mujoco.mjtEnableBit.mjNENABLE
  assert mujoco.mjENABLESTRING[5] == 'ImplicitPos'


@pytest.mark.parametrize('flag, expected', [(None, 0), ('disable', 0), ('enable', BIT)])
def test_flag_via_mjcf(flag, expected):
  model = mujoco.MjModel.from_xml_string(one_hinge_xml(100, 1, flag=flag))
  assert model.opt.enableflags & BIT == expected


def test_flag_via_enableflags_equals_flag_via_mjcf():
  by_xml = mujoco.MjModel.from_xml_string(one_hinge_xml(400, 1, flag='enable'))
  by_attr = mujoco.MjModel.from_xml_string(one_hinge_xml(400, 1))
  by_attr.opt.enableflags |= BIT
  stock = mujoco.MjModel.from_xml_string(one_hinge_xml(400, 1))
  runs = []
  for model in (by_xml, by_attr, stock):
    data = mujoco.MjData(model)
    data.ctrl[0] = 0.3
    trajectory = []
    for _ in range(50):
      mujoco.mj_step(model, data)
      trajectory.append(data.qpos[0])
    runs.append(np.array(trajectory))
  np.testing.assert_array_equal(runs[0], runs[1])
  # The flag changes the dynamics.
  assert np.max(np.abs(runs[0] - runs[2])) > 1e-6


def test_xml_round_trip(tmp_path):
  for flag, expected in (('enable', BIT), ('disable', 0)):
    # A body inertia that survives the writer's precision.
    model = mujoco.MjModel.from_xml_string(one_hinge_xml(100, 1, flag=flag, body_inertia=1e-6))
    path = os.path.join(tmp_path, f'saved_{flag}.xml')
    mujoco.mj_saveLastXML(path, model)
    with open(path) as f:
      text = f.read()
    assert ('implicitpos="enable"' in text) == bool(expected)
    reloaded = mujoco.MjModel.from_xml_path(path)
    assert reloaded.opt.enableflags & BIT == expected


@pytest.mark.parametrize('kp, kv', [(10.0, 1.0), (1e3, 1.0), (1e5, 0.0), (3e4, 2.5)])
def test_one_hinge_closed_form(kp, kv):
  h, q0, v0, target = 0.005, 0.2, -1.5, 0.7
  model = mujoco.MjModel.from_xml_string(one_hinge_xml(kp, kv, h=h))
  model.opt.enableflags |= BIT
  data = measured_step(model, q0, v0, target)
  # The acceleration the step applied (d.qacc holds the forward-dynamics one of the initial state).
  qacc = (data.qvel[0] - v0) / h
  # The joint-space inertia, as the engine has it (armature plus the body's tiny inertia).
  big_i = joint_inertia(model)
  assert big_i == pytest.approx(INERTIA, rel=1e-9)
  # The closed form: (kp (target - q0) - (kv + h kp) v0) / (I + h kv + h^2 kp).
  _, v_flag = scheme_step(q0, v0, target, kp, kv, big_i, h, theta=1)
  assert qacc == pytest.approx((v_flag - v0) / h, rel=1e-9)
  # Semi-implicit position update: q+ = q0 + h v+.
  assert data.qpos[0] == pytest.approx(q0 + h * data.qvel[0], rel=1e-12)

  # Without the flag: the stock implicit update, implicit in velocity only.
  model.opt.enableflags &= ~BIT
  stock = measured_step(model, q0, v0, target)
  # (kp (target - q0) - kv v0) / (I + h kv)
  _, v_stock = scheme_step(q0, v0, target, kp, kv, big_i, h, theta=0)
  assert (stock.qvel[0] - v0) / h == pytest.approx((v_stock - v0) / h, rel=1e-9)


@pytest.mark.parametrize('integrator', ['Euler', 'RK4'])
def test_flag_is_inert_outside_implicit(integrator):
  model = mujoco.MjModel.from_xml_string(one_hinge_xml(1e4, 1, integrator=integrator))
  runs = []
  for enable in (False, True):
    if enable:
      model.opt.enableflags |= BIT
    data = mujoco.MjData(model)
    data.ctrl[0] = 0.1
    for _ in range(20):
      mujoco.mj_step(model, data)
    runs.append((data.qpos.copy(), data.qvel.copy()))
  np.testing.assert_array_equal(runs[0][0], runs[1][0])
  np.testing.assert_array_equal(runs[0][1], runs[1][1])


def test_stiff_servo_beyond_the_stock_cap():
  h, kv = 0.005, 1.0
  cap = stock_cap_kp(INERTIA, kv, h)
  model = mujoco.MjModel.from_xml_string(one_hinge_xml(4 * cap, kv, h=h))
  peak, warnings = {}, {}
  for enable in (False, True):
    model.opt.enableflags = BIT if enable else 0
    data = mujoco.MjData(model)
    data.qpos[0] = 0.1
    peak[enable] = 0
    for _ in range(200):
      mujoco.mj_step(model, data)
      peak[enable] = max(peak[enable], abs(data.qpos[0]))
    warnings[enable] = data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number
  # The flag: no warning, never beyond the initial offset.
  assert warnings[True] == 0
  assert peak[True] <= 0.1
  # Stock: grows until MuJoCo's bad-qacc check resets the state.
  assert warnings[False] > 0


def test_step_force_is_readable_and_is_the_applied_force():
  # The README's example: kp 1e5 from a unit error. actuator_force is the explicit kp * error;
  # actuator_force_step, qfrc_actuator_step and qfrc_smooth_step are what the step applied, the
  # change of momentum I (v+ - v) / h.
  h = 0.005
  model = mujoco.MjModel.from_xml_string(one_hinge_xml(1e5, 1.0, h=h, flag='enable'))
  data = mujoco.MjData(model)
  data.ctrl[0] = 1
  mujoco.mj_step(model, data)
  applied = joint_inertia(model) * data.qvel[0] / h
  assert data.actuator_force[0] == 1e5
  assert data.actuator_force_step.shape == (model.nu,)
  assert data.qfrc_actuator_step.shape == (model.nv,)
  assert data.qfrc_smooth_step.shape == (model.nv,)
  np.testing.assert_allclose(data.actuator_force_step[0], applied, rtol=1e-10)
  np.testing.assert_allclose(data.qfrc_actuator_step[0], applied, rtol=1e-10)
  np.testing.assert_allclose(data.qfrc_smooth_step[0], applied, rtol=1e-10)
  assert 600 < data.actuator_force_step[0] < 650


def test_pickled_data_keeps_the_scope_and_steps_alike():
  # Unpickling builds mjData from the model's sizes alone, without its arrays, then reads every
  # array of mjData: the scope of each tendon and each actuator's dof, transmission and diagonal
  # address, which mj_resetData finds from the model's arrays, come from the pickle, and the copy
  # steps as the original.
  model = mujoco.MjModel.from_xml_string("""
<mujoco>
  <option integrator="implicit" timestep="0.005"><flag implicitpos="enable"/></option>
  <worldbody>
    <body><joint name="a" axis="0 1 0"/><geom size=".1" pos="0 0 -.2"/>
      <body pos="0 0 -.4"><joint name="b" axis="0 1 0"/><geom size=".1" pos="0 0 -.2"/></body>
    </body>
  </worldbody>
  <tendon><fixed name="t"><joint joint="a" coef="1"/><joint joint="b" coef="0.5"/></fixed></tendon>
  <actuator><position tendon="t" kp="2e4"/><position joint="b" kp="1e4"/></actuator>
</mujoco>""")
  data = mujoco.MjData(model)
  data.ctrl[:] = [0.3, -0.2]
  mujoco.mj_step(model, data)
  copy = pickle.loads(pickle.dumps(data))
  np.testing.assert_array_equal(copy.ten_posscope, data.ten_posscope)
  np.testing.assert_array_equal(copy.actuator_posdof, [-1, 1])
  np.testing.assert_array_equal(copy.actuator_postrn, data.actuator_postrn)
  # the joint servo's diagonal element in the D-sparse layout: rows 0 (a, b) and 1 (a, b)
  np.testing.assert_array_equal(copy.actuator_posdiag, [-1, 3])
  for _ in range(20):
    mujoco.mj_step(model, data)
    mujoco.mj_step(model, copy)
  np.testing.assert_array_equal(copy.qpos, data.qpos)
  np.testing.assert_array_equal(copy.actuator_force_step, data.actuator_force_step)
