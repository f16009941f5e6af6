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

#include "support/models.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include <Eigen/Dense>
#include <mujoco/mujoco.h>

namespace mjpos {
namespace {

std::string Num(double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", x);
  return buf;
}

std::string Header(double h, const std::string& integrator) {
  return "<mujoco>\n  <option timestep=\"" + Num(h) + "\" integrator=\"" + integrator +
         "\"/>\n";
}

}  // namespace

mjModel* LoadXmlString(const std::string& xml, std::string* error) {
  char err[1000] = "";
  auto vfs = std::make_unique<mjVFS>();  // large: not on the stack
  mj_defaultVFS(vfs.get());
  mj_makeEmptyFileVFS(vfs.get(), "model.xml", xml.size());
  int i = mj_findFileVFS(vfs.get(), "model.xml");
  std::memcpy(vfs->filedata[i], xml.data(), xml.size());
  mjModel* m = mj_loadXML("model.xml", vfs.get(), err, sizeof(err));
  mj_deleteVFS(vfs.get());
  if (error) *error = err;
  return m;
}

namespace {

// one hinge about z with all its inertia as armature; joint_attrs and elements are spliced in
std::string HingeXml(double inertia, const std::string& joint_attrs, const std::string& elements,
                     double h, const std::string& integrator) {
  std::string body_inertia = Num(1e-12 * inertia);
  return Header(h, integrator) +
         "  <option gravity=\"0 0 0\"/>\n"
         "  <worldbody>\n"
         "    <body>\n"
         "      <joint name=\"hinge\" type=\"hinge\" axis=\"0 0 1\" armature=\"" + Num(inertia) +
         "\"" + joint_attrs + "/>\n"
         "      <inertial pos=\"0 0 0\" mass=\"1\" diaginertia=\"" + body_inertia + " " +
         body_inertia + " " + body_inertia + "\"/>\n"
         "    </body>\n"
         "  </worldbody>\n" + elements +
         "</mujoco>\n";
}

}  // namespace

std::string OneHingeXml(double inertia, double kp, double kv, double h,
                        const std::string& integrator) {
  return HingeXml(inertia, "",
                  "  <actuator>\n"
                  "    <general joint=\"hinge\" gainprm=\"" + Num(kp) +
                      "\" biastype=\"affine\" biasprm=\"0 " + Num(-kp) + " " + Num(-kv) + "\"/>\n"
                  "  </actuator>\n",
                  h, integrator);
}

std::string OneHingeSpringXml(double inertia, double stiffness, double damping, double h,
                              const std::string& integrator) {
  return HingeXml(inertia,
                  " stiffness=\"" + Num(stiffness) + "\" damping=\"" + Num(damping) + "\"", "",
                  h, integrator);
}

std::string ChainXml(int n, double kp, double kv, double h, const std::string& integrator) {
  std::ostringstream xml;
  xml << Header(h, integrator)
      << "  <option><flag contact=\"disable\"/></option>\n"
      << "  <default>\n"
      << "    <joint type=\"hinge\" armature=\"0.01\" damping=\"0.1\"/>\n"
      << "    <geom type=\"capsule\" size=\"0.03\" fromto=\"0 0 0 0.2 0 0\" mass=\"0.5\"/>\n"
      << "  </default>\n"
      << "  <worldbody>\n";
  std::string indent = "    ";
  for (int i = 0; i < n; ++i) {
    xml << indent << "<body pos=\"" << (i ? "0.2" : "0") << " 0 0\">\n"
        << indent << "  <joint name=\"j" << i << "\" axis=\"" << (i % 2 ? "0 0 1" : "0 1 0")
        << "\"/>\n"
        << indent << "  <geom/>\n";
    indent += "  ";
  }
  for (int i = n - 1; i >= 0; --i) {
    indent.resize(indent.size() - 2);
    xml << indent << "</body>\n";
  }
  xml << "  </worldbody>\n  <actuator>\n";
  for (int i = 0; i < n; ++i) {
    xml << "    <general joint=\"j" << i << "\" gainprm=\"" << Num(kp)
        << "\" biastype=\"affine\" biasprm=\"0 " << Num(-kp) << " " << Num(-kv) << "\"/>\n";
  }
  xml << "  </actuator>\n</mujoco>\n";
  return xml.str();
}

std::string BallRopeXml(int n, double stiffness, double damping, double h,
                        const std::string& integrator) {
  std::ostringstream xml;
  xml << Header(h, integrator)
      << "  <option><flag contact=\"disable\"/></option>\n"
      << "  <default>\n"
      << "    <joint type=\"ball\" stiffness=\"" << Num(stiffness) << "\" damping=\""
      << Num(damping) << "\"/>\n"
      << "    <geom type=\"capsule\" size=\"0.01\" fromto=\"0 0 0 0.1 0 0\"/>\n"
      << "  </default>\n"
      << "  <worldbody>\n";
  std::string indent = "    ";
  for (int i = 0; i < n; ++i) {
    xml << indent << "<body pos=\"" << (i ? "0.1" : "0") << " 0 0\"><joint name=\"b" << i
        << "\"/><geom/>\n";
    indent += "  ";
  }
  for (int i = n - 1; i >= 0; --i) {
    indent.resize(indent.size() - 2);
    xml << indent << "</body>\n";
  }
  xml << "  </worldbody>\n</mujoco>\n";
  return xml.str();
}

std::string RowServoXml(const std::string& kind, double kp, double kv, double h,
                        const std::string& integrator, int links) {
  std::string servo = "gainprm=\"" + Num(kp) + "\" biastype=\"affine\" biasprm=\"0 " +
                      Num(-kp) + " " + Num(-kv) + "\"";
  const char* gear[3] = {"1 0 0 0 0 0", "0 1 0 0 0 0", "0 0 1 0 0 0"};
  std::ostringstream xml;
  xml << Header(h, integrator)
      << "  <option><flag contact=\"disable\"/></option>\n"
      << "  <default>\n"
      << "    <joint armature=\"0.01\" damping=\"0.01\"/>\n"
      << "    <geom type=\"capsule\" size=\"0.02\" fromto=\"0 0 0 0.2 0 0\"/>\n"
      << "  </default>\n"
      << "  <worldbody>\n"
      << "    <site name=\"ref\" pos=\"0 0 0.3\"/>\n"
      << "    <site name=\"w1\" pos=\"0.1 0 0.3\"/>\n"
      << "    <site name=\"w2\" pos=\"0.3 0 -0.3\"/>\n";
  std::string actuators;
  if (kind == "site") {
    xml << "    <body><joint axis=\"0 0 1\"/><joint axis=\"0 1 0\"/><geom/>\n"
        << "      <body pos=\"0.2 0 0\" euler=\"0 -40 0\"><joint axis=\"0 1 0\"/><geom/>"
        << "<site name=\"tip\" pos=\"0.2 0 0\"/></body>\n"
        << "    </body>\n";
    for (const char* g : gear) {
      actuators += std::string("    <general site=\"tip\" refsite=\"ref\" gear=\"") + g +
                   "\" " + servo + "/>\n";
    }
  } else if (kind == "spatial") {
    xml << "    <body><joint axis=\"0 1 0\"/><geom/><site name=\"t1\" pos=\"0.2 0 0\"/>\n"
        << "      <body pos=\"0.2 0 0\"><joint axis=\"0 1 0\"/><geom/>"
        << "<site name=\"t2\" pos=\"0.2 0 0\"/></body>\n"
        << "    </body>\n";
    actuators = "    <general tendon=\"s1\" " + servo + "/>\n"
                "    <general tendon=\"s2\" " + servo + "/>\n";
  } else {
    std::string indent = "    ";
    for (int i = 0; i < links; ++i) {
      xml << indent << "<body pos=\"" << (i ? "0.2" : "0") << " 0 0\"><joint name=\"b" << i
          << "\" type=\"ball\"/><geom/>\n";
      indent += "  ";
      for (const char* g : gear) {
        actuators += "    <general joint=\"b" + std::to_string(i) + "\" gear=\"" + g + "\" " +
                     servo + "/>\n";
      }
    }
    for (int i = 0; i < links; ++i) {
      indent.resize(indent.size() - 2);
      xml << indent << "</body>\n";
    }
  }
  xml << "  </worldbody>\n";
  if (kind == "spatial") {
    xml << "  <tendon>\n"
        << "    <spatial name=\"s1\"><site site=\"w1\"/><site site=\"t1\"/></spatial>\n"
        << "    <spatial name=\"s2\"><site site=\"w2\"/><site site=\"t2\"/></spatial>\n"
        << "  </tendon>\n";
  }
  xml << "  <actuator>\n" << actuators << "  </actuator>\n</mujoco>\n";
  return xml.str();
}

std::string GearTendonArmXml(double kp, double kv, double h, const std::string& integrator) {
  std::string servo = "gainprm=\"" + Num(kp) + "\" biastype=\"affine\" biasprm=\"0 " +
                      Num(-kp) + " " + Num(-kv) + "\"";
  return Header(h, integrator) +
         "  <option><flag contact=\"disable\"/></option>\n"
         "  <default>\n"
         "    <joint type=\"hinge\" armature=\"0.01\" damping=\"0.1\" stiffness=\"5\"/>\n"
         "    <geom type=\"capsule\" size=\"0.03\" fromto=\"0 0 0 0.2 0 0\" mass=\"0.5\"/>\n"
         "  </default>\n"
         "  <worldbody>\n"
         "    <body><joint name=\"j0\" axis=\"0 1 0\"/><geom/>\n"
         "      <body pos=\"0.2 0 0\"><joint name=\"j1\" axis=\"0 0 1\"/><geom/>\n"
         "        <body pos=\"0.2 0 0\"><joint name=\"j2\" axis=\"0 1 0\"/><geom/></body>\n"
         "      </body>\n"
         "    </body>\n"
         "  </worldbody>\n"
         "  <tendon><fixed name=\"t\"><joint joint=\"j1\" coef=\"1\"/>"
         "<joint joint=\"j2\" coef=\"-0.5\"/></fixed></tendon>\n"
         "  <actuator>\n"
         "    <general joint=\"j0\" " + servo + "/>\n"
         "    <general joint=\"j1\" gear=\"2\" " + servo + "/>\n"
         "    <general tendon=\"t\" " + servo + "/>\n"
         "  </actuator>\n"
         "</mujoco>\n";
}

std::string FingerSqueezeXml(double kp, double kv, double h, const std::string& integrator) {
  std::string servo = "gainprm=\"" + Num(kp) + "\" biastype=\"affine\" biasprm=\"0 " +
                      Num(-kp) + " " + Num(-kv) + "\"";
  // each finger starts 1 mm off a face of the box; its target (ctrl 0, the joint's ref) is 1 cm
  // inside
  std::string finger[2] = {"left", "right"};
  std::string out = Header(h, integrator) +
                    "  <worldbody>\n"
                    "    <geom name=\"floor\" type=\"plane\" size=\"1 1 0.1\"/>\n"
                    "    <body name=\"box\" pos=\"0 0 0.04\"><freejoint/>\n"
                    "      <geom type=\"box\" size=\"0.04 0.04 0.04\" mass=\"0.2\"/>\n"
                    "    </body>\n";
  for (int i = 0; i < 2; ++i) {
    std::string x = i ? "0.041" : "-0.041";   // the finger's face, 1 mm off the box's
    std::string center = i ? "0.04" : "-0.04";  // the finger's box, outside its face
    out += "    <body name=\"" + finger[i] + "\" pos=\"" + x + " 0 0.04\">\n"
           "      <joint name=\"" + finger[i] + "\" type=\"slide\" axis=\"" + (i ? "-1" : "1") +
           " 0 0\" armature=\"0.1\" ref=\"-0.011\"/>\n"
           "      <geom type=\"box\" size=\"0.04 0.02 0.02\" pos=\"" + center + " 0 0\" "
           "mass=\"0.1\" contype=\"2\" conaffinity=\"1\"/>\n"
           "      <site name=\"" + finger[i] + "\" type=\"box\" size=\"0.041 0.021 0.021\" pos=\"" +
           center + " 0 0\"/>\n"
           "    </body>\n";
  }
  out += "  </worldbody>\n  <actuator>\n";
  for (int i = 0; i < 2; ++i) out += "    <general joint=\"" + finger[i] + "\" " + servo + "/>\n";
  out += "  </actuator>\n  <sensor>\n";
  for (int i = 0; i < 2; ++i) out += "    <touch site=\"" + finger[i] + "\"/>\n";
  out += "  </sensor>\n</mujoco>\n";
  return out;
}

std::string GripperXml(double kp, double kv, double h, const std::string& integrator,
                       double armature) {
  std::string servo = "gainprm=\"" + Num(kp) + "\" biastype=\"affine\" biasprm=\"0 " +
                      Num(-kp) + " " + Num(-kv) + "\"";
  std::string out = Header(h, integrator) +
                    "  <worldbody>\n"
                    "    <body name=\"object\" pos=\"0 0 0.5\"><freejoint/>\n"
                    "      <geom type=\"box\" size=\"0.04 0.04 0.04\" mass=\"0.2\"/>\n"
                    "    </body>\n";
  const char* finger[2] = {"left", "right"};
  for (int i = 0; i < 2; ++i) {
    std::string x = i ? "0.041" : "-0.041";   // the finger's face, 1 mm off the box's
    std::string center = i ? "0.04" : "-0.04";  // the finger's box, outside its face
    out += std::string("    <body name=\"") + finger[i] + "\" pos=\"" + x + " 0 0.5\">\n"
           "      <joint name=\"" + finger[i] + "\" type=\"slide\" axis=\"" + (i ? "-1" : "1") +
           " 0 0\" armature=\"" + Num(armature) + "\" ref=\"-0.011\"/>\n"
           "      <geom type=\"box\" size=\"0.04 0.02 0.02\" pos=\"" + center + " 0 0\" "
           "mass=\"0.1\"/>\n"
           "    </body>\n";
  }
  out += "  </worldbody>\n  <actuator>\n";
  for (int i = 0; i < 2; ++i) {
    out += std::string("    <general joint=\"") + finger[i] + "\" " + servo + "/>\n";
  }
  return out + "  </actuator>\n</mujoco>\n";
}

std::string BranchedTreeXml(double kp, double kv, double h, const std::string& integrator) {
  std::string out = Header(h, integrator) +
                    "  <option><flag contact=\"disable\"/></option>\n"
                    "  <default>\n"
                    "    <joint armature=\"0.01\"/>\n"
                    "    <geom type=\"capsule\" size=\"0.02\" fromto=\"0 0 0 0.2 0 0\"/>\n"
                    "  </default>\n"
                    "  <worldbody>\n"
                    "    <body><joint name=\"j0\" axis=\"0 1 0\"/><geom/>\n"
                    "      <body pos=\"0.2 0 0\" euler=\"0 0 40\"><joint name=\"j1\" axis=\"0 0 1\"/>"
                    "<geom/></body>\n"
                    "      <body pos=\"0.2 0 0\" euler=\"0 0 -30\"><joint name=\"j2\" axis=\"1 0 0\"/>"
                    "<geom/>\n"
                    "        <body pos=\"0.2 0 0\"><joint name=\"j3\" axis=\"0 1 0\"/><geom/></body>\n"
                    "        <body pos=\"0.2 0 0\" euler=\"0 30 0\"><joint name=\"j4\" axis=\"0 0 1\"/>"
                    "<geom/></body>\n"
                    "      </body>\n"
                    "    </body>\n"
                    "  </worldbody>\n"
                    "  <actuator>\n";
  for (int j = 0; j < 5; ++j) {
    out += "    <general joint=\"j" + std::to_string(j) + "\" gainprm=\"" + Num(kp) +
           "\" biastype=\"affine\" biasprm=\"0 " + Num(-kp) + " " + Num(-kv) + "\"/>\n";
  }
  return out + "  </actuator>\n</mujoco>\n";
}

std::string TwoFingerHandXml(double kp, double kv, double h, const std::string& integrator) {
  std::string out = Header(h, integrator) +
                    "  <default>\n"
                    "    <joint type=\"hinge\" armature=\"1e-4\" damping=\"1e-3\"/>\n"
                    "    <geom contype=\"0\" conaffinity=\"0\"/>\n"
                    "    <default class=\"phalanx\"><geom type=\"capsule\" size=\"0.008\" "
                    "fromto=\"0 0 0 0 0 -0.04\" mass=\"0.02\"/></default>\n"
                    "  </default>\n"
                    "  <worldbody>\n"
                    "    <body name=\"palm\" pos=\"0 0 0.3\">\n"
                    "      <geom type=\"box\" size=\"0.04 0.02 0.01\" mass=\"0.1\"/>\n";
  const char* side[2] = {"left", "right"};
  for (int i = 0; i < 2; ++i) {
    std::string x = i ? "0.03" : "-0.03", axis = i ? "0 1 0" : "0 -1 0";
    out += "      <body name=\"" + std::string(side[i]) + "1\" pos=\"" + x + " 0 -0.01\">\n"
           "        <joint name=\"" + side[i] + "1\" axis=\"" + axis + "\"/>"
           "<geom class=\"phalanx\"/>\n"
           "        <body name=\"" + side[i] + "2\" pos=\"0 0 -0.04\">\n"
           "          <joint name=\"" + side[i] + "2\" axis=\"" + axis + "\"/>"
           "<geom class=\"phalanx\"/>\n"
           "        </body>\n"
           "      </body>\n";
  }
  out += "    </body>\n  </worldbody>\n  <tendon>\n    <fixed name=\"close\">";
  for (int i = 0; i < 2; ++i) {
    out += "<joint joint=\"" + std::string(side[i]) + "1\" coef=\"1\"/><joint joint=\"" +
           side[i] + "2\" coef=\"0.5\"/>";
  }
  out += "</fixed>\n  </tendon>\n  <actuator>\n    <general tendon=\"close\" gainprm=\"" + Num(kp) +
         "\" biastype=\"affine\" biasprm=\"0 " + Num(-kp) + " " + Num(-kv) + "\"/>\n"
         "  </actuator>\n</mujoco>\n";
  return out;
}

std::string MuscleArmXml(double force, double h, const std::string& integrator) {
  std::string out = Header(h, integrator) +
                    "  <compiler angle=\"radian\"/>\n"
                    "  <default>\n"
                    "    <joint type=\"hinge\" axis=\"0 1 0\" limited=\"true\" range=\"-1.5 1.5\""
                    " armature=\"0.01\" damping=\"0.1\"/>\n"
                    "    <geom type=\"capsule\" size=\"0.03\" contype=\"0\" conaffinity=\"0\"/>\n"
                    "    <muscle force=\"" + Num(force) + "\" range=\"0.9 1.5\"/>\n"
                    "  </default>\n"
                    "  <worldbody>\n"
                    "    <body name=\"upper\" pos=\"0 0 1\">\n"
                    "      <joint name=\"shoulder\"/>\n"
                    "      <geom fromto=\"0 0 0 0.3 0 0\" mass=\"1\"/>\n"
                    "      <body name=\"fore\" pos=\"0.3 0 0\">\n"
                    "        <joint name=\"elbow\"/>\n"
                    "        <geom fromto=\"0 0 0 0.25 0 0\" mass=\"0.6\"/>\n"
                    "      </body>\n"
                    "    </body>\n"
                    "  </worldbody>\n"
                    "  <tendon><fixed name=\"biarticular\"><joint joint=\"shoulder\" coef=\"0.03\"/>"
                    "<joint joint=\"elbow\" coef=\"0.03\"/></fixed></tendon>\n"
                    "  <actuator>\n";
  for (const char* joint : {"shoulder", "elbow"}) {
    for (const char* gear : {"0.04", "-0.04"}) {
      out += "    <muscle joint=\"" + std::string(joint) + "\" gear=\"" + gear +
             "\" lengthrange=\"-0.06 0.06\"/>\n";
    }
  }
  for (const char* gear : {"1", "-1"}) {
    out += "    <muscle tendon=\"biarticular\" gear=\"" + std::string(gear) +
           "\" lengthrange=\"-0.09 0.09\"/>\n";
  }
  out += "  </actuator>\n</mujoco>\n";
  return out;
}

std::string LeggedXml(double kp, double kv, double h, const std::string& integrator,
                      double armature, double damping) {
  std::string servo = "gainprm=\"" + Num(kp) + "\" biastype=\"affine\" biasprm=\"0 " +
                      Num(-kp) + " " + Num(-kv) + "\"";
  // drawn standing: thighs 45 degrees forward, shins 45 degrees back, feet 0.212 m below the hips
  // and 0.1 mm above the floor
  std::string out = Header(h, integrator) +
                    "  <default>\n"
                    "    <joint type=\"hinge\" axis=\"0 1 0\" armature=\"" + Num(armature) +
                    "\" damping=\"" + Num(damping) + "\"/>\n"
                    "    <geom type=\"capsule\" size=\"0.02\" mass=\"0.1\"/>\n"
                    "  </default>\n"
                    "  <worldbody>\n"
                    "    <geom name=\"floor\" type=\"plane\" size=\"2 2 0.1\"/>\n"
                    "    <body name=\"torso\" pos=\"0 0 0.2321\"><freejoint/>\n"
                    "      <geom type=\"box\" size=\"0.2 0.1 0.03\" mass=\"1.4\"/>\n";
  const char* leg[4] = {"fl", "fr", "hl", "hr"};
  const char* pos[4] = {"0.18 0.12 0", "0.18 -0.12 0", "-0.18 0.12 0", "-0.18 -0.12 0"};
  for (int i = 0; i < 4; ++i) {
    std::string n = leg[i];
    out += std::string("      <body pos=\"") + pos[i] + "\">\n"
           "        <joint name=\"" + n + "_hip\"/>\n"
           "        <geom fromto=\"0 0 0 0.106066 0 -0.106066\"/>\n"
           "        <body pos=\"0.106066 0 -0.106066\">\n"
           "          <joint name=\"" + n + "_knee\"/>\n"
           "          <geom fromto=\"0 0 0 -0.106066 0 -0.106066\"/>\n"
           "          <site name=\"" + n + "\" type=\"sphere\" size=\"0.03\""
           " pos=\"-0.106066 0 -0.106066\"/>\n"
           "        </body>\n"
           "      </body>\n";
  }
  out += "    </body>\n  </worldbody>\n  <actuator>\n";
  for (int i = 0; i < 4; ++i) {
    for (const char* j : {"_hip", "_knee"}) {
      out += std::string("    <general joint=\"") + leg[i] + j + "\" " + servo + "/>\n";
    }
  }
  out += "  </actuator>\n  <sensor>\n";
  for (int i = 0; i < 4; ++i) out += std::string("    <touch site=\"") + leg[i] + "\"/>\n";
  out += "  </sensor>\n</mujoco>\n";
  return out;
}

namespace {

// two hinges on one chain (a, b) and one on another branch (c), sites for the transmissions
const char kHinge[] =
    "    <body><joint name=\"a\" axis=\"0 1 0\" armature=\"0.01\"/>"
    "<geom type=\"capsule\" fromto=\"0 0 0 .2 0 0\" size=\".02\"/>"
    "<site name=\"s\" pos=\".2 0 0\"/>"
    "      <body pos=\".2 0 0\"><joint name=\"b\" axis=\"0 1 0\" armature=\"0.01\"/>"
    "<geom type=\"capsule\" fromto=\"0 0 0 .2 0 0\" size=\".02\"/>"
    "<site name=\"s2\" pos=\".2 0 0\"/></body></body>\n"
    "    <body pos=\"0 .5 0\"><joint name=\"c\" axis=\"0 1 0\" armature=\"0.01\"/>"
    "<geom type=\"capsule\" fromto=\"0 0 0 .2 0 0\" size=\".02\"/>"
    "<site name=\"s3\" pos=\".2 0 0\"/></body>\n"
    "    <site name=\"w\" pos=\"0 0 .3\"/>\n";

}  // namespace

std::vector<ScopeConfiguration> ScopeConfigurations(double gain, double stiffness) {
  const std::string servo = "gainprm=\"" + Num(gain) + "\" biastype=\"affine\" biasprm=\"0 " +
                            Num(-gain) + " -1\"";
  const std::string spring = "stiffness=\"" + Num(stiffness) + "\"";
  struct Part {
    std::string name, body, elements;
    bool changes;
  };
  const std::vector<Part> parts = {
      {"joint_servo", kHinge, "<actuator><general joint=\"a\" " + servo + "/></actuator>", true},
      {"fixed_tendon_chain", kHinge,
       "<tendon><fixed name=\"t\"><joint joint=\"a\" coef=\"1\"/><joint joint=\"b\" coef=\"1\"/>"
       "</fixed></tendon><actuator><general tendon=\"t\" " + servo + "/></actuator>", true},
      {"fixed_tendon_branches", kHinge,
       "<tendon><fixed name=\"t\"><joint joint=\"a\" coef=\"1\"/><joint joint=\"c\" coef=\"1\"/>"
       "</fixed></tendon><actuator><general tendon=\"t\" " + servo + "/></actuator>", true},
      {"spatial_tendon", kHinge,
       "<tendon><spatial name=\"t\"><site site=\"w\"/><site site=\"s2\"/></spatial></tendon>"
       "<actuator><general tendon=\"t\" " + servo + "/></actuator>", true},
      {"spatial_tendon_branches", kHinge,
       "<tendon><spatial name=\"t\"><site site=\"s2\"/><site site=\"s3\"/></spatial></tendon>"
       "<actuator><general tendon=\"t\" " + servo + "/></actuator>", true},
      {"site_transmission", kHinge,
       "<actuator><general site=\"s\" gear=\"0 0 1 0 0 0\" " + servo + "/></actuator>", false},
      {"site_refsite", kHinge,
       "<actuator><general site=\"s2\" refsite=\"w\" gear=\"0 0 1 0 0 0\" " + servo +
           "/></actuator>", true},
      {"body_transmission",
       std::string(kHinge) + "    <body pos=\"0 0 -1\"><geom type=\"box\" size=\".1 .1 .1\"/>"
                             "</body>\n",
       "<actuator><adhesion body=\"world\" ctrlrange=\"0 1\" gain=\"5\"/></actuator>", false},
      {"ball_joint",
       "    <body><joint name=\"ball\" type=\"ball\" armature=\"0.01\"/>"
       "<geom type=\"capsule\" fromto=\"0 0 0 .2 0 0\" size=\".02\"/></body>\n",
       "<actuator><general joint=\"ball\" gear=\"0 1 0 0 0 0\" " + servo + "/></actuator>", true},
      {"free_joint",
       "    <body><freejoint name=\"free\"/><geom type=\"box\" size=\".1 .1 .1\"/></body>\n",
       "<actuator><general joint=\"free\" gear=\"0 0 1 0 0 0\" " + servo + "/></actuator>", false},
      {"muscle", kHinge,
       "<actuator><muscle joint=\"a\" lengthrange=\"-1 1\"/></actuator>", true},
      {"clamped_forcerange", kHinge,
       "<actuator><general joint=\"a\" forcelimited=\"true\" forcerange=\"-1e-3 1e-3\" " +
           servo + "/></actuator>", false},
      {"non_restoring", kHinge,
       "<actuator><general joint=\"a\" gainprm=\"0\" biastype=\"affine\" biasprm=\"0 50 -1\"/>"
       "</actuator>", false},
      {"motor", kHinge, "<actuator><motor joint=\"a\"/></actuator>", false},
      {"ball_joint_stiffness",
       "    <body><joint name=\"ball\" type=\"ball\" " + spring + " armature=\"0.01\"/>"
       "<geom type=\"capsule\" fromto=\"0 0 0 .2 0 0\" size=\".02\"/></body>\n",
       "", true},
      {"free_joint_stiffness",
       "    <body><joint name=\"free\" type=\"free\" " + spring + " armature=\"0.01\"/>"
       "<geom type=\"capsule\" fromto=\"0 0 0 .2 0 0\" size=\".02\"/></body>\n",
       "", true},
      {"hinge_stiffness",
       "    <body><joint name=\"h\" axis=\"0 1 0\" " + spring + " armature=\"0.01\"/>"
       "<geom type=\"capsule\" fromto=\"0 0 0 .2 0 0\" size=\".02\"/></body>\n",
       "", true},
  };
  std::vector<ScopeConfiguration> out;
  for (const Part& p : parts) {
    out.push_back({p.name,
                   "<mujoco>\n  <option integrator=\"implicit\" timestep=\"0.005\">"
                   "<flag contact=\"disable\"/></option>\n  <worldbody>\n" + p.body +
                       "  </worldbody>\n" + p.elements + "</mujoco>\n",
                   p.changes});
  }
  return out;
}

void HoldPose(const mjModel* m, mjData* d) {
  mj_forward(m, d);
  for (int i = 0; i < m->nu; ++i) d->ctrl[i] = d->actuator_length[i];
}

bool StepStable(const mjModel* m, mjData* d, int n) {
  int warnings = d->warning[mjWARN_BADQPOS].number + d->warning[mjWARN_BADQVEL].number +
                 d->warning[mjWARN_BADQACC].number;
  for (int t = 0; t < n; ++t) {
    mj_step(m, d);
    int now = d->warning[mjWARN_BADQPOS].number + d->warning[mjWARN_BADQVEL].number +
              d->warning[mjWARN_BADQACC].number;
    if (now != warnings) return false;
  }
  for (int i = 0; i < m->nq; ++i) {
    if (!std::isfinite(d->qpos[i])) return false;
  }
  for (int i = 0; i < m->nv; ++i) {
    if (!std::isfinite(d->qvel[i])) return false;
  }
  return true;
}

double PdStepResponse(double inertia, double kp, double kv, double t) {
  double wn = std::sqrt(kp / inertia), zeta = kv / (2 * std::sqrt(kp * inertia));
  if (zeta < 1) {
    double wd = wn * std::sqrt(1 - zeta * zeta);
    return 1 - std::exp(-zeta * wn * t) *
                   (std::cos(wd * t) + zeta / std::sqrt(1 - zeta * zeta) * std::sin(wd * t));
  }
  if (zeta == 1) return 1 - std::exp(-wn * t) * (1 + wn * t);
  double s = wn * std::sqrt(zeta * zeta - 1), r1 = -zeta * wn + s, r2 = -zeta * wn - s;
  return 1 + (r2 * std::exp(r1 * t) - r1 * std::exp(r2 * t)) / (r1 - r2);
}

double RelDiff(const double* a, const double* b, int n) {
  double num = 0, den = 0;
  for (int i = 0; i < n; ++i) {
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return den > 0 ? num / den : num;
}

std::vector<double> FiniteDifferenceK(const mjModel* m, const mjData* start, double eps) {
  int nv = m->nv;
  std::vector<double> k(nv * nv);
  DataPtr d(mj_makeData(m));
  std::vector<mjtNum> dir(nv), plus(nv);
  for (int j = 0; j < nv; ++j) {
    for (int s : {1, -1}) {
      mj_copyData(d.get(), m, start);
      std::fill(dir.begin(), dir.end(), 0);
      dir[j] = s * eps;
      mj_integratePos(m, d->qpos, dir.data(), 1);
      mj_forward(m, d.get());
      for (int i = 0; i < nv; ++i) {
        double f = d->qfrc_actuator[i] + d->qfrc_passive[i];
        if (s > 0) {
          plus[i] = f;
        } else {
          k[i * nv + j] = -(plus[i] - f) / (2 * eps);
        }
      }
    }
  }
  return k;
}

std::vector<double> BackwardEulerVelocity(int nv, double h, const std::vector<double>& mass,
                                          const std::vector<double>& damping,
                                          const std::vector<double>& k_matrix,
                                          const std::vector<double>& k_shift,
                                          const double* force, const double* qvel) {
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Map = Eigen::Map<const Matrix>;
  Eigen::Map<const Eigen::VectorXd> v(qvel, nv), f(force, nv);
  Matrix a = Map(mass.data(), nv, nv) - h * Map(damping.data(), nv, nv) +
             h * h * Map(k_matrix.data(), nv, nv);
  Eigen::VectorXd qacc = a.partialPivLu().solve(f - h * Map(k_shift.data(), nv, nv) * v);
  Eigen::VectorXd next = v + h * qacc;
  return std::vector<double>(next.data(), next.data() + nv);
}

//------------------------------ servos from motors ------------------------------------------------

void MakeServos(mjModel* m, double kp, double kv) {
  for (int i = 0; i < m->nu; ++i) {
    mjtNum* gainprm = m->actuator_gainprm + mjNGAIN * i;
    mjtNum* biasprm = m->actuator_biasprm + mjNBIAS * i;
    for (int k = 0; k < mjNGAIN; ++k) gainprm[k] = 0;
    for (int k = 0; k < mjNBIAS; ++k) biasprm[k] = 0;
    m->actuator_gaintype[i] = mjGAIN_FIXED;
    m->actuator_biastype[i] = mjBIAS_AFFINE;
    gainprm[0] = kp;
    biasprm[1] = -kp;
    biasprm[2] = -kv;
    m->actuator_ctrllimited[i] = 0;
    m->actuator_forcelimited[i] = 0;
  }
}

void MakeServosOfGearOne(mjModel* m, double kp, double kv) {
  MakeServos(m, kp, kv);
  for (int i = 0; i < m->nu; ++i) {
    m->actuator_gear[6 * i] = 1;
    for (int k = 1; k < 6; ++k) m->actuator_gear[6 * i + k] = 0;
  }
}

mjModel* LoadWithServos(const std::string& path, double kp, double kv, std::string* error) {
  char err[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, err, sizeof(err));
  if (!m) {
    if (error) *error = err;
    return nullptr;
  }
  MakeServosOfGearOne(m, kp, kv);
  return m;
}

//------------------------------ numbers -----------------------------------------------------------

double Median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  size_t n = x.size();
  if (n == 0) return NAN;
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

bool BitIdentical(const std::vector<mjtNum>& a, const std::vector<mjtNum>& b) {
  if (a.size() != b.size()) return false;
  return a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(mjtNum)) == 0;
}

//------------------------------ running -----------------------------------------------------------

void OnEveryCore(size_t n, const std::function<void(size_t)>& run) {
  std::atomic<size_t> next{0};
  auto work = [&]() {
    for (size_t i = next++; i < n; i = next++) run(i);
  };
  std::vector<std::thread> pool;
  for (unsigned k = 0; k < std::max(1u, std::thread::hardware_concurrency()); k++) {
    pool.emplace_back(work);
  }
  for (std::thread& t : pool) t.join();
}

}  // namespace mjpos
