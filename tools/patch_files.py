#!/usr/bin/env python3
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
"""The files a patch series creates, against the real files they are made from.

  tools/patch_files.py check SERIES_DIR TREE
      Exit 1 if a file that a patch of SERIES_DIR/series creates ("new file mode") differs
      from TREE/<its path>, or is missing there, or is modified again by a later patch.
  tools/patch_files.py extract SERIES_DIR TREE
      Write those files into TREE (to start the real files from an existing series).
  tools/patch_files.py check-applied SERIES_DIR PRISTINE ROOT DIR
      For a series whose files are created by one patch and changed by later ones (the 2.2.2
      series): apply every patch in order (patch -p1) to a scratch copy of the files of PRISTINE
      it touches, and exit 1 if a patch does not apply, or if a file ROOT/DIR/... is not the
      series' final version of DIR/... (e.g. ROOT the project, DIR src).

The series is made by git format-patch (tools/patches.sh); this script only reads it. A patch's
new file is its "+" lines, with "\\ No newline at end of file" dropping the last newline.
"""

import os
import shutil
import subprocess
import sys
import tempfile


def series(series_dir):
  with open(os.path.join(series_dir, "series")) as f:
    names = [l.strip() for l in f if l.strip() and not l.startswith("#")]
  return [os.path.join(series_dir, n) for n in names]


def sections(text):
  """(path, is_new, body lines) for each file of a git patch."""
  out, cur = [], None
  for line in text.split("\n"):
    if line.startswith("diff --git a/"):
      path = line.split(" b/", 1)[1]
      cur = [path, False, []]
      out.append(cur)
    elif cur is not None:
      if line.startswith("new file mode"):
        cur[1] = True
      cur[2].append(line)
  return out


def new_file_content(body):
  """The content of a new file from its section's lines."""
  lines, hunk = [], False
  for line in body:
    if line.startswith("@@ -0,0 "):
      hunk = True
    elif hunk and line.startswith("+"):
      lines.append(line[1:] + "\n")
    elif hunk and line.startswith("\\ No newline at end of file"):
      lines[-1] = lines[-1][:-1]
    elif hunk:
      break  # end of the hunk (the patch's trailer or the next section)
  return "".join(lines)


def created(series_dir):
  """{path: (patch, content)} of the files the series creates; raises if one is modified later."""
  files = {}
  for patch in series(series_dir):
    with open(patch) as f:
      text = f.read()
    for path, is_new, body in sections(text):
      if is_new:
        files[path] = (os.path.basename(patch), new_file_content(body))
      elif path in files:
        raise ValueError("%s modifies %s, which %s creates: keep a created file in one patch"
                         % (os.path.basename(patch), path, files[path][0]))
  return files


def check_applied(series_dir, pristine, root, subdir):
  """check-applied: 0 if the series applies and makes every file of root/subdir, else 1."""
  patches = series(series_dir)
  touched = set()
  for patch in patches:
    with open(patch) as f:
      touched.update(path for path, _, _ in sections(f.read()))
  with tempfile.TemporaryDirectory() as scratch:
    for path in touched:
      if os.path.exists(os.path.join(pristine, path)):
        os.makedirs(os.path.dirname(os.path.join(scratch, path)), exist_ok=True)
        shutil.copy(os.path.join(pristine, path), os.path.join(scratch, path))
    for patch in patches:
      r = subprocess.run(["patch", "-p1", "--forward", "--quiet", "-i", os.path.abspath(patch)],
                         cwd=scratch, capture_output=True, text=True)
      if r.returncode != 0:
        print("%s does not apply in order:\n%s" % (os.path.basename(patch), r.stdout + r.stderr))
        return 1
    bad, n = 0, 0
    for top, _, names in os.walk(os.path.join(root, subdir)):
      for name in sorted(names):
        real = os.path.join(top, name)
        path = os.path.relpath(real, root)
        made = os.path.join(scratch, path)
        n += 1
        if path not in touched or not os.path.exists(made):
          print("MISSING  %s: no patch of the series makes it" % path)
          bad += 1
          continue
        with open(real, "rb") as f, open(made, "rb") as g:
          same = f.read() == g.read()
        print("%s %s" % ("ok      " if same else "DIFFERS ", path))
        bad += not same
  if bad:
    print("%d of %d real files differ from what the series makes: regenerate the series "
          "(tools/patches.sh checkout, sync, export)" % (bad, n))
  return 1 if bad else 0


def main(argv):
  if len(argv) == 6 and argv[1] == "check-applied":
    try:
      return check_applied(*argv[2:])
    except OSError as e:
      print("patch_files: %s" % e, file=sys.stderr)
      return 2
  if len(argv) != 4 or argv[1] not in ("check", "extract"):
    print(__doc__, file=sys.stderr)
    return 2
  mode, series_dir, tree = argv[1:]
  try:
    files = created(series_dir)
  except (OSError, ValueError) as e:
    print("patch_files: %s" % e, file=sys.stderr)
    return 2
  bad = 0
  for path, (patch, content) in sorted(files.items()):
    real = os.path.join(tree, path)
    if mode == "extract":
      os.makedirs(os.path.dirname(real), exist_ok=True)
      with open(real, "w") as f:
        f.write(content)
      print("wrote %s (from %s)" % (real, patch))
      continue
    if not os.path.exists(real):
      print("MISSING  %s: created by %s, no real file" % (real, patch))
      bad += 1
    else:
      with open(real) as f:
        same = f.read() == content
      print("%s %s (%s)" % ("ok      " if same else "DIFFERS ", path, patch))
      bad += not same
  if mode == "check" and bad:
    print("%d of %d created files differ from their real files: regenerate the series "
          "(tools/patches.sh, doc/upstream.md)" % (bad, len(files)))
  return 1 if bad else 0


if __name__ == "__main__":
  sys.exit(main(sys.argv))
