#!/usr/bin/env bash
# Runs the studies: writes doc/stability.md and doc/figures/*.png, and prints the one-dof numbers
# of doc/posweight.md.
#
#   python/study/run.sh [BUILD_DIR]
#
# BUILD_DIR (default: build) is a build of this project with MJPOS_BUILD_PYTHON=ON and the target
# mujoco_python built; the study uses its package `mujoco` (BUILD_DIR/python) and the models of its
# patched tree. Needs python3 with numpy, scipy and matplotlib.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
python=${PYTHON:-/usr/bin/python3}
[ -f "$build/python/mujoco/__init__.py" ] || {
  echo "no Python package in $build/python: build the target mujoco_python first" >&2; exit 1; }
cd "$repo"
PYTHONPATH="$build/python:$repo/python" MUJOCO_GL=disable PYTHONDONTWRITEBYTECODE=1 MPLBACKEND=Agg \
  "$python" python/study/stability.py \
    --doc doc/stability.md --figures doc/figures \
    --model-dir "$build/mujoco-patched/model" \
    --command "python/study/run.sh"
PYTHONPATH="$build/python:$repo/python" MUJOCO_GL=disable PYTHONDONTWRITEBYTECODE=1 MPLBACKEND=Agg \
  "$python" python/study/posweight.py --figures doc/figures
echo "wrote doc/stability.md and doc/figures/"
