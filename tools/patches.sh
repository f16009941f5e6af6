#!/usr/bin/env bash
# Work on the patch series as git commits, and regenerate patches/ from them.
#
#   tools/patches.sh checkout DIR [PRISTINE]
#       Makes DIR a git working copy: the pristine MuJoCo 2.2.2 tree as the first commit (tag
#       `pristine`), then one commit per entry of patches/series (git am).
#       PRISTINE defaults to build/_pristine/mujoco-2.2.2 (made by the first cmake configure).
#   tools/patches.sh sync DIR
#       Copies the real files of src/ (the files the 2.2.2 series creates, e.g. the engine's
#       engine_derivative_pos.{c,h}, in their final form) into DIR, each into the last commit of
#       pristine..HEAD that touches it (fixup commits, then git rebase --autosquash). A change that
#       belongs to an earlier patch is moved there by hand (git rebase -i), keeping each patch
#       buildable. `tools/patch_files.py check-applied` (a ctest) fails while they differ.
#   tools/patches.sh build-each DIR BUILD
#       Builds libmujoco of DIR at every commit of pristine..HEAD in turn, in the build directory
#       BUILD (this project's build as its stock variant, on DIR in place: each step recompiles
#       only what the patch changed), and reports the first patch that does not build.
#   tools/patches.sh export DIR
#       Rewrites patches/ and patches/series from the commits pristine..HEAD of DIR
#       (git format-patch; stable output: no commit hashes, no signature).
#   tools/patches.sh export-upstream DIR BASE [TIP]
#       Rewrites patches/upstream/ and its series from the commits BASE..TIP (default HEAD) of
#       DIR, a checkout of upstream MuJoCo with the series applied on BASE (git format-patch with
#       a base-commit trailer). Only runs git in DIR; it fetches and builds nothing.
#   tools/patches.sh sync-upstream DIR BASE
#       Copies the real files of upstream/ (the files the 3.12 series creates, at their paths in
#       the upstream tree) into DIR, each into the commit of BASE..HEAD that creates it (fixup
#       commits, then git rebase --autosquash); export-upstream then rewrites the patches.
#       `tools/patch_files.py check patches/upstream upstream` (a ctest) fails while they differ.
#
# Edit the commits in DIR with ordinary git (commit --amend, rebase -i), then export.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { sed -n '2,31p' "$0"; exit 2; }

# sync_into REAL PREFIX BASE last|creator (in the working copy, the current directory): copies
# each file REAL/<f> that differs from PREFIX<f> into the commit of BASE..HEAD that last touches
# PREFIX<f> (last) or creates it (creator), as fixup commits squashed by git rebase --autosquash;
# sets n to the number of files synced
sync_into() {
  local real=$1 prefix=$2 base=$3 pick=$4 f c i todo=()
  local id=(-c user.name=sync -c user.email=sync@localhost)
  git diff --quiet && git diff --cached --quiet || { echo "$PWD has uncommitted changes" >&2; exit 1; }
  # first find every file's commit, then commit: a file without one changes nothing
  while read -r f; do
    cmp -s "$real/$f" "$prefix$f" && continue
    if [ "$pick" = last ]; then
      c=$(git log -1 --format=%H "$base..HEAD" -- "$prefix$f")
    else
      c=$(git log --diff-filter=A --format=%H "$base..HEAD" -- "$prefix$f" | tail -n 1)
    fi
    [ -n "$c" ] || { echo "$prefix$f: no commit of $base..HEAD to sync it into" >&2; exit 1; }
    todo+=("$f" "$c")
  done < <(cd "$real" && find . -type f | sed 's#^\./##' | sort)
  n=0
  for ((i = 0; i < ${#todo[@]}; i += 2)); do
    cp "$real/${todo[i]}" "$prefix${todo[i]}"
    git add "$prefix${todo[i]}"
    git "${id[@]}" commit -q --fixup="${todo[i+1]}"
    n=$((n + 1))
  done
  # squash the fixups (also any left by an interrupted run)
  if [ "$n" -gt 0 ] || git log --format=%s "$base..HEAD" | grep -q '^fixup! '; then
    GIT_SEQUENCE_EDITOR=: git "${id[@]}" rebase -q -i --autosquash "$base"
  fi
}

case "$cmd" in
  checkout)
    pristine=${3:-$here/build/_pristine/mujoco-2.2.2}
    [ -f "$pristine/CMakeLists.txt" ] || { echo "no MuJoCo tree at $pristine" >&2; exit 1; }
    [ ! -e "$dir" ] || { echo "$dir exists" >&2; exit 1; }
    mkdir -p "$dir"
    cp -a "$pristine/." "$dir/"
    rm -f "$dir"/.unpacked-*
    cd "$dir"
    git init -q
    git add -A
    git -c user.name=pristine -c user.email=pristine@localhost commit -q -m "MuJoCo 2.2.2 (Debian orig tarball)"
    git tag pristine
    while read -r p; do
      case "$p" in ''|'#'*) continue ;; esac
      git -c user.name=series -c user.email=series@localhost am -q --keep-cr "$here/patches/$p"
    done < "$here/patches/series"
    echo "checked out $(git rev-list --count pristine..HEAD) patches into $dir"
    ;;
  sync)
    cd "$dir"
    git rev-parse -q --verify pristine >/dev/null || { echo "$dir: no 'pristine' tag" >&2; exit 1; }
    sync_into "$here/src" src/ pristine last
    echo "synced $n file(s) of src/ into $dir; now: tools/patches.sh export $dir"
    ;;
  build-each)
    build=${3:?build-each needs BUILD}
    mkdir -p "$build"
    dir=$(cd "$dir" && pwd); build=$(cd "$build" && pwd)
    cd "$dir"
    git rev-parse -q --verify pristine >/dev/null || { echo "$dir: no 'pristine' tag" >&2; exit 1; }
    git diff --quiet && git diff --cached --quiet || { echo "$dir has uncommitted changes" >&2; exit 1; }
    head=$(git symbolic-ref -q --short HEAD || git rev-parse HEAD)
    trap 'git -C "$dir" checkout -q "$head"' EXIT
    n=0
    for c in $(git rev-list --reverse pristine..HEAD); do
      n=$((n + 1))
      git checkout -q "$c"
      [ -f "$build/CMakeCache.txt" ] || cmake -S "$here" -B "$build" -DMJPOS_VARIANT=stock \
        -DMUJOCO_SOURCE_DIR="$dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
      if ! cmake --build "$build" -j "$(nproc)" --target mujoco >"$build/build-each.log" 2>&1; then
        tail -n 30 "$build/build-each.log" >&2
        echo "patch $n ($(git log -1 --format=%s)) does not build" >&2
        exit 1
      fi
      echo "patch $n builds: $(git log -1 --format=%s)"
    done
    ;;
  export)
    cd "$dir"
    git rev-parse -q --verify pristine >/dev/null || { echo "$dir: no 'pristine' tag" >&2; exit 1; }
    rm -f "$here"/patches/*.patch
    git format-patch -q -N --zero-commit --no-signature --no-stat -o "$here/patches" pristine..HEAD
    {
      echo "# Applied in this order to the pristine MuJoCo 2.2.2 tree (patch -p1)."
      echo "# Regenerate with tools/patches.sh; do not edit the patches by hand."
      (cd "$here/patches" && ls -1 ./*.patch | sed 's#^\./##')
    } > "$here/patches/series"
    echo "exported $(git rev-list --count pristine..HEAD) patches to $here/patches"
    ;;
  export-upstream)
    base=${3:?export-upstream needs BASE}; tip=${4:-HEAD}
    cd "$dir"
    base=$(git rev-parse --verify "$base^{commit}"); tip=$(git rev-parse --verify "$tip^{commit}")
    out=$here/patches/upstream
    mkdir -p "$out"
    rm -f "$out"/*.patch
    git format-patch -q --zero-commit --no-signature --base="$base" -o "$out" "$base..$tip"
    {
      echo "# git format-patch series against google-deepmind/mujoco $(git describe --tags --exact-match "$base" 2>/dev/null || echo "$base") ($base)."
      echo "# Apply in this order with git am; tools/upstream-mbox.sh makes one mbox of them."
      echo "# Regenerate with tools/patches.sh export-upstream; do not edit the patches by hand."
      (cd "$out" && ls -1 ./*.patch | sed 's#^\./##')
    } > "$out/series"
    echo "exported $(git rev-list --count "$base..$tip") patches to $out"
    ;;
  sync-upstream)
    base=${3:?sync-upstream needs BASE}
    cd "$dir"
    base=$(git rev-parse --verify "$base^{commit}")
    sync_into "$here/upstream" "" "$base" creator
    echo "synced $n file(s) of upstream/ into $dir; now: tools/patches.sh export-upstream $dir $3"
    ;;
  *) sed -n '2,31p' "$0"; exit 2 ;;
esac
