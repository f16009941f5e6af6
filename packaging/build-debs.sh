#!/usr/bin/env bash
# Builds Debian binary packages of MuJoCo 2.2.2 with this project's patch series, from Debian's own
# source package mujoco 2.2.2-3, as root or with sudo:
#  1. set-up: tools/setup.sh (deb-src entry), Debian's packaging tools, the package's build
#     dependencies (`apt-get build-dep mujoco=2.2.2-3`);
#  2. downloads the source package (`apt-get source --download-only`), checks the orig tarball's
#     sha256 against the one the project pins, unpacks it with dpkg-source (which checks every
#     file against the .dsc, which apt authenticated through the archive's signed index);
#  3. applies Debian's patches, then adds the project's patches to debian/patches after them, in
#     patches/series order, each pushed with quilt (a patch that applies only with fuzz is rebased
#     by `quilt refresh`); patches for parts Debian does not build, or that Debian already has,
#     are left out with the reason printed (packaging/README.md);
#  4. adds the series' new exported functions to Debian's symbols file, and a changelog entry
#     2.2.2-3+implicitpos1;
#  5. dpkg-buildpackage -b -us -uc, Debian's build-time tests included (fails if they did not run);
#  6. lintian on the result (fails on errors);
#  7. copies the .debs, the .changes, .buildinfo, build log and lintian report to OUTDIR.
#
# Usage: packaging/build-debs.sh [OUTDIR]        (default OUTDIR: build-debs in the repository)
# Environment:
#   MJPOS_DEBIAN_TARBALL=FILE  Debian's mujoco_2.2.2-3.debian.tar.xz, for an archive that does not
#                              serve it; checked against the .dsc like a downloaded one.
#   MJPOS_DEBIAN_STANDIN=1     when the archive does not serve that file and none is given, build
#                              with packaging/debian-standin.sh's stand-in debian/ instead (not
#                              Debian's packaging; the changelog entry says so).
#   JOBS (default: nproc), SKIP_SETUP=1, KEEP_WORK=1 (keep the temporary build tree),
#   DEBFULLNAME / DEBEMAIL (the changelog entry's author).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/build-debs}
mkdir -p "$out"
out=$(cd "$out" && pwd)
jobs=${JOBS:-$(nproc)}
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

upstream=2.2.2
debver=2.2.2-3
newver=2.2.2-3+implicitpos1
orig=mujoco_${upstream}.orig.tar.gz
orig_sha256=$(sed -n 's/^set(MJPOS_ORIG_SHA256 \([0-9a-f]*\))$/\1/p' "$root/CMakeLists.txt")
[ -n "$orig_sha256" ] || { echo "build-debs: no MJPOS_ORIG_SHA256 in CMakeLists.txt" >&2; exit 1; }
export DEBFULLNAME=${DEBFULLNAME:-MuJoCo implicitpos}
export DEBEMAIL=${DEBEMAIL:-implicitpos@example.org}

# 1. set-up
if [ "${SKIP_SETUP:-0}" != 1 ]; then
  bash "$root/tools/setup.sh"
  tools=(dpkg-dev debhelper dh-exec quilt lintian fakeroot)
  missing=()
  for p in "${tools[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "build-debs: installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
      "${missing[@]}" >/dev/null
  fi
  echo "build-debs: build dependencies of mujoco=$debver"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get build-dep -y -q "mujoco=$debver" >/dev/null
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/mujoco-debs.XXXXXX")
if [ "${KEEP_WORK:-0}" = 1 ]; then
  echo "build-debs: work tree $work (kept)"
else
  trap 'rm -rf "$work"' EXIT
fi
chmod 755 "$work"   # apt's download user writes here
cd "$work"

# 2. the source package: .dsc, orig tarball, Debian's debian/ tarball
echo "build-debs: apt-get source --download-only mujoco=$debver"
standin=0
if ! apt-get source -q --download-only "mujoco=$debver" >apt-source.log 2>&1; then
  [ -f "mujoco_$debver.dsc" ] && [ -f "$orig" ] || { cat apt-source.log >&2; exit 1; }
fi
echo "$orig_sha256  $orig" | sha256sum -c --quiet - || {
  echo "build-debs: $orig does not have the pinned sha256 $orig_sha256" >&2; exit 1; }
debtar=mujoco_$debver.debian.tar.xz
if [ ! -f "$debtar" ]; then
  if [ -n "${MJPOS_DEBIAN_TARBALL:-}" ]; then
    cp "$MJPOS_DEBIAN_TARBALL" "$debtar"
  elif [ "${MJPOS_DEBIAN_STANDIN:-0}" = 1 ]; then
    standin=1
  else
    grep -E '^(E|W):' apt-source.log >&2 || true
    cat >&2 <<EOF
build-debs: the archive did not serve $debtar (Debian's debian/ directory).
  Give it with MJPOS_DEBIAN_TARBALL=FILE (checked against the .dsc), or build with a stand-in
  debian/ directory (not Debian's packaging) with MJPOS_DEBIAN_STANDIN=1.
EOF
    exit 1
  fi
fi
if [ "$standin" = 0 ]; then
  # checks the orig and debian tarballs against the .dsc's checksums
  dpkg-source -x "mujoco_$debver.dsc" src >dpkg-source.log 2>&1 || {
    cat dpkg-source.log >&2; exit 1; }
else
  echo "build-debs: $debtar unavailable: stand-in debian/ (packaging/debian-standin.sh)"
  mkdir src
  tar -xzf "$orig" -C src --strip-components=1
  bash "$root/packaging/debian-standin.sh" "$work/src" "$work/mujoco_$debver.dsc"
fi
cd src

# 3. Debian's patches, then the project's on top
export QUILT_PATCHES=debian/patches QUILT_PC=.pc
export QUILT_REFRESH_ARGS="-p ab --no-timestamps --no-index"
[ -f debian/patches/series ] || { mkdir -p debian/patches; : > debian/patches/series; }
if [ -s debian/patches/series ] && ! quilt applied >/dev/null 2>&1; then
  quilt push -a -q >/dev/null
fi
echo "build-debs: Debian's patches: $(grep -cvE '^\s*(#|$)' debian/patches/series || true)"
# Whether Debian's packaging builds MuJoCo's Python bindings at all (a python3-* binary package,
# or pybind11 among the build dependencies).
debian_python=0
if grep -qE '^Package: python3-' debian/control || grep -q pybind11 debian/control; then
  debian_python=1
fi
added=()
skipped=()
while read -r p; do
  case $p in ''|'#'*) continue ;; esac
  patch_file=$root/patches/$p
  reason=""
  # a patch of the Python bindings' build alone (every file it touches under python/)
  if ! grep '^diff --git a/' "$patch_file" | awk '{print $3}' | grep -qv '^a/python/'; then
    [ "$debian_python" = 1 ] || reason="Debian's source does not build the Python bindings"
  fi
  case $p in
    0001-*)
      # upstream's test fixture against an abseil whose string_view is its own class
      if patch -p1 -R --dry-run -s -f -i "$patch_file" >/dev/null 2>&1; then
        reason="Debian's patches already make the same change"
      fi
      ;;
  esac
  if [ -n "$reason" ]; then
    skipped+=("$p: $reason")
    continue
  fi
  dest=implicitpos/$p
  mkdir -p debian/patches/implicitpos
  cp "$patch_file" "debian/patches/$dest"
  echo "$dest" >> debian/patches/series
  if ! quilt push -q >quilt.log 2>&1; then
    # rebase: apply with fuzz (a failed push applied nothing), then let quilt rewrite the patch
    # against Debian's tree
    if quilt push -q --fuzz=3 >quilt.log 2>&1; then
      quilt refresh >/dev/null
      echo "build-debs: $p rebased onto Debian's patches (quilt refresh)"
    else
      cat quilt.log >&2
      echo "build-debs: $p does not apply on top of Debian's patches" >&2
      exit 1
    fi
  fi
  rm -f quilt.log
  added+=("$p")
done < "$root/patches/series"
printf 'build-debs: added  %s\n' "${added[@]}"
for s in "${skipped[@]}"; do echo "build-debs: left out $s"; done

# 4. symbols and changelog. The series' new exported functions (MJAPI in the headers it adds
#    or changes) join Debian's symbols file at the new version (with `~`, so that the package
#    itself satisfies it), so that dpkg-gensymbols checks the library's exports exactly: a lost
#    stock symbol still fails the build, and programs using a new one depend on this version.
#    A function a later patch stops exporting (its MJAPI line removed, not re-added in that
#    patch) leaves the list again.
declare -A exported=()
for p in "${added[@]}"; do
  plus=$(sed -n 's/^+MJAPI [^(]*[ *]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' "$root/patches/$p")
  minus=$(sed -n 's/^-MJAPI [^(]*[ *]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' "$root/patches/$p")
  for s in $minus; do
    grep -qx "$s" <<<"$plus" || unset "exported[$s]"
  done
  for s in $plus; do
    exported[$s]=1
  done
done
newsyms=$(printf '%s\n' "${!exported[@]}" | grep -v '^$' | sort -u)
for f in debian/libmujoco2.2.2.symbols*; do
  [ -f "$f" ] || continue
  for s in $newsyms; do
    grep -qE "^ (\([^)]*\))?$s@" "$f" || echo " $s@Base $newver~" >> "$f"
  done
done
{
  echo "mujoco ($newver) bookworm; urgency=medium"
  echo
  echo "  * Add the implicitpos patch series (mjENBL_IMPLICITPOS: implicit"
  echo "    integration in position for stiff position servos), in"
  echo "    debian/patches/implicitpos/:"
  for p in "${added[@]}"; do echo "    - ${p%.patch}"; done
  for s in "${skipped[@]}"; do
    p=${s%%: *}
    echo "  * Not added: ${p%.patch}"
    echo "    (${s#*: })."
  done
  if [ "$newsyms" ]; then
    echo "  * Symbols: add the series' new exported functions."
  fi
  if [ "$standin" = 1 ]; then
    echo "  * Built with a stand-in debian/ directory (the implicitpos project's"
    echo "    packaging/debian-standin.sh), not Debian's: the archive did not serve"
    echo "    $debtar."
  fi
  echo
  echo " -- $DEBFULLNAME <$DEBEMAIL>  $(date -R)"
  echo
  cat debian/changelog
} > debian/changelog.new
mv debian/changelog.new debian/changelog
sed -n '1,/^ -- /p' debian/changelog

# 5. build, Debian's build-time tests included
export DEB_BUILD_OPTIONS="parallel=$jobs"
unset DEB_BUILD_PROFILES
echo "build-debs: dpkg-buildpackage -b -us -uc (log: build.log)"
start=$(date +%s)
if ! dpkg-buildpackage -b -us -uc >"$work/build.log" 2>&1; then
  tail -n 60 "$work/build.log" >&2
  echo "build-debs: dpkg-buildpackage failed (log above)" >&2
  cp "$work/build.log" "$out/build.log"
  exit 1
fi
elapsed=$(( $(date +%s) - start ))
tests=$(grep -E '^[0-9]+% tests passed' "$work/build.log" | tail -n 1 || true)
if [ -z "$tests" ]; then
  echo "build-debs: the build ran no test (no ctest summary in build.log)" >&2
  exit 1
fi
echo "build-debs: built in ${elapsed}s; Debian's build-time tests: $tests"
grep -E 'dpkg-gensymbols: warning' "$work/build.log" || true

# 6. lintian
changes=$(ls "$work"/mujoco_"$newver"_*.changes)
lintian --display-info "$changes" >"$work/lintian.txt" 2>&1 || true
echo "build-debs: lintian (E error, W warning, I info):"
sed 's/^/  /' "$work/lintian.txt"
if grep -q '^E: ' "$work/lintian.txt"; then
  echo "build-debs: lintian reports errors" >&2
  exit 1
fi

# 7. results
rm -f "$out"/*.deb
cp "$work"/*_"$newver"_*.deb "$changes" "$work"/mujoco_"$newver"_*.buildinfo \
  "$work/build.log" "$work/lintian.txt" "$out/"
echo "build-debs: $out:"
(cd "$out" && ls -1 ./*.deb | sed 's|^\./|  |')
