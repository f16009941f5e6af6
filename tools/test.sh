#!/usr/bin/env bash
# Every test, from a fresh Debian machine: set-up, then
#  1. a sanitizer build (-fsanitize=address,undefined) of libmujoco, this project's tests
#     (test/ and the servo report's) and upstream's engine tests, all run;
#  2. the release build of everything (patched and stock libmujoco, upstream's 2.2.2 suite, this
#     project's tests, the peer suite, benchmark smoke run, Python bindings and their tests), run
#     by ctest;
#  3. a fixed subset of the mutation gate (tools/mutate.sh --subset=12, build directory build-mut);
#  4. each patch of the 2.2.2 series builds on its own, in order (tools/patches.sh build-each,
#     working copy and build directory under $BUILD_DIR-series);
#  5. the Debian packages: built from Debian's source package mujoco 2.2.2-3 with the series
#     (packaging/build-debs.sh into $BUILD_DIR-debs, Debian's build-time tests and lintian; with
#     the stand-in debian/ where the archive does not serve Debian's), then their install test,
#     binary compatibility with Debian's own stock library included (packaging/install-test.sh).
# Build directories: $BUILD_DIR (default: build) and $BUILD_DIR-asan. Set MJPOS_SKIP_ASAN=1 to
# skip step 1. Extra arguments are passed to the final ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
jobs=$(nproc)

bash tools/setup.sh

# 1. sanitizers
if [ "${MJPOS_SKIP_ASAN:-0}" != 1 ]; then
  asan="$build-asan"
  cmake -S . -B "$asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMJPOS_SANITIZE=ON \
    -DMJPOS_BUILD_STOCK=OFF -DMJPOS_BUILD_PYTHON=OFF -DMJPOS_BUILD_PEER=OFF \
    -DMJPOS_BUILD_UPSTREAM_TESTS=ON >/dev/null
  upstream_engine=$(sed -n 's/^mujoco_test(\(engine_[a-z_]*\))$/\1/p' \
    "$asan/mujoco-patched/test/engine/CMakeLists.txt")
  ours="$(sed -n 's/^ *mjpos_test(\([a-z_]*\).*/\1/p' test/CMakeLists.txt | grep -v bitidentity)
    servo_report_test"
  # shellcheck disable=SC2086
  cmake --build "$asan" -j"$jobs" --target $upstream_engine $ours
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  echo "== sanitizers: this project's tests"
  (cd "$asan" && ctest -L mjpos --output-on-failure -j"$jobs")
  echo "== sanitizers: upstream's engine tests"
  for t in $upstream_engine; do
    (cd "$asan/mujoco-patched/test" && "../../bin/$t" --gtest_brief=1) >"$asan/$t.log" 2>&1 || {
      cat "$asan/$t.log"; echo "sanitizers: $t failed" >&2; exit 1; }
    tail -n 1 "$asan/$t.log"
  done
fi

# 2. everything, release build
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$jobs"
(cd "$build" && ctest --output-on-failure -j"$jobs" "$@")

# 3. a fixed subset of the mutation gate: a dozen single-line breaks of the engine code, each of
#    which some test must catch (doc/mutation.md; its own build directory)
bash tools/mutate.sh --subset=12

# 4. each patch builds on its own, in series order: a git working copy of the pristine tree with
#    one commit per patch, libmujoco built after each in turn (incrementally)
series="$build-series"
rm -rf "$series"
bash tools/patches.sh checkout "$series/wc" "$build/_pristine/mujoco-2.2.2"
bash tools/patches.sh build-each "$series/wc" "$series/build"

# 5. the Debian packages and their install test
MJPOS_DEBIAN_STANDIN=1 bash packaging/build-debs.sh "$build-debs"
bash packaging/install-test.sh "$build-debs" "$build"
