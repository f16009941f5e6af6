#!/usr/bin/env bash
# Export the upstream series (patches/upstream/) as one mbox file for `git am`.
#
#   tools/upstream-mbox.sh [OUT]
#       Concatenates the patch files listed in patches/upstream/series, in order, into OUT
#       (default: implicitpos-upstream.mbox in the current directory; "-" for stdout).
#       Each file is a `git format-patch` message, so the concatenation is an mbox.
#
# Apply in a checkout of google-deepmind/mujoco at the base commit named in doc/upstream.md:
#   git am --keep-cr implicitpos-upstream.mbox
#
# Only reads the repository's own patch files: it fetches and builds nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$here/patches/upstream
out=${1:-implicitpos-upstream.mbox}
[ -f "$dir/series" ] || { echo "no $dir/series" >&2; exit 1; }

files=()
while read -r p; do
  case "$p" in ''|'#'*) continue ;; esac
  [ -f "$dir/$p" ] || { echo "missing patch: $p" >&2; exit 1; }
  head -n 1 "$dir/$p" | grep -q '^From ' || { echo "not a format-patch file: $p" >&2; exit 1; }
  files+=("$dir/$p")
done < "$dir/series"
[ ${#files[@]} -gt 0 ] || { echo "empty series" >&2; exit 1; }

if [ "$out" = "-" ]; then
  cat "${files[@]}"
else
  cat "${files[@]}" > "$out"
  echo "wrote ${#files[@]} patches to $out" >&2
fi
