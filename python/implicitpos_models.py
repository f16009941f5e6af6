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
"""The one-hinge position servo shared by the Python tests and the stability study."""

# Rotor inertia (armature) of the one-hinge servo; the body's own inertia is negligible.
INERTIA = 0.01576


def one_hinge_xml(kp, kv, h=0.005, integrator='implicit', flag=None, body_inertia=1e-14):
  """MJCF of one hinge with a position servo (gain kp, damping kv); no gravity, no contact.

  flag, if given, is the value of <flag implicitpos=...>.
  """
  flag_xml = '' if flag is None else f'<flag implicitpos="{flag}"/>'
  return f"""
<mujoco>
  <option timestep="{h!r}" integrator="{integrator}" gravity="0 0 0">{flag_xml}</option>
  <worldbody>
    <body>
      <joint name="hinge" type="hinge" axis="0 0 1" armature="{INERTIA!r}"/>
      <inertial pos="0 0 0" mass="1" diaginertia="{body_inertia!r} {body_inertia!r} {body_inertia!r}"/>
    </body>
  </worldbody>
  <actuator>
    <general joint="hinge" gainprm="{kp!r}" biastype="affine" biasprm="0 {-kp!r} {-kv!r}"/>
  </actuator>
</mujoco>
"""
