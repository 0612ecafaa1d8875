#!/usr/bin/env bash
# Builds the Debian packages (latchkey for people and hosts, latchkey-provider for `serve`)
# from this checkout with Debian's own tools (debhelper's dh under
# dpkg-buildpackage; debian/rules does the Swift release build), then checks it with
# lintian. Needs dpkg-dev, debhelper and lintian (apt-get install dpkg-dev debhelper lintian)
# besides what `swift build` needs.
#
#   scripts/package-deb.sh [--commit REV] [--output DIR] [--no-lintian]
#
#   --commit REV  package that commit (git archive) instead of the working tree; a tree
#                 older than debian/ is packaged with this checkout's debian/ and scripts
#   --output DIR  where the .debs go (default .build-deb/); prints their paths last, one a
#                 line, latchkey's first
#
# The version is Package.swift's release plus the number of commits up to the one built and
# its hash (0.5.0+git412.0123456789ab, as git describe counts), so a later commit's package
# sorts later and installing it is an upgrade. The commit's time is SOURCE_DATE_EPOCH: the
# changelog's date, the man pages' date and every file's time in the package.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
rev=""
out="$top/.build-deb"
lintian=1
while [ $# -gt 0 ]; do
    case "$1" in
        --commit) rev=$2; shift ;;
        --output) out=$2; shift ;;
        --no-lintian) lintian=0 ;;
        *) echo "usage: $0 [--commit REV] [--output DIR] [--no-lintian]" >&2; exit 2 ;;
    esac
    shift
done
for tool in dpkg-buildpackage dh lintian; do
    if ! command -v "$tool" >/dev/null; then
        echo "$tool is missing: apt-get install dpkg-dev debhelper lintian" >&2
        exit 1
    fi
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The tree to package goes to $out/src, so dpkg-buildpackage writes its results in $out.
# It is staged first and then synced into $out/src file by file: a file whose bytes did not
# change keeps its time, so the Swift build in the same scratch directory ($out/swift) is
# incremental from one package to the next, whichever commit each was built from.
stage="$out/stage"
rm -rf "$stage"
mkdir -p "$stage"
if [ -n "$rev" ]; then
    commit=$(git -C "$top" rev-parse --verify "$rev^{commit}")
    suffix=""
    git -C "$top" archive "$commit" | tar -x -C "$stage"
    if [ ! -d "$stage/debian" ]; then
        cp -R "$top/debian" "$stage/debian"
        cp "$top/scripts/generate-manuals.sh" "$stage/scripts/"
        cp "$top/contrib/latchkey-serve.default" "$stage/contrib/"
    fi
else
    commit=$(git -C "$top" rev-parse HEAD)
    suffix=""
    if [ -n "$(git -C "$top" status --porcelain --untracked-files=no)" ]; then suffix="-dirty"; fi
    # Tracked and new files as they are in the working tree (a tracked file deleted there is
    # left out, as it would be from the next commit).
    (cd "$top" && git ls-files -z --cached --others --exclude-standard \
        | python3 -c 'import os, sys; sys.stdout.buffer.write(b"".join(p + b"\0" for p in sys.stdin.buffer.read().split(b"\0") if p and os.path.lexists(p)))' \
        | tar --null -T - -c -f -) | tar -x -C "$stage"
fi
src="$out/src"
scratch="$out/swift"
mkdir -p "$src"
python3 - "$stage" "$src" <<'PY'
import filecmp, os, shutil, sys
stage, src = sys.argv[1], sys.argv[2]
wanted = set()
for root, dirs, files in os.walk(stage):
    rel = os.path.relpath(root, stage)
    os.makedirs(os.path.join(src, rel), exist_ok=True)
    for name in files:
        path = os.path.normpath(os.path.join(rel, name))
        wanted.add(path)
        new, old = os.path.join(stage, path), os.path.join(src, path)
        if os.path.islink(new) or os.path.islink(old) or not os.path.isfile(old) or not filecmp.cmp(new, old, shallow=False):
            if os.path.lexists(old):
                os.remove(old)
            shutil.copy(new, old, follow_symlinks=False)
for root, dirs, files in os.walk(src, topdown=False):
    for name in files:
        path = os.path.normpath(os.path.join(os.path.relpath(root, src), name))
        if path not in wanted and not path.startswith("debian/"):
            os.remove(os.path.join(src, path))
PY
rm -rf "$stage"
epoch=$(git -C "$top" log -1 --format=%ct "$commit")
release=$(sed -n 's/^let latchkeyVersion = "\(.*\)"$/\1/p' "$src/Package.swift")
if [ -z "$release" ]; then
    release=$(sed -n 's/^ *version: "\([0-9.]*\)",.*$/\1/p' "$src/Sources/LatchkeyCLI/LatchkeyCommand.swift" 2>/dev/null)
fi
count=$(git -C "$top" rev-list --count "$commit")
version="$release+git$count.${commit:0:12}"

# The changelog names this version and the commit's time.
{
    echo "latchkey ($version) unstable; urgency=medium"
    echo
    echo "  * Built from commit $commit$suffix."
    echo
    echo " -- Latchkey developers <latchkey@example.org>  $(date -u -R -d "@$epoch")"
} > "$src/debian/changelog"

rm -f "$out"/latchkey_"$version"_* "$out"/latchkey-provider_"$version"_*
(
    cd "$src"
    export SOURCE_DATE_EPOCH=$epoch LATCHKEY_BUILD_COMMIT="$commit$suffix" SWIFT_SCRATCH="$scratch"
    # -d: Swift is not a Debian package, so Build-Depends cannot name it.
    # Its output goes to stderr: stdout holds only the packages' paths, for $(...).
    dpkg-buildpackage -b -us -uc -d >&2
)
# latchkey, and latchkey-provider when the tree builds it (commits before the split built
# one package).
debs=("$out/latchkey_${version}_amd64.deb")
[ -f "${debs[0]}" ]
if [ -f "$out/latchkey-provider_${version}_amd64.deb" ]; then debs+=("$out/latchkey-provider_${version}_amd64.deb"); fi
if [ "$lintian" = 1 ]; then
    # No error and no warning: there are no overrides.
    lintian --fail-on error,warning --suppress-tags-from-file /dev/null "${debs[@]}" >&2
fi
printf '%s\n' "${debs[@]}"
