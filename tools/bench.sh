#!/usr/bin/env bash
# Runs the benchmark suite of mjENBL_IMPLICITPOS from a fresh Debian machine:
#   1. tools/setup.sh (Debian packages, deb-src entry, upstream's MuJoCo 4.0 and MuJoCo Warp in
#      <build>/peer-venv; uses sudo when not root),
#   2. configures the build directory (a new one with the project's defaults; an existing one as
#      it is) and builds only the benchmark driver `mjpos_bench` and what it needs,
#   3. runs the suite: cost of the flag (instructions per step: the driver runs itself under
#      valgrind's callgrind, profiles in <build>/callgrind/; then times: Google Benchmark,
#      interleaved off/on), throughput at equal stiffness, stack sizing; prints progress (a line
#      per phase and per model) and the tables, and writes the tables to
#      <build>/benchmark-results.md. Google Benchmark's raw output, a line per run, goes to
#      <build>/benchmark-raw.log (--raw_log), which the tables name.
#
# Usage: tools/bench.sh [BUILD_DIR] [mjpos_bench flags...]
#   BUILD_DIR defaults to `build` (relative to the repository root). Extra flags go to the driver,
#   e.g. --repetitions=20, --zeta=0.5, --benchmark_min_time=0.5, --callgrind=humanoid,humanoid100
#   or --callgrind=none (see benchmark/mjpos_bench.cc).
#   Environment: CMAKE_ARGS (extra arguments for a new configure), JOBS (default: nproc),
#   SKIP_SETUP=1 (skip tools/setup.sh on a machine that is already set up).
#   4. runs the side-by-side table against upstream's official 4.0 build (peer/): conformance,
#      largest stable gains, accuracy, what a step reports, scope, native cost (instructions
#      and wall clock), contact, violent motion, MuJoCo Warp on the CPU; writes
#      <build>/peer-results.md;
#   5. runs the real-robot table (real/: dm_control's and Gymnasium's models made servos under
#      random targets; stock, the flag, the weighted mode, 4.0's discrete; then held in contact
#      against converged references); writes <build>/real-results.md.
# About 5 to 10 minutes on 2 cores from scratch for the build, plus part 7's references (about
# 11 minutes), part 8 (about 11 minutes), the peer table (about 20 minutes: its native cost,
# contact and motion sections about 6, 6 and 2, MuJoCo Warp 2 with its kernels compiled) and
# the real-robot table (about 3 minutes, and 1 for its contact table).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=build
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  build=$1
  shift
fi
case "$build" in
  /*) ;;
  *) build="$root/$build" ;;
esac
jobs=${JOBS:-$(nproc)}

if [ "${SKIP_SETUP:-0}" != 1 ]; then
  BUILD_DIR="$build" WARP=1 "$root/tools/setup.sh"
fi

if [ -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" >/dev/null
else
  # shellcheck disable=SC2086
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
fi
cmake --build "$build" -j "$jobs" --target mjpos_bench mjpos_peer_table mjpos_real_table

"$build/bin/mjpos_bench" --benchmark_min_time=0.2 --out="$build/benchmark-results.md" \
  --raw_log="$build/benchmark-raw.log" "$@"

# 4. side by side with upstream's 4.0 build and MuJoCo Warp (peer/, doc/peer.md): to the
#    terminal and a file
"$build/bin/mjpos_peer_table" --out="$build/peer-results.md"

# 5. real robots: dm_control's and Gymnasium's models made servos, stock, the flag, the weighted
#    mode and 4.0's discrete under random targets (real/README.md)
"$build/bin/mjpos_real_table" --out="$build/real-results.md"
