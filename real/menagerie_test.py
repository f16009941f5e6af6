"""real/menagerie.py's conversions for MuJoCo 2.2.2, each on a small MJCF of its own."""

import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import menagerie  # noqa: E402


def run(tmp_path, text, fn=menagerie.convert):
  path = tmp_path / "robot.xml"
  path.write_text(text)
  applied = set()
  fn(str(path), applied)
  return ET.parse(path).getroot(), applied


# Catches: a <position kv> left for 2.2.2 to reject, or a servo's gains taken from the wrong
# class (its own, its class's, the parent class's) or from a default already rewritten.
def test_position_kv_becomes_general_affine(tmp_path):
  root, applied = run(tmp_path, """<mujoco>
  <default>
    <default class="arm">
      <position kp="2000" kv="100" ctrlrange="-1 1"/>
      <default class="limited"><position ctrlrange="-0.5 0.5"/></default>
      <default class="small"><position kp="500" kv="25"/></default>
    </default>
  </default>
  <actuator>
    <position name="a" class="arm" joint="j"/>
    <position name="b" class="limited" joint="j"/>
    <position name="c" class="small" kp="700" joint="j"/>
    <position name="d" kp="3" joint="j"/>
  </actuator>
</mujoco>""")
  assert "`<position kv>` -> `<general>` affine" in applied
  assert not list(root.iter("position"))
  got = {g.get("name"): (g.get("gainprm"), g.get("biasprm"), g.get("biastype"))
         for g in root.find("actuator")}
  assert got == {"a": ("2000", "0 -2000 -100", "affine"),
                 "b": ("2000", "0 -2000 -100", "affine"),
                 "c": ("700", "0 -700 -25", "affine"),
                 "d": ("3", "0 -3 -0", "affine")}
  limited = root.find("default/default/default[@class='limited']/general")
  assert limited.get("ctrlrange") == "-0.5 0.5"
  assert limited.get("biasprm") == "0 -2000 -100"


# Catches: a position servo without kv rewritten (2.2.2 loads it as it is).
def test_position_without_kv_is_kept(tmp_path):
  root, applied = run(tmp_path, """<mujoco>
  <actuator><position name="a" kp="5" joint="j"/></actuator>
</mujoco>""")
  assert applied == set()
  assert root.find("actuator/position").get("kp") == "5"


# Catches: a joint's actuatorfrcrange dropped instead of moved, or read from the wrong class
# (the joint's own, its body's childclass).
def test_actuatorfrcrange_becomes_the_actuators_forcerange(tmp_path):
  root, applied = run(tmp_path, """<mujoco>
  <default>
    <default class="waist"><joint actuatorfrcrange="-35 35"/></default>
  </default>
  <worldbody>
    <body childclass="waist">
      <joint name="j1"/>
      <joint name="j2" actuatorfrcrange="-3 3"/>
      <joint name="j3"/>
    </body>
  </worldbody>
  <actuator>
    <motor name="a1" joint="j1"/>
    <motor name="a2" joint="j2"/>
  </actuator>
</mujoco>""")
  assert "joint actuatorfrcrange -> its actuator's forcerange" in applied
  assert not [e for e in root.iter() if "actuatorfrcrange" in e.attrib]
  acts = {a.get("name"): (a.get("forcerange"), a.get("forcelimited"))
          for a in root.find("actuator")}
  assert acts == {"a1": ("-35 35", "true"), "a2": ("-3 3", "true")}


# Catches: implicitfast left in, autolimits not set where 2.2.2's default (off) would reject a
# range, or set where the file chose.
def test_integrator_and_autolimits(tmp_path):
  root, applied = run(tmp_path, """<mujoco>
  <option integrator="implicitfast"/>
  <worldbody><body><joint name="j" range="-1 1"/></body></worldbody>
</mujoco>""")
  assert applied == {"implicitfast -> implicit", "autolimits set (the default since 2.3.0)"}
  assert root.find("option").get("integrator") == "implicit"
  assert root.find("compiler").get("autolimits") == "true"
  root, applied = run(tmp_path, """<mujoco>
  <compiler autolimits="false"/>
  <worldbody><body><joint name="j" range="-1 1" limited="true"/></body></worldbody>
</mujoco>""")
  assert applied == set()
  assert root.find("compiler").get("autolimits") == "false"


# Catches: a rendering-only attribute 2.2.2 lacks left in, or a physical one dropped with it.
def test_camera_intrinsics_and_mesh_inertia_dropped(tmp_path):
  root, applied = run(tmp_path, """<mujoco>
  <asset><mesh name="m" file="m.stl" inertia="convex" scale="2 2 2"/></asset>
  <worldbody><camera name="c" pos="1 0 0" resolution="640 480" focal="1 1"/></worldbody>
</mujoco>""")
  assert applied == {"camera intrinsics dropped", "mesh inertia mode dropped"}
  assert root.find("worldbody/camera").attrib == {"name": "c", "pos": "1 0 0"}
  assert root.find("asset/mesh").attrib == {"name": "m", "file": "m.stl", "scale": "2 2 2"}


# Catches: a motor missing on a hinge or slide, one put on the free joint, or motors added to a
# file that declares its actuators.
def test_motors_on_every_named_hinge_and_slide(tmp_path):
  root, applied = run(tmp_path, """<mujoco>
  <worldbody>
    <body><freejoint name="base"/>
      <body><joint name="hip"/><joint name="slider" type="slide"/><joint name="ball" type="ball"/>
      </body>
    </body>
  </worldbody>
</mujoco>""", menagerie.add_motors)
  assert [m.get("joint") for m in root.find("actuator")] == ["hip", "slider"]
  assert applied == {"a motor on every joint (the wheel declares its actuators in code)"}
  root, applied = run(tmp_path, """<mujoco>
  <worldbody><body><joint name="hip"/></body></worldbody>
  <actuator><position joint="hip"/></actuator>
</mujoco>""", menagerie.add_motors)
  assert applied == set() and len(root.find("actuator")) == 1
