#!/usr/bin/env bash
# Writes a stand-in for Debian's debian/ directory of mujoco 2.2.2-3 into an unpacked 2.2.2 tree,
# for build-debs.sh when Debian's own debian/ (mujoco_2.2.2-3.debian.tar.xz) cannot be downloaded.
# It is NOT Debian's packaging. What Debian publishes outside that tarball is taken from Debian:
#  - debian/control: the source stanza's fields from the signed .dsc (Build-Depends, Maintainer,
#    Standards-Version, ...), each binary stanza's fields and description from Debian's binary
#    packages libmujoco2.2.2, libmujoco-dev and libmujoco-samples 2.2.2-3 (`apt-get download`);
#  - debian/changelog, debian/copyright and the samples' lintian overrides: copied from those
#    binary packages;
#  - debian/libmujoco2.2.2.symbols: generated from Debian's own libmujoco.so.2.2.2 (2.2.2-3), its
#    instances of libstdc++ templates replaced by one optional pattern;
#  - the install layout (file lists, the mujoco-* names of the samples): the binary packages'.
# What is reconstructed: debian/rules (debhelper's cmake build, with the third-party targets taken
# from Debian's -dev packages through debian/system-deps.cmake instead of a patch to upstream's
# CMake files, so the stand-in has no patch of its own) and the .install files.
#
# Usage: packaging/debian-standin.sh SRCDIR DSC
#   SRCDIR: the unpacked orig tarball (gets SRCDIR/debian); DSC: Debian's mujoco_2.2.2-3.dsc.
set -euo pipefail

src=$1
dsc=$2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=2.2.2-3
debs=$(mktemp -d "${TMPDIR:-/tmp}/mujoco-standin.XXXXXX")
trap 'rm -rf "$debs"' EXIT

# 1. Debian's binary packages of the same version (apt checks them against the signed archive).
(cd "$debs" && apt-get download -q "libmujoco2.2.2=$version" "libmujoco-dev=$version" \
  "libmujoco-samples=$version" >/dev/null 2>&1) || {
  echo "debian-standin: apt-get download of Debian's mujoco $version binary packages failed" >&2
  exit 1
}
mkdir -p "$debs/root"
for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$debs/root"; done
deb_of() { ls "$debs/$1"_*.deb; }

rm -rf "$src/debian"
mkdir -p "$src/debian/source" "$src/debian/patches"
cd "$src/debian"
echo "3.0 (quilt)" > source/format
: > patches/series

# 2. changelog and copyright, as Debian ships them.
zcat "$debs/root/usr/share/doc/libmujoco2.2.2/changelog.Debian.gz" > changelog
cp "$debs/root/usr/share/doc/libmujoco2.2.2/copyright" copyright
cp "$debs/root/usr/share/lintian/overrides/libmujoco-samples" libmujoco-samples.lintian-overrides

# 3. control: the source stanza from the .dsc, the binary stanzas from the binary packages.
dsc_field() {  # the value of one field of the signed .dsc (one line)
  sed -n '/^-----BEGIN PGP SIGNATURE/q; p' "$dsc" | sed -n "s/^$1: //p"
}
{
  echo "Source: mujoco"
  for f in Maintainer Uploaders Build-Depends Standards-Version Homepage Vcs-Browser Vcs-Git; do
    echo "$f: $(dsc_field "$f")"
  done
  echo "Priority: $(dpkg-deb -f "$(deb_of libmujoco2.2.2)" Priority)"
  echo "Rules-Requires-Root: no"
  for p in libmujoco2.2.2 libmujoco-dev libmujoco-samples; do
    deb=$(deb_of "$p")
    echo
    echo "Package: $p"
    echo "Architecture: any"
    for f in Multi-Arch Section; do echo "$f: $(dpkg-deb -f "$deb" "$f")"; done
    case $p in
      libmujoco2.2.2) echo 'Depends: ${misc:Depends}, ${shlibs:Depends}' ;;
      libmujoco-dev) echo 'Depends: libmujoco2.2.2 (= ${binary:Version}), ${misc:Depends}' ;;
      *) echo 'Depends: libmujoco2.2.2 (= ${binary:Version}), ${misc:Depends}, ${shlibs:Depends}' ;;
    esac
    dpkg-deb -f "$deb" Description | sed '1s/^/Description: /'
  done
} > control

# 4. symbols: Debian's 2.2.2-3 library's exported symbols, at version 2.2.2-3 (amd64 only, as
#    Debian tracks them; other architectures build without a symbols file).
if [ "$(dpkg --print-architecture)" = amd64 ]; then
  lib=$(find "$debs/root/usr/lib" -name 'libmujoco.so.2.2.2' -type f)
  mkdir -p "$debs/gensym"
  (cd "$debs/gensym" && mkdir -p debian && cp "$src/debian/control" "$src/debian/changelog" debian/ &&
    dpkg-gensymbols -v"$version" -plibmujoco2.2.2 -e"$lib" -O"$src/debian/libmujoco2.2.2.symbols" \
      -q) >/dev/null
  # Versions without the Debian revision. The instances of libstdc++ templates that the library
  # happens to export (std::) come and go with compiler flags, not with the ABI: one optional
  # pattern instead of a list.
  sed -i -e "s/ $version\$/ ${version%-*}/" -e '/^ _Z\(NK\?\)\?St/d' libmujoco2.2.2.symbols
  echo ' (regex|optional)"^_Z(NK?)?St.*@Base$" '"${version%-*}" >> libmujoco2.2.2.symbols
fi

# 5. the third-party targets upstream's CMake would download, from Debian's -dev packages: the
#    project's cmake/debian_deps.cmake, the same mapping its own build uses
cp "$root/cmake/debian_deps.cmake" system-deps.cmake

# 6. rules: upstream's CMake build with debhelper; upstream's test suite runs in dh_auto_test.
#    AVX off: Debian's amd64 baseline has none (Debian's 2.2.2-3 library uses no AVX either).
cat > rules <<'EOF'
#!/usr/bin/make -f
export DEB_BUILD_MAINT_OPTIONS = hardening=+all
# upstream's link options pick lld, which cannot read GCC's LTO objects
export DEB_BUILD_MAINT_OPTIONS += optimize=-lto

%:
	dh $@ --buildsystem=cmake+ninja

override_dh_auto_configure:
	dh_auto_configure -- \
	  -DCMAKE_PROJECT_mujoco_INCLUDE=$(CURDIR)/debian/system-deps.cmake \
	  -DMJPOS_DEBIAN_GLFW=ON \
	  -DMJPOS_DEBIAN_TEST_TARGETS=$(if $(filter nocheck,$(DEB_BUILD_OPTIONS)),OFF,ON) \
	  -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
	  -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF \
	  -DMUJOCO_ENABLE_RPATH=OFF \
	  -DMUJOCO_ENABLE_AVX=OFF \
	  -DMUJOCO_ENABLE_AVX_INTRINSICS=OFF \
	  -DMUJOCO_SIMULATE_USE_SYSTEM_MUJOCO=OFF \
	  -DMUJOCO_SAMPLES_USE_SYSTEM_GLFW=ON \
	  -DMUJOCO_SIMULATE_USE_SYSTEM_GLFW=ON \
	  -DMUJOCO_BUILD_TESTS=$(if $(filter nocheck,$(DEB_BUILD_OPTIONS)),OFF,ON) \
	  -DMUJOCO_TEST_PYTHON_UTIL=$(if $(filter nocheck,$(DEB_BUILD_OPTIONS)),OFF,ON) \
	  -DBUILD_TESTING=$(if $(filter nocheck,$(DEB_BUILD_OPTIONS)),OFF,ON)
EOF
chmod +x rules

# 7. install layout of Debian's binary packages (the samples renamed mujoco-*, with dh-exec).
cat > libmujoco2.2.2.install <<'EOF'
usr/lib/*/libmujoco.so.*
EOF
cat > libmujoco-dev.install <<'EOF'
usr/include/mujoco
usr/lib/*/cmake/mujoco
usr/lib/*/libmujoco.so
EOF
{
  echo '#!/usr/bin/dh-exec'
  for b in "$debs"/root/usr/bin/mujoco-*; do
    b=${b##*/}
    echo "usr/bin/${b#mujoco-} => usr/bin/$b"
  done
  echo 'usr/share/mujoco/model'
} > libmujoco-samples.install
chmod +x libmujoco-samples.install
echo 'sample/*' > libmujoco-samples.examples
echo "debian-standin: wrote $src/debian (a stand-in, not Debian's packaging)"
