#!/usr/bin/python3
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
"""Mutation gate for the engine code of mjENBL_IMPLICITPOS (driver: tools/mutate.sh).

Generates single-line mutants, deterministically, over the lines that patches/series adds to
src/engine/*.c (every line of the engine files it creates, and its hooks in stock files), applies
each to the patched tree of a build directory, rebuilds libmujoco, runs this project's test
binaries (fail fast) and classifies it: killed (build or a test fails), survived, or equivalent
(listed in tools/mutants-equivalent.txt). See doc/mutation.md.

  tools/mutate.sh [--build DIR] [--subset=N | --only=ID,...] [--list] [--check-equivalent]

Exit status: 0 if no mutant survived, 1 if some did, 2 on a usage or set-up error (baseline tests
failing, a stale entry in the equivalents file, the tree not matching the sources).
"""

import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINE = os.path.join(ROOT, "src", "engine")  # the real files of the engine code the series creates
EQUIVALENT_FILE = os.path.join(ROOT, "tools", "mutants-equivalent.txt")

# the test binaries run against each mutant, in this order (cheapest and most sensitive first),
# with the working directory gtest_discover_tests gives each; those not built are left out.
# Not run: bitidentity_test (needs the stock sub-build; the flag-off path is stock code) and
# tests not named here (add them here when they are stable).
TEST_ORDER = [
    ("implicitpos_stepforce_test", "test"),
    ("implicitpos_test", "test"),
    ("implicitpos_guard_test", "test"),
    ("implicitpos_k_test", "test"),
    ("implicitpos_muscle_test", "test"),
    ("implicitpos_joints_test", "test"),
    ("implicitpos_rows_test", "test"),
    ("implicitpos_motion_test", "test"),
    ("inverse_discrete_test", "test"),
    ("implicitpos_xml_test", "test"),
    ("implicitpos_scope_test", "test"),
    ("implicitpos_contact_test", "test"),
    ("implicitpos_humanoid_test", "test"),
    ("implicitpos_posweight_test", "test"),
    ("servo_report_test", "servo_report"),
    ("peer_test", "peer"),
    ("property_test", "test"),
]


#------------------------------ C tokenizer -------------------------------------------------------

TYPES = {"int", "mjtNum", "mjModel", "mjData", "char", "double", "float", "void", "mjtByte",
         "size_t", "const", "static", "struct", "mjtIntegrator", "unsigned"}
KEYWORDS = TYPES | {"return", "if", "else", "for", "while", "do", "switch", "case", "default",
                    "break", "continue", "sizeof", "goto"}
OPERATORS = ["<<=", ">>=", "->", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
             "<=", ">=", "==", "!=", "&&", "||", "<<", ">>"]
TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFlLuU]*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<str>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
  | (?P<op>""" + "|".join(re.escape(o) for o in OPERATORS) + r"""|.)
""", re.X)


def tokenize(lines):
  """Per line: list of (kind, text, start, end) of code tokens (comments, strings skipped)."""
  out, in_comment = [], False
  for line in lines:
    toks, i = [], 0
    while i < len(line):
      if in_comment:
        j = line.find("*/", i)
        if j < 0:
          i = len(line)
        else:
          in_comment, i = False, j + 2
        continue
      if line.startswith("/*", i):
        in_comment, i = True, i + 2
        continue
      if line.startswith("//", i):
        break
      mt = TOKEN.match(line, i)
      kind = mt.lastgroup
      if kind != "ws":
        toks.append((kind, mt.group(), mt.start(), mt.end()))
      i = mt.end()
    if line.lstrip().startswith("#"):
      toks = []  # preprocessor
    out.append(toks)
  return out


def is_operand_end(tok):
  """A token after which + - * / are binary."""
  if tok is None:
    return False
  kind, text = tok[0], tok[1]
  return (kind == "num" or (kind == "id" and text not in KEYWORDS) or text in (")", "]"))


#------------------------------ mutation operators ------------------------------------------------

SWAPS = {"+": ["-"], "-": ["+"], "*": ["/"], "/": ["*"], "<": ["<="], "<=": ["<"], ">": [">="],
         ">=": [">"], "==": ["!="], "!=": ["=="], "&&": ["||"], "||": ["&&"], "+=": ["-="],
         "-=": ["+="]}
CONSTANTS = {"0": "1", "1": "0", "2": "1"}
NAME_SWAPS = {"mjMIN": "mjMAX", "mjMAX": "mjMIN", "mjENABLED": "mjDISABLED",
              "mjDISABLED": "mjENABLED"}
NO_DROP = {"mjMARKSTACK"}  # declares the stack mark: dropping it does not compile


def matching_paren(toks, k):
  depth = 0
  for j in range(k, len(toks)):
    if toks[j][1] == "(":
      depth += 1
    elif toks[j][1] == ")":
      depth -= 1
      if depth == 0:
        return j
  return -1


def line_mutants(lines, toks_all, n):
  """Mutants of line n (0-based): list of (operator, mutated line)."""
  line, toks = lines[n], toks_all[n]
  out = []

  def sub(a, b, text):
    return line[:a] + text + line[b:]

  for k, (kind, text, a, b) in enumerate(toks):
    prev = toks[k - 1] if k else None
    if kind == "op" and text in SWAPS:
      if text in ("+", "-", "*", "/") and not is_operand_end(prev):
        if text == "-":  # unary minus: sign flip
          out.append(("sign", sub(a, b, "")))
        continue
      if text == "*" and prev and prev[1] in TYPES:
        continue  # pointer declaration or cast
      for new in SWAPS[text]:
        out.append(("op %s -> %s" % (text, new), sub(a, b, new)))
    elif kind == "op" and text == "!":
      out.append(("drop !", sub(a, b, "")))
    elif kind == "num" and text in CONSTANTS:
      out.append(("const %s -> %s" % (text, CONSTANTS[text]), sub(a, b, CONSTANTS[text])))
    elif kind == "id" and text in NAME_SWAPS:
      out.append(("%s -> %s" % (text, NAME_SWAPS[text]), sub(a, b, NAME_SWAPS[text])))

  if not toks:
    return out
  words = [t[1] for t in toks]
  indent = line[:len(line) - len(line.lstrip())]

  # condition negation: if / else if / while with the condition on this line
  for key in ("if", "while"):
    if key in words:
      k = words.index(key)
      if k + 1 < len(toks) and words[k + 1] == "(":
        j = matching_paren(toks, k + 1)
        if j > 0:
          a, b = toks[k + 1][3], toks[j][2]
          out.append(("negate %s" % key, line[:a] + "!(" + line[a:b] + ")" + line[b:]))

  # dropped statement: a whole expression statement, return, break or continue on this line
  prev_code = next((toks_all[p] for p in range(n - 1, -1, -1) if toks_all[p]), None)
  starts_statement = prev_code is None or prev_code[-1][1] in (";", "{", "}", ":")
  declaration = words[0] in TYPES or (len(words) > 1 and toks[0][0] == "id" and
                                      words[0] not in KEYWORDS and toks[1][0] == "id")
  balanced = words.count("(") == words.count(")")
  if (words[-1] == ";" and starts_statement and not declaration and balanced and
      words[0] not in ("for", "if", "else", "while", "case", "default", "}") and
      words[0] not in NO_DROP):
    next_code = next((p for p in range(n + 1, len(lines)) if toks_all[p]), None)
    last_return = (words[0] == "return" and next_code is not None and
                   lines[next_code].startswith("}"))
    if not last_return:
      out.append(("drop statement", indent + "/* dropped */"))
  elif len(words) == 3 and words[0] == "case" and words[2] == ":":
    out.append(("drop case", indent + "/* dropped */"))
  elif words == ["mjFREESTACK"]:
    out.append(("drop statement", indent + "/* dropped */"))
  return out


#------------------------------ targets -----------------------------------------------------------

def read_tree_file(tree, path):
  """A file of the patched tree as the sources make it: if a run has a mutant applied to it, the
  backup of the original."""
  applied = os.path.join(os.path.dirname(tree), "mutate", "applied.json")
  if os.path.exists(applied):
    with open(applied) as f:
      state = json.load(f)
    if state["path"] == path and os.path.exists(state["backup"]):
      path, tree = state["backup"], ""
  with open(os.path.join(tree, path)) as f:
    return f.read()


def patch_added_lines(tree):
  """{relpath: [0-based line numbers in the patched tree]} of lines the series adds to
  src/engine/*.c, with the patch that adds each."""
  series = os.path.join(ROOT, "patches", "series")
  added = {}
  with open(series) as f:
    names = [s.strip() for s in f if s.strip() and not s.startswith("#")]
  for name in names:
    path, newline = None, 0
    with open(os.path.join(ROOT, "patches", name)) as f:
      for raw in f:
        raw = raw.rstrip("\n")
        if raw.startswith("diff --git "):
          path = None
        elif raw.startswith("+++ "):
          p = raw[4:].split("\t")[0]
          p = p[2:] if p.startswith("b/") else p
          path = p if re.fullmatch(r"src/engine/[^/]+\.[ch]", p) else None
        elif raw.startswith("@@"):
          newline = int(re.match(r"@@ -\d+(?:,\d+)? \+(\d+)", raw).group(1))
        elif path and raw.startswith("+"):
          added.setdefault(path, []).append((newline, raw[1:], name[:4]))
          newline += 1
        elif path and (raw.startswith(" ") or raw == ""):
          newline += 1
  result = {}
  for path, entries in added.items():
    lines = read_tree_file(tree, path).split("\n")
    found, moved = {}, []
    for lineno, text, patch in entries:
      n = lineno - 1
      if 0 <= n < len(lines) and lines[n] == text:
        found[n] = patch
      else:
        moved.append((n, text, patch))
    # a line a later patch moved: the nearest exact match not already found (a line repeated
    # in the file, such as a loop's head, keeps each of its copies)
    for n, text, patch in moved:
      cands = [i for i, l in enumerate(lines) if l == text and i not in found]
      if not cands:
        cands = [i for i, l in enumerate(lines) if l == text]
      if not cands:
        continue  # a later patch replaced it; its own line is a target
      found[min(cands, key=lambda i: abs(i - n))] = patch
    result[path] = found
  return result


FUNCTION = re.compile(r"^[A-Za-z_][\w\s\*]*?\b([A-Za-z_]\w*)\s*\(")


def functions(lines):
  """Per line, the name of the function it is in ("" at file scope): definitions begin, and end
  with "}", in column 0, as in MuJoCo's C."""
  out, name = [], ""
  for line in lines:
    mt = FUNCTION.match(line)
    if mt and not line.rstrip().endswith(";"):
      name = mt.group(1)
    out.append(name)
    if line.startswith("}"):
      name = ""  # file scope again
  return out


def generate(tree):
  """All mutants, in a fixed order: dicts with id, path, line (1-based), function, origin, op,
  orig, mut. The id hashes the file, the function, the original and the mutated line and the
  occurrence of that pair within the function, so it does not change when code moves or when
  other functions change."""
  targets = sorted(patch_added_lines(tree).items())
  mutants = []
  for path, selected in targets:
    lines = read_tree_file(tree, path).split("\n")
    toks = tokenize(lines)
    func = functions(lines)
    seen = {}
    for n in range(len(lines)):
      if selected is not None and n not in selected:
        continue
      for op, mut in line_mutants(lines, toks, n):
        key = (func[n], lines[n].strip(), mut.strip())
        if mut == lines[n] or (n, mut) in seen:
          continue
        seen[(n, mut)] = True
        dup = seen.get(key, 0)
        seen[key] = dup + 1
        digest = hashlib.sha1("\0".join([path, *key, str(dup)]).encode()).hexdigest()
        mutants.append({
            "id": "%s:%s" % (os.path.basename(path), digest[:8]),
            "path": path, "line": n + 1, "function": func[n],
            "origin": "src" if selected is None else "patch " + selected[n],
            "op": op, "orig": lines[n], "mut": mut})
  return mutants


def read_equivalents():
  """{id: reason} from tools/mutants-equivalent.txt: id reason... (tools/mutate.sh --list gives
  each id's current line)"""
  eq = {}
  if not os.path.exists(EQUIVALENT_FILE):
    return eq
  with open(EQUIVALENT_FILE) as f:
    for raw in f:
      line = raw.strip()
      if not line or line.startswith("#"):
        continue
      parts = line.split(None, 1)
      if len(parts) < 2:
        sys.exit("mutate: %s: malformed line: %s" % (EQUIVALENT_FILE, line))
      eq[parts[0]] = parts[1]
  return eq


def subset(items, k):
  """k items spread evenly over the list, always the same ones."""
  n = len(items)
  if k >= n:
    return list(items)
  return [items[(2 * i + 1) * n // (2 * k)] for i in range(k)]


#------------------------------ running -----------------------------------------------------------

def log(msg):
  print(msg, file=sys.stderr, flush=True)


class Runner:

  def __init__(self, build, jobs, timeout_factor):
    self.build, self.tree = build, os.path.join(build, "mujoco-patched")
    self.work = os.path.join(build, "mutate")
    self.jobs, self.timeout_factor = jobs, timeout_factor
    self.applied = os.path.join(self.work, "applied.json")
    os.makedirs(os.path.join(self.work, "log"), exist_ok=True)
    self.lock = open(os.path.join(self.work, "lock"), "w")
    try:
      fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
      sys.exit("mutate: another run is using %s" % build)
    self.recover()

  def recover(self):
    """Restores a file left mutated by an interrupted run."""
    if os.path.exists(self.applied):
      with open(self.applied) as f:
        state = json.load(f)
      shutil.copyfile(state["backup"], os.path.join(self.tree, state["path"]))
      os.remove(self.applied)
      log("mutate: restored %s from an interrupted run" % state["path"])

  def tests(self):
    """The entries of TEST_ORDER that this build defines."""
    registered = set(re.findall(r"^\s*mjpos_test\((\w+)",
                                open(os.path.join(ROOT, "test", "CMakeLists.txt")).read(), re.M))
    registered |= {"servo_report_test"}
    if os.path.exists(os.path.join(self.build, "bin", "peer_test")):
      registered.add("peer_test")  # built only with -DMJPOS_BUILD_PEER=ON
    return [(n, d) for n, d in TEST_ORDER if n in registered]

  def cmake_build(self, targets):
    cmd = ["cmake", "--build", self.build, "-j", str(self.jobs), "--target"] + targets
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

  def changed_sources(self):
    """The files of src/engine/ that differ from the tree's."""
    changed = []
    for name in sorted(os.listdir(ENGINE)):
      path = os.path.join("src", "engine", name)
      with open(os.path.join(ROOT, path)) as a, open(os.path.join(self.tree, path)) as b:
        if a.read() != b.read():
          changed.append(path)
    return changed

  def prepare(self):
    """Builds libmujoco and the tests unmutated, checks the tree, runs the baseline."""
    self.test_list = self.tests()
    r = self.cmake_build(["mujoco"] + [n for n, _ in self.test_list])
    if r.returncode:
      log(r.stdout[-4000:])
      sys.exit("mutate: the unmutated build fails")
    changed = self.changed_sources()
    if changed:
      sys.exit("mutate: %s of the tree differs from the sources" % changed[0])
    self.baseline = {}
    for name, d in self.test_list:
      t0 = time.time()
      ok, out = self.run_test(name, d, 3600)
      if not ok:
        log(out[-4000:])
        sys.exit("mutate: %s fails without a mutant" % name)
      self.baseline[name] = time.time() - t0
    log("mutate: baseline passes: " +
        ", ".join("%s %.1fs" % (n, self.baseline[n]) for n, _ in self.test_list))

  def run_test(self, name, d, timeout):
    cmd = [os.path.join(self.build, "bin", name), "--gtest_brief=1", "--gtest_fail_fast"]
    try:
      r = subprocess.run(cmd, cwd=os.path.join(ROOT, d), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired as e:
      out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
      return False, out + "\n[timeout after %.0f s]" % timeout
    return r.returncode == 0, r.stdout

  def apply(self, mutant, text):
    path = os.path.join(self.tree, mutant["path"])
    with open(path, "w") as f:
      f.write(text)

  def run(self, mutant):
    """'killed' or 'survived', and a detail (what killed it)."""
    path = os.path.join(self.tree, mutant["path"])
    with open(path) as f:
      original = f.read()
    lines = original.split("\n")
    assert lines[mutant["line"] - 1] == mutant["orig"], mutant
    lines[mutant["line"] - 1] = mutant["mut"]
    mutated = "\n".join(lines)
    backup = os.path.join(self.work, "backup")
    shutil.copyfile(path, backup)
    with open(self.applied, "w") as f:
      json.dump({"path": mutant["path"], "backup": backup}, f)
    logfile = os.path.join(self.work, "log", mutant["id"].replace(":", "_") + ".log")
    try:
      for _ in range(2):  # a re-configure (configure_file of src/) may restore the overlay
        self.apply(mutant, mutated)
        r = self.cmake_build(["mujoco"])
        with open(path) as f:
          if f.read() == mutated:
            break
      else:
        sys.exit("mutate: the build keeps overwriting %s" % mutant["path"])
      if r.returncode:
        with open(logfile, "w") as f:
          f.write(r.stdout)
        return "killed", "build"
      for name, d in self.test_list:
        timeout = max(30.0, self.timeout_factor * self.baseline[name])
        ok, out = self.run_test(name, d, timeout)
        if not ok:
          with open(logfile, "w") as f:
            f.write(out)
          return "killed", name
      return "survived", ""
    finally:
      with open(path, "w") as f:
        f.write(original)
      os.remove(self.applied)

  def finish(self):
    r = self.cmake_build(["mujoco"])
    if r.returncode:
      log(r.stdout[-4000:])
      sys.exit("mutate: the restored build fails")
    changed = self.changed_sources()
    if changed:
      log("mutate: warning: %s changed during the run; results are for the old one" % changed[0])


#------------------------------ main --------------------------------------------------------------

def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  ap.add_argument("--build", default=os.path.join(ROOT, "build-mut"))
  ap.add_argument("--subset", type=int, default=0,
                  help="run N mutants spread evenly over the non-equivalent ones")
  ap.add_argument("--only", help="comma-separated mutant ids")
  ap.add_argument("--list", action="store_true", help="list the mutants, run nothing")
  ap.add_argument("--check-equivalent", action="store_true",
                  help="also run the listed equivalents; a killed one is an error")
  ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
  ap.add_argument("--timeout-factor", type=float, default=10.0,
                  help="a test times out after this many times its baseline (at least 30 s)")
  args = ap.parse_args()

  build = os.path.abspath(args.build)
  tree = os.path.join(build, "mujoco-patched")
  if not os.path.isdir(tree):
    print("mutate: %s has no patched tree; configure it first" % build, file=sys.stderr)
    return 2
  # a run builds first, so that the mutants are made from the tree as the sources make it now
  runner = None if args.list else Runner(build, args.jobs, args.timeout_factor)
  if runner:
    runner.prepare()
  mutants = generate(tree)
  equivalents = read_equivalents()
  ids = {m["id"] for m in mutants}
  stale = sorted(set(equivalents) - ids)
  if stale:
    print("mutate: %s lists mutants that no longer exist: %s" %
          (EQUIVALENT_FILE, ", ".join(stale)), file=sys.stderr)
    return 2

  if args.list:
    for m in mutants:
      tag = "  [equivalent]" if m["id"] in equivalents else ""
      print("%s  %s:%d %s() (%s)  %s%s\n    - %s\n    + %s" %
            (m["id"], m["path"], m["line"], m["function"], m["origin"], m["op"], tag,
             m["orig"].strip(), m["mut"].strip()))
    print("%d mutants, %d listed equivalent" % (len(mutants), len(equivalents)))
    return 0

  if args.only is not None:
    wanted = set(x for x in args.only.split(",") if x)
    if not wanted:
      print("mutate: --only needs at least one mutant id", file=sys.stderr)
      return 2
    unknown = wanted - ids
    if unknown:
      print("mutate: unknown mutant ids: %s" % ", ".join(sorted(unknown)), file=sys.stderr)
      return 2
    selected = [m for m in mutants if m["id"] in wanted]
  elif args.subset:
    selected = subset([m for m in mutants if m["id"] not in equivalents], args.subset)
  else:
    selected = mutants

  counts = {"killed": 0, "equivalent": 0, "survived": 0}
  survivors, wrong_equivalents, killers = [], [], {}
  t0 = time.time()
  try:
    for i, m in enumerate(selected):
      where = "%s:%d" % (m["path"], m["line"])
      if m["id"] in equivalents and not args.check_equivalent:
        counts["equivalent"] += 1
        log("[%3d/%d] equivalent  %-22s %s  %s" % (i + 1, len(selected), m["id"], where,
                                                   m["mut"].strip()))
        continue
      status, detail = runner.run(m)
      if m["id"] in equivalents:
        counts["equivalent"] += 1
        if status == "killed":
          wrong_equivalents.append((m, detail))
      else:
        counts[status] += 1
        if status == "killed":
          killers[detail] = killers.get(detail, 0) + 1
        if status == "survived":
          survivors.append(m)
      log("[%3d/%d] %-10s  %-22s %s  %s  (%s)" % (i + 1, len(selected), status, m["id"], where,
                                                  m["mut"].strip(), detail or "all tests pass"))
  finally:
    runner.finish()
  log("mutate: %.0f s" % (time.time() - t0))

  if killers:
    print("killed by: " + ", ".join("%s %d" % kv for kv in sorted(killers.items())))
  print("mutants: %d, killed: %d, equivalent: %d, survived: %d" %
        (len(selected), counts["killed"], counts["equivalent"], counts["survived"]))
  for m in survivors:
    print("survived: %s  %s:%d: %s" % (m["id"], m["path"], m["line"], m["mut"].strip()))
  for m, detail in wrong_equivalents:
    print("listed equivalent but killed by %s: %s  %s:%d: %s" %
          (detail, m["id"], m["path"], m["line"], m["mut"].strip()))
  return 1 if survivors or wrong_equivalents else 0


if __name__ == "__main__":
  try:
    sys.exit(main())
  except KeyboardInterrupt:
    print("mutate: interrupted; the tree is restored", file=sys.stderr)
    sys.exit(130)
