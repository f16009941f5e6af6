#!/usr/bin/env bash
# Mutation gate: do this project's tests catch every broken line of the engine code?
#
#   tools/mutate.sh                # full mode: every mutant
#   tools/mutate.sh --subset=12    # CI: 12 fixed mutants spread over the list (a few minutes)
#   tools/mutate.sh --list         # the mutants, with ids; runs nothing
#   tools/mutate.sh --only=ID,ID   # just these
#   tools/mutate.sh --check-equivalent   # also run the mutants listed as equivalent
#
# Single-line mutants (operator swaps, sign flips, constants 0/1/2, dropped statements, break and
# continue, negated conditions, case labels, mjMIN/mjMAX, mjENABLED/mjDISABLED) of the lines
# that patches/series adds to src/engine/*.[ch] (the files it creates and its hooks in stock
# files). Each is applied to the patched tree of the build directory (never to the sources;
# restored after each), libmujoco is rebuilt, and the test binaries run, fail fast. Prints
# "mutants: N, killed: K, equivalent: E, survived: S", then the survivors. Exit status 1 if one
# survived, 2 on a set-up error. Equivalent mutants, with the
# reason, are listed in tools/mutants-equivalent.txt. See doc/mutation.md.
#
# Build directory: $MUTATE_BUILD_DIR (default build-mut), configured here if it is not yet (the
# packages of tools/setup.sh must be installed). Do not share it with a build that others use:
# while the gate runs, its libmujoco is a mutant.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${MUTATE_BUILD_DIR:-build-mut}

# configured here the first time; configured again on every run, so that a test added to the
# sources since (a target the build directory does not know yet) is built and run
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMJPOS_BUILD_STOCK=OFF \
    -DMJPOS_BUILD_PYTHON=OFF -DMJPOS_BUILD_UPSTREAM_TESTS=OFF -DMJPOS_BUILD_PEER=OFF >/dev/null
else
  cmake -S . -B "$build" >/dev/null
fi
exec /usr/bin/python3 tools/mutate.py --build "$build" "$@"
