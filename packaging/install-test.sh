#!/usr/bin/env bash
# Install test of the packages build-debs.sh makes, without installing anything on the machine:
#  1. extracts every .deb of DEBDIR into a temporary root (dpkg-deb -x);
#  2. compiles the README's C example (one hinge, `<flag implicitpos="enable"/>`, a position servo
#     at kp 1e5, far above stock implicit's cap at 2 ms) against the extracted headers and library,
#     once with the compiler directly and once through the packaged CMake config
#     (find_package(mujoco)), runs it: stable, finite and on target with the flag; the same model
#     with the flag cleared at run time must diverge as stock does (the check can fail);
#  3. runs the extracted mujoco-testspeed and mujoco-testxml on that model;
#  4. binary compatibility with stock 2.2.2 (test/abi/compat_check.sh): the packaged library and
#     headers against the stock ones, with the programs a build of this project made against the
#     stock headers (BUILD_DIR, default build: run tools/test.sh or tools/bench.sh first);
#  5. Python: Debian's source builds no Python bindings, so there is nothing to run (said so).
# Installs what it needs (compiler, CMake) with apt-get, with sudo when not root.
#
# Usage: packaging/install-test.sh DEBDIR [BUILD_DIR]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
debdir=$(cd "${1:?usage: install-test.sh DEBDIR}" && pwd)
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
need=()
for p in gcc libc6-dev cmake make; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}" \
    >/dev/null
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mujoco-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

# 1. extract
sysroot=$tmp/root
mkdir -p "$sysroot"
shopt -s nullglob
debs=("$debdir"/*.deb)
[ "${#debs[@]}" -gt 0 ] || { echo "install-test: no .deb in $debdir" >&2; exit 1; }
for d in "${debs[@]}"; do
  echo "install-test: $(dpkg-deb -f "$d" Package) $(dpkg-deb -f "$d" Version)"
  dpkg-deb -x "$d" "$sysroot"
done
libdir=$(dirname "$(find "$sysroot/usr/lib" -name 'libmujoco.so.*' -type f | head -n 1)")
incdir=$sysroot/usr/include
[ -f "$incdir/mujoco/mujoco.h" ] || { echo "install-test: no mujoco.h in libmujoco-dev" >&2; exit 1; }
soname=$(objdump -p "$libdir/libmujoco.so.2.2.2" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = libmujoco.so.2.2.2 ] || { echo "install-test: soname $soname" >&2; exit 1; }
grep -q 'mjENBL_IMPLICITPOS' "$incdir/mujoco/mjmodel.h" || {
  echo "install-test: the packaged headers lack mjENBL_IMPLICITPOS" >&2; exit 1; }
export LD_LIBRARY_PATH=$libdir

# 2. the README's C example: the MJCF flag, then the C lines
cat > "$tmp/hinge.xml" <<'EOF'
<mujoco>
  <option timestep="0.002" integrator="implicit">
    <flag implicitpos="enable"/>
  </option>
  <worldbody>
    <body>
      <joint name="j" type="hinge" armature="0.01576"/>
      <geom size="0.01" mass="1e-9"/>
    </body>
  </worldbody>
  <actuator>
    <position joint="j" kp="1e5"/>
  </actuator>
</mujoco>
EOF
cat > "$tmp/example.c" <<'EOF'
// One hinge with a stiff position servo (kp 1e5: h^2 kp = 0.4 > 4I = 0.063, beyond stock
// implicit's cap), loaded from MJCF with <flag implicitpos="enable"/>.
#include <math.h>
#include <stdio.h>
#include <mujoco/mujoco.h>

// steps 1 s toward ctrl = 1; returns 0 if the final state is finite, on target and unwarned
static int run(const mjModel* m, mjData* d, const char* label) {
  mj_resetData(m, d);
  d->ctrl[0] = 1.0;
  for (int i = 0; i < 500; i++) mj_step(m, d);
  int finite = isfinite(d->qpos[0]) && isfinite(d->qvel[0]);
  int warned = d->warning[mjWARN_BADQACC].number;
  printf("%-25s qpos %-12.6g qvel %-12.3g bad-qacc warnings %d\n", label, d->qpos[0],
         d->qvel[0], warned);
  return (finite && !warned && fabs(d->qpos[0] - 1.0) < 1e-3) ? 0 : 1;
}

int main(int argc, char** argv) {
  char err[1000] = "";
  mjModel* m = mj_loadXML(argc > 1 ? argv[1] : "hinge.xml", NULL, err, sizeof(err));
  if (!m) { printf("load error: %s\n", err); return 2; }
  mjData* d = mj_makeData(m);
  printf("MuJoCo %d; %s from the MJCF: %s\n", mj_version(), mjENABLESTRING[5],
         (m->opt.enableflags & mjENBL_IMPLICITPOS) ? "on" : "off");
  if (!(m->opt.enableflags & mjENBL_IMPLICITPOS)) return 1;
  int on = run(m, d, "implicitpos on (MJCF):");

  // the README's C lines
  m->opt.integrator = mjINT_IMPLICIT;
  m->opt.enableflags |= mjENBL_IMPLICITPOS;
  on |= run(m, d, "implicitpos on (C):");
  m->opt.enableflags &= ~mjENBL_IMPLICITPOS;
  int off = run(m, d, "implicitpos off (stock):");
  mj_deleteData(d);
  mj_deleteModel(m);
  if (on) { printf("FAIL: not stable with the flag\n"); return 1; }
  if (!off) { printf("FAIL: stock did not diverge, so the check could not fail\n"); return 1; }
  printf("OK: stable, finite and on target with the flag; stock diverges\n");
  return 0;
}
EOF
echo "install-test: cc example.c against the extracted libmujoco-dev"
cc -std=c11 -O2 -Wall -Werror -I"$incdir" "$tmp/example.c" -o "$tmp/example" \
  -L"$libdir" -lmujoco -lm
lib_used=$(ldd "$tmp/example" | awk '$1 == "libmujoco.so.2.2.2" {print $3}')
[ "$lib_used" = "$libdir/libmujoco.so.2.2.2" ] || {
  echo "install-test: example loads $lib_used, not the extracted library" >&2; exit 1; }
(cd "$tmp" && ./example hinge.xml)

echo "install-test: the same through the packaged CMake config (find_package(mujoco))"
mkdir -p "$tmp/cmake-example"
cat > "$tmp/cmake-example/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(example C)
find_package(mujoco 2.2.2 REQUIRED)
add_executable(example ../example.c)
target_link_libraries(example mujoco::mujoco m)
EOF
cmake -S "$tmp/cmake-example" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$sysroot/usr" >/dev/null
cmake --build "$tmp/cmake-build" >/dev/null
(cd "$tmp" && ./cmake-build/example hinge.xml | tail -n 1)

# 3. the packaged samples against the packaged library
echo "install-test: mujoco-testxml, mujoco-testspeed on the one-hinge model"
(cd "$tmp" && "$sysroot/usr/bin/mujoco-testxml" hinge.xml | grep "Max difference")
(cd "$tmp" && "$sysroot/usr/bin/mujoco-testspeed" hinge.xml 2000 1 0 |
  grep -E 'Simulation time|Steps per second')

# 4. binary compatibility with stock 2.2.2: the packaged library and headers
build=${2:-$root/build}
if [ -x "$build/stock/bin/mjpos_abi_probe" ]; then
  # against Debian's own stock library where installed (built with Debian's flags, as the
  # packages are), else the build's stock library
  stock=$(dirname "$(ls /usr/lib/*/libmujoco.so.2.2.2 2>/dev/null | head -n 1)" 2>/dev/null)
  [ -f "$stock/libmujoco.so.2.2.2" ] || stock=$build/stock/lib
  echo "install-test: test/abi/compat_check.sh $build $libdir $incdir $stock"
  bash "$root/test/abi/compat_check.sh" "$build" "$libdir" "$incdir" "$stock"
else
  echo "install-test: no build with the stock programs in $build: binary compatibility not checked" >&2
  exit 1
fi

# 5. Python
echo "install-test: Python example not run: Debian's mujoco source builds no Python bindings" \
  "(binary packages: $(for d in "${debs[@]}"; do dpkg-deb -f "$d" Package; done | tr '\n' ' '))"
echo "install-test: OK in $(( $(date +%s) - start ))s"
