#!/usr/bin/env bash
# Binary compatibility of the patched libmujoco with stock MuJoCo 2.2.2, as a program built
# against the stock headers sees it:
#  1. layout: every field of mjModel, mjData, mjOption, mjContact, mjVisual and mjStatistic that
#     the stock headers declare has the same offset in the patched headers, and no struct shrinks
#     (mjpos_abi_offsets, built against each header set);
#  2. behaviour: mjpos_abi_probe, built against the stock headers, prints the same with the stock
#     and with the patched library (LD_LIBRARY_PATH), on every model of the source's model/;
#  3. model files: an .mjb saved by either library loads in the other, with the same output;
#  4. where Debian's stock-built mujoco-testspeed is installed (package libmujoco-samples): it
#     reports the same contacts, constraints and dofs with the patched library as with its own,
#     and runs a model with implicitpos enabled in its XML stably at a gain where stock diverges.
#
# Usage: test/abi/compat_check.sh BUILD_DIR [PATCHED_LIBDIR [PATCHED_INCLUDEDIR [STOCK_LIBDIR]]]
#   BUILD_DIR: a build of this project with the stock sub-build (BUILD_DIR/stock: the stock
#   library and the programs built against the stock headers) and the pristine source.
#   PATCHED_LIBDIR (default BUILD_DIR/lib) and PATCHED_INCLUDEDIR (default: BUILD_DIR's own
#   mjpos_abi_offsets) select another patched library and headers, e.g. those of the packages;
#   STOCK_LIBDIR (default BUILD_DIR/stock/lib) the stock library built the same way, e.g. Debian's
#   own (the comparison is bit for bit: both libraries must come from the same compiler flags).
# Exit status 0 if all hold; 1 with the differences otherwise.
set -euo pipefail
build=$(cd "$1" && pwd)
patched_lib=${2:-$build/lib}
patched_inc=${3:-}
stock_lib=${4:-$build/stock/lib}
probe=$build/stock/bin/mjpos_abi_probe
models=$build/_pristine/mujoco-2.2.2/model
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# 1. layout
"$build/stock/bin/mjpos_abi_offsets" > "$tmp/stock.offsets"
if [ -n "$patched_inc" ]; then
  cc -std=c11 -I "$patched_inc" "$here/abi_offsets.c" -o "$tmp/offsets"
  "$tmp/offsets" > "$tmp/patched.offsets"
else
  "$build/bin/mjpos_abi_offsets" > "$tmp/patched.offsets"
fi
while read -r name value; do
  if [ "$name" = sizeof ]; then
    struct=${value% *}; size=${value#* }
    new=$(awk -v s="$struct" '$1 == "sizeof" && $2 == s {print $3}' "$tmp/patched.offsets")
    if [ -z "$new" ] || [ "$new" -lt "$size" ]; then
      echo "layout: sizeof $struct is ${new:-missing} in the patched headers, $size in stock's"
      fail=1
    fi
  elif ! grep -qx "$name $value" "$tmp/patched.offsets"; then
    echo "layout: $name is at $value in stock's headers," \
         "$(awk -v n="$name" '$1 == n {print $2}' "$tmp/patched.offsets" | sed 's/^$/missing/') in the patched"
    fail=1
  fi
done < <(awk '$1 == "sizeof" {print $1, $2 " " $3; next} {print}' "$tmp/stock.offsets")
echo "layout: $(grep -vc '^sizeof' "$tmp/stock.offsets") stock fields and 6 sizes checked"

# 2. behaviour, 3. model files
n=0
for xml in "$models"/*/*.xml; do
  name=$(basename "$xml" .xml)
  LD_LIBRARY_PATH=$stock_lib "$probe" "$xml" --save-mjb "$tmp/$name.stock.mjb" > "$tmp/$name.stock" 2>&1 || true
  LD_LIBRARY_PATH=$patched_lib "$probe" "$xml" --save-mjb "$tmp/$name.patched.mjb" > "$tmp/$name.patched" 2>&1 || true
  if ! cmp -s "$tmp/$name.stock" "$tmp/$name.patched"; then
    echo "behaviour: $xml differs:"; diff "$tmp/$name.stock" "$tmp/$name.patched" | head -20 || true
    fail=1
  fi
  if [ -s "$tmp/$name.stock.mjb" ]; then
    LD_LIBRARY_PATH=$patched_lib "$probe" "$tmp/$name.stock.mjb" > "$tmp/$name.cross1" 2>&1 || true
    LD_LIBRARY_PATH=$stock_lib "$probe" "$tmp/$name.patched.mjb" > "$tmp/$name.cross2" 2>&1 || true
    for cross in cross1 cross2; do
      if ! cmp -s "$tmp/$name.stock" "$tmp/$name.$cross"; then
        echo "model file: $name ($cross) differs from the run from MJCF:"
        diff "$tmp/$name.stock" "$tmp/$name.$cross" | head -10 || true
        fail=1
      fi
    done
  fi
  n=$((n + 1))
done
echo "behaviour and model files: $n models"

# 4. Debian's stock-built mujoco-testspeed
if command -v mujoco-testspeed > /dev/null; then
  ts=$(command -v mujoco-testspeed)
  for xml in "$models"/humanoid/humanoid.xml "$models"/humanoid100/humanoid100.xml \
             "$models"/slider_crank/slider_crank.xml; do
    [ -f "$xml" ] || continue
    # the deterministic lines: contacts, constraints and dofs per step (not the timing)
    LD_LIBRARY_PATH=$stock_lib "$ts" "$xml" 300 1 0.01 2>&1 |
      grep -E 'Contacts|Constraints|Degrees|Running' > "$tmp/ts.stock"
    LD_LIBRARY_PATH=$patched_lib "$ts" "$xml" 300 1 0.01 2>&1 |
      grep -E 'Contacts|Constraints|Degrees|Running' > "$tmp/ts.patched"
    if [ ! -s "$tmp/ts.stock" ] || ! cmp -s "$tmp/ts.stock" "$tmp/ts.patched"; then
      echo "testspeed: $xml differs:"; diff "$tmp/ts.stock" "$tmp/ts.patched" || true
      fail=1
    fi
  done
  # a stiff servo, implicitpos enabled in the XML: stock cannot read it; with the patched library
  # the stock-built binary runs it stably (no warning); the same gain without the flag diverges
  servo() {
    cat <<XML
<mujoco>
  <option timestep="0.005" integrator="implicit"><flag implicitpos="$1"/></option>
  <worldbody><body><joint name="j" axis="0 1 0" armature="0.01"/>
    <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.5"/></body></worldbody>
  <actuator><position joint="j" kp="100000"/></actuator>
</mujoco>
XML
  }
  servo enable > "$tmp/servo.xml"
  servo disable > "$tmp/servo-off.xml"
  if LD_LIBRARY_PATH=$stock_lib "$ts" "$tmp/servo.xml" 1000 1 0.5 > "$tmp/ts.flag.stock" 2>&1 &&
     ! grep -q 'Error' "$tmp/ts.flag.stock"; then
    echo "testspeed: the stock library read implicitpos (it should not know the flag)"; fail=1
  fi
  LD_LIBRARY_PATH=$patched_lib "$ts" "$tmp/servo.xml" 1000 1 0.5 > "$tmp/ts.flag" 2>&1 || true
  LD_LIBRARY_PATH=$patched_lib "$ts" "$tmp/servo-off.xml" 1000 1 0.5 > "$tmp/ts.off" 2>&1 || true
  if ! grep -q 'Degrees of freedom' "$tmp/ts.flag" || grep -qi 'warning' "$tmp/ts.flag"; then
    echo "testspeed: implicitpos did not run stably:"; cat "$tmp/ts.flag"; fail=1
  fi
  if ! grep -qi 'warning' "$tmp/ts.off"; then
    echo "testspeed: the same gain without the flag did not diverge (the check is vacuous)"; fail=1
  fi
  echo "testspeed: $ts with the patched library"
else
  echo "testspeed: mujoco-testspeed not installed (package libmujoco-samples), skipped"
fi

[ "$fail" = 0 ] && echo "compat_check: stock 2.2.2's layout and behaviour kept"
exit "$fail"
