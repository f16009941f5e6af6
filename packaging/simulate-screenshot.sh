#!/usr/bin/env bash
# Screenshots of the packaged, patched `mujoco-simulate` with a stiff-servo arm, under Xvfb:
#  1. installs Xvfb, xwd, ImageMagick, xdotool, Mesa's software OpenGL and the runtime libraries
#     the packages depend on (apt-get, sudo when not root); extracts DEBDIR's .debs into a
#     temporary root (dpkg-deb -x: nothing is installed from them);
#  2. writes the model: a three-link arm on a post, position servos at kp 1e5 on every hinge
#     (2.4 to 30 times stock implicit's stability cap at its 2 ms timestep), each joint's `ref`
#     70/-60/-45 degrees away from the servo targets, so that the arm must swing up to them;
#     implicit integrator with <flag implicitpos="enable"/>; the stock copy lacks that one line;
#  3. for each copy: runs mujoco-simulate on it (LD_LIBRARY_PATH: the extracted library) in a
#     fresh directory, closes the File/Option/Simulation sections and opens Physics (whose Enable
#     Flags list mjENABLESTRING: ImplicitPos, InvDiscrete, PosWeight), the Joint panel and the
#     info overlay (F2: simulated time), waits, takes a screenshot (xwd), and checks it:
#       implicitpos: the process is alive and MuJoCo logged no warning (stdout, MUJOCO_LOG.TXT);
#       stock: MuJoCo logged the bad-acceleration warning (it diverged and reset), as stock does;
#  4. writes OUTDIR/simulate-implicitpos.png and OUTDIR/simulate-stock.png, downscaled to a
#     256-colour palette (small enough to commit).
#
# Usage: packaging/simulate-screenshot.sh DEBDIR OUTDIR     (environment: WAIT seconds, def. 20)
set -euo pipefail

debdir=$(cd "${1:?usage: simulate-screenshot.sh DEBDIR OUTDIR}" && pwd)
mkdir -p "${2:?usage: simulate-screenshot.sh DEBDIR OUTDIR}"
out=$(cd "$2" && pwd)
wait_s=${WAIT:-20}
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# 1. tools, runtime libraries, the extracted packages
shopt -s nullglob
debs=("$debdir"/libmujoco2.2.2_*.deb "$debdir"/libmujoco-samples_*.deb)
[ "${#debs[@]}" = 2 ] || { echo "simulate-screenshot: no libmujoco2.2.2/-samples .deb in $debdir" >&2; exit 1; }
runtime=$(for d in "${debs[@]}"; do dpkg-deb -f "$d" Depends; done | tr ',' '\n' |
  sed 's/(.*)//; s/|.*//; s/ //g' | grep -v '^libmujoco' | sort -u)
need=()
for p in xvfb x11-apps imagemagick xdotool libgl1-mesa-dri $runtime; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
  echo "simulate-screenshot: installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}" \
    >/dev/null
fi
# Debian's ImageMagick 6 (its own name, whatever else `convert` may be on PATH)
convert=$(command -v convert-im6.q16 || command -v convert)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mujoco-simulate.XXXXXX")
xvfb_pid=""
sim_pid=""
cleanup() {
  [ -z "$sim_pid" ] || kill "$sim_pid" 2>/dev/null || true
  [ -z "$xvfb_pid" ] || kill "$xvfb_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
for d in "${debs[@]}"; do dpkg-deb -x "$d" "$tmp/root"; done
libdir=$(dirname "$(find "$tmp/root/usr/lib" -name 'libmujoco.so.*' -type f | head -n 1)")
simulate=$tmp/root/usr/bin/mujoco-simulate

# 2. the model, with the flag and (stock) without
mkdir -p "$tmp/implicitpos" "$tmp/stock"
cat > "$tmp/implicitpos/arm.xml" <<'EOF'
<mujoco model="stiff servo arm">
  <option timestep="0.002" integrator="implicit">
    <flag implicitpos="enable"/>
  </option>
  <statistic center="0.45 0 0.95" extent="1.9"/>
  <visual>
    <global azimuth="90" elevation="-10"/>
  </visual>
  <default>
    <joint type="hinge" axis="0 1 0" damping="0.1"/>
    <geom type="capsule" size="0.04" rgba="0.85 0.5 0.2 1"/>
    <position kp="1e5"/>
  </default>
  <asset>
    <texture name="grid" type="2d" builtin="checker" rgb1=".2 .3 .4" rgb2=".1 .2 .3"
             width="512" height="512"/>
    <material name="grid" texture="grid" texrepeat="4 4"/>
  </asset>
  <worldbody>
    <light pos="0 -2 3" dir="0 0.5 -1"/>
    <geom name="floor" type="plane" size="2 2 0.1" material="grid"/>
    <geom name="post" type="cylinder" fromto="0 0 0 0 0 1" size="0.05" rgba=".5 .5 .5 1"/>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" ref="70"/>
      <geom fromto="0 0 0 0.5 0 0" mass="2"/>
      <body name="fore" pos="0.5 0 0">
        <joint name="elbow" ref="-60"/>
        <geom fromto="0 0 0 0.4 0 0" mass="1"/>
        <body name="hand" pos="0.4 0 0">
          <joint name="wrist" ref="-45"/>
          <geom fromto="0 0 0 0.2 0 0" size="0.03" mass="0.5"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <position name="shoulder" joint="shoulder"/>
    <position name="elbow" joint="elbow"/>
    <position name="wrist" joint="wrist"/>
  </actuator>
</mujoco>
EOF
grep -v 'implicitpos="enable"' "$tmp/implicitpos/arm.xml" > "$tmp/stock/arm.xml"

# 3. Xvfb (a free display number), then simulate on each copy
Xvfb -displayfd 3 -screen 0 1920x2160x24 +extension GLX -nolisten tcp 3>"$tmp/display" \
  >"$tmp/xvfb.log" 2>&1 &
xvfb_pid=$!
for _ in $(seq 50); do [ -s "$tmp/display" ] && break; sleep 0.2; done
[ -s "$tmp/display" ] || { cat "$tmp/xvfb.log" >&2; echo "simulate-screenshot: no Xvfb" >&2; exit 1; }
export DISPLAY=:$(cat "$tmp/display")

shoot() {  # shoot VARIANT: run simulate on VARIANT/arm.xml, screenshot into VARIANT.png
  local v=$1 win=""
  (cd "$tmp/$v" && LD_LIBRARY_PATH=$libdir exec stdbuf -oL "$simulate" arm.xml >stdout.txt 2>&1) &
  sim_pid=$!
  for _ in $(seq 120); do
    win=$(xdotool search --name '^Simulate$' 2>/dev/null | head -n 1 || true)
    [ -n "$win" ] && break
    sleep 0.5
  done
  [ -n "$win" ] || { cat "$tmp/$v/stdout.txt" >&2; echo "simulate-screenshot: no window" >&2; exit 1; }
  sleep 5   # loading the model
  # sections: close File, Option, Simulation; open Physics; Joint panel; info overlay
  for k in alt+f alt+o alt+s alt+p alt+j F2; do
    xdotool key --window "$win" "$k"
    sleep 0.5
  done
  sleep "$wait_s"
  xwd -id "$win" -silent > "$tmp/$v.xwd"
  alive=1
  kill -0 "$sim_pid" 2>/dev/null || alive=0
  kill "$sim_pid" 2>/dev/null || true
  wait "$sim_pid" 2>/dev/null || true
  sim_pid=""
  "$convert" "$tmp/$v.xwd" -resize 75% -colors 256 "PNG8:$out/simulate-$v.png"
  warnings=$(cat "$tmp/$v/stdout.txt" "$tmp/$v/MUJOCO_LOG.TXT" 2>/dev/null |
    grep -ciE 'unstable|nan|warning' || true)
  echo "simulate-screenshot: $v: alive $alive, warning lines $warnings," \
    "$(du -k "$out/simulate-$v.png" | cut -f1) KiB"
  grep -m 2 -iE 'unstable|nan|warning' "$tmp/$v/stdout.txt" "$tmp/$v/MUJOCO_LOG.TXT" \
    2>/dev/null | sed 's/^/  /' || true
}

shoot implicitpos
[ "$alive" = 1 ] && [ "$warnings" = 0 ] || {
  echo "simulate-screenshot: with implicitpos the simulation is not running clean" >&2; exit 1; }
shoot stock
[ "$warnings" -gt 0 ] || {
  echo "simulate-screenshot: stock logged no instability: the model is not above its cap" >&2
  exit 1; }
echo "simulate-screenshot: $out/simulate-implicitpos.png, $out/simulate-stock.png"
