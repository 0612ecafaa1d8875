#!/usr/bin/env bash
# Soak test against one `latchkey serve`:
#
#  (a) crash soak: CLIENTS client loops bind new credentials and authenticate with the
#      `latchkey` command, each with its own vault, while a killer SIGKILLs running client
#      commands at random, for MINUTES minutes. Then every vault and the provider are
#      checked: each vault lists every record file it holds (nothing torn), every
#      credential the provider bound is in its client's vault (nothing committed lost),
#      each vault's signature counter is at least the provider's (counters only grow), and
#      every active credential is bound at the provider (a bind killed before its answer
#      leaves a pending key, never an active one).
#  (b) load: the provider under 1, 4, 16 and 64 concurrent full authentications
#      (latchkey-bench's provider group: throughput, p50/p99 against its floor, errors,
#      which must all be 0, and the process's peak memory).
#
#   scripts/soak.sh [MINUTES] [CLIENTS]        (default 10 minutes, 4 clients)
set -euo pipefail
cd "$(dirname "$0")/.."
minutes="${1:-10}"
clients="${2:-4}"

swift build --product latchkey 2>&1 | tail -1
bin="$(swift build --show-bin-path)/latchkey"
work="$(mktemp -d /tmp/latchkey-soak.XXXXXX)"
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
token=soak-admin-token-for-the-soak-run
LATCHKEY_ADMIN_TOKEN="$token" "$bin" serve --port 0 --json > "$work/serve.json" 2> "$work/serve.log" &
for _ in $(seq 100); do [ -s "$work/serve.json" ] && break; sleep 0.1; done
issuer="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["issuer"])' "$work/serve.json")"
echo "provider at $issuer; work in $work"

admin() { curl -sf -H "Authorization: Bearer $token" -H "Content-Type: application/json" "$@"; }

# (a) client loops: a new identity, bind its credential, authenticate three times; repeat.
deadline=$(( $(date +%s) + minutes * 60 ))
client_pids=()
for i in $(seq "$clients"); do
    (
        # A raw vault key as a systemd credential: no scrypt per command, so most
        # SIGKILLs land in the interesting parts (vault writes, HTTP).
        mkdir -p "$work/credentials-$i" && head -c 32 /dev/urandom > "$work/credentials-$i/latchkey-vault-key"
        export LATCHKEY_STORE="$work/store-$i" CREDENTIALS_DIRECTORY="$work/credentials-$i"
        k=0
        while [ "$(date +%s)" -lt "$deadline" ]; do
            k=$((k + 1))
            created="$(admin -X POST "$issuer/admin/identities" -d "{\"username\":\"soak-$i-$k\"}")" || continue
            python3 -c 'import json,sys; print(json.load(sys.stdin)["identity"]["id"])' <<< "$created" >> "$work/identities-$i"
            url="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["bindURL"])' <<< "$created")"
            bound="$("$bin" bind "$url" --json 2> /dev/null)" || continue
            id="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["credential"]["id"])' <<< "$bound")" || continue
            for _ in 1 2 3; do "$bin" authenticate --issuer "$issuer" --credential "$id" --json > /dev/null 2>&1 || true; done
        done
    ) &
    client_pids+=($!)
done

# The killer: SIGKILL a running client command every 0.2-1.5 s.
kills=0
while [ "$(date +%s)" -lt "$deadline" ]; do
    sleep "0.$(( RANDOM % 13 + 2 ))"
    victim="$(pgrep -f "$bin (bind|authenticate) " | shuf -n 1 || true)"
    # (bash reports each killed command; that is the point.)
    if [ -n "$victim" ] && kill -9 "$victim" 2>/dev/null; then kills=$((kills + 1)); fi
done
# Wait for the client loops to finish their last commands: the checks below must not
# race a sign-in still in flight.
wait "${client_pids[@]}" 2>/dev/null || true
echo "crash soak: $kills client SIGKILLs in $minutes minute(s)"

# Consistency.
problems=0
for i in $(seq "$clients"); do
    store="$work/store-$i"
    # Through files, not arguments: a long soak's lists outgrow the argument limit.
    LATCHKEY_STORE="$store" CREDENTIALS_DIRECTORY="$work/credentials-$i" "$bin" list --json > "$work/listed-$i.json"
    while read -r identity; do admin "$issuer/admin/identities/$identity/credentials"; echo; done < "$work/identities-$i" > "$work/provider-$i.jsonl"
    if ! python3 - "$store" "$work/listed-$i.json" "$work/provider-$i.jsonl" <<'PY'
import json, os, sys
store = sys.argv[1]
listed = json.load(open(sys.argv[2]))
provider = [c for line in open(sys.argv[3]) if line.strip() for c in json.loads(line)["credentials"]]
keys = os.path.join(store, "keys")
files = [n for n in os.listdir(keys) if n.endswith(".json")] if os.path.isdir(keys) else []
ok = True
if len(files) != len(listed):
    print(f"{store}: {len(files)} record files but {len(listed)} sound records (torn or unreadable)"); ok = False
local = {c["id"]: c for c in listed}
for credential in provider:
    mine = local.get(credential["id"])
    if mine is None:
        print(f"{store}: the provider bound {credential['id'][:12]}... but the vault lost it"); ok = False
    elif mine["signCount"] < credential["signCount"]:
        print(f"{store}: counter went backwards for {credential['id'][:12]}..."); ok = False
bound = {c["id"] for c in provider}
for credential in listed:
    # A key whose bind answer never arrived must say so (pending), not pose as bound.
    if credential["state"] == "active" and credential["id"] not in bound:
        print(f"{store}: {credential['id'][:12]}... is active but the provider never bound it"); ok = False
pending = sum(1 for c in listed if c["state"] == "pending")
print(f"{store}: {len(listed)} credentials in the vault ({pending} pending), {len(provider)} bound at the provider: " + ("consistent" if ok else "INCONSISTENT"))
sys.exit(0 if ok else 1)
PY
    then problems=$((problems + 1)); fi
done
echo "consistency: $problems inconsistent vault(s)"

# (b) load (SOAK_SKIP_LOAD=1 skips it).
if [ "${SOAK_SKIP_LOAD:-0}" = 1 ]; then [ "$problems" -eq 0 ]; exit; fi
echo "load: latchkey-bench --only provider (release build): 1, 4, 16 and 64 concurrent full authentications"
swift build -c release --product latchkey-bench 2>&1 | tail -1
load_report=$(mktemp)
.build/release/latchkey-bench --only provider --seconds 3 | tee "$load_report"
# Every authentication must have succeeded: each "errors" row reads 0.
failed=$(awk '/client\(s\): errors/ && $4 != "0" { n++ } END { print n + 0 }' "$load_report")
rm -f "$load_report"
echo "load: $failed concurrency level(s) with errors"
[ "$problems" -eq 0 ] && [ "$failed" -eq 0 ]
