#!/usr/bin/env bash
# Writes a man page for every command of `latchkey` from its argument parser
# (swift-argument-parser's generate-manual, one page per subcommand: latchkey.1,
# latchkey.host.run.1, …), leaving out the hidden ones (the PAM helpers and check-arguments,
# which only programs run) and the SEE ALSO lines that name them. A subcommand's page is
# named, in its NAME section, as man and whatis know it (latchkey.host.run): mandb cannot
# read generate-manual's quoted "latchkey host run" there. Its synopsis keeps the command
# as it is typed.
#
#   scripts/generate-manuals.sh GENERATE-MANUAL LATCHKEY OUTPUT-DIR
#
# The pages' date is SOURCE_DATE_EPOCH's when set (reproducible builds), else today's.
set -euo pipefail
tool=${1:?usage: scripts/generate-manuals.sh GENERATE-MANUAL LATCHKEY OUTPUT-DIR}
binary=${2:?usage: scripts/generate-manuals.sh GENERATE-MANUAL LATCHKEY OUTPUT-DIR}
out=${3:?usage: scripts/generate-manuals.sh GENERATE-MANUAL LATCHKEY OUTPUT-DIR}
date=$(date -u ${SOURCE_DATE_EPOCH:+-d "@$SOURCE_DATE_EPOCH"} +%Y-%m-%d)
rm -rf "$out"
mkdir -p "$out"
"$tool" "$binary" --multi-page --date "$date" --authors "Latchkey developers" --output-directory "$out"
"$binary" --experimental-dump-help > "$out/.commands.json"
python3 - "$out/.commands.json" "$out" <<'PY'
import json, os, re, sys
out = sys.argv[2]
hidden = []
def walk(command, path):
    name = ".".join(path + [command["commandName"]])
    if not command.get("shouldDisplay", True) or command["commandName"] == "help":
        hidden.append(name)
    for sub in command.get("subcommands", []):
        walk(sub, path + [command["commandName"]])
walk(json.load(open(sys.argv[1]))["command"], [])
for name in hidden:
    for page in [page for page in os.listdir(out) if page.endswith(".1")]:
        if page == name + ".1" or page.startswith(name + "."):
            os.remove(os.path.join(out, page))
for page in [page for page in os.listdir(out) if page.endswith(".1")]:
    path = os.path.join(out, page)
    lines = open(path).read().split("\n")
    kept = [l for l in lines if not any(re.match(r"\.Xr %s 1( ,)?$" % re.escape(n), l) for n in hidden)]
    # The last SEE ALSO entry carries no comma.
    for i in range(len(kept) - 1, -1, -1):
        if kept[i].startswith(".Xr "):
            kept[i] = re.sub(r" ,$", "", kept[i])
            break
    text = "\n".join(kept)
    named = re.search(r'^\.Nm "([^"]+)"$', text, re.M)
    if named:
        words = named.group(1)
        text = text.replace(named.group(0), ".Nm " + words.replace(" ", "."), 1)
        text = re.sub(r"^\.Nm$", '.Nm "%s"' % words, text, flags=re.M)
    open(path, "w").write(text)
PY
rm -f "$out/.commands.json"
