#!/usr/bin/env bash
# Builds the Debian packages of this commit and of the one before it (latchkey and
# latchkey-provider; a commit before the split built latchkey alone), and puts them through
# a host's whole life with them, as root, on this machine (issue 75; .ci/run runs it after
# the tests; docs/guides/install.md says what each step promises):
#
#   1. the previous package installed, a provider run from it on /var/lib/latchkey/provider
#      with an identity and a bound credential;
#   2. upgraded to this commit's packages with apt-get: the identity and the credential are
#      still there, and the credential still signs in (the provider now runs from
#      latchkey-provider, which /usr/bin/latchkey hands `serve` to);
#   3. the installed tool: --version names this commit, /usr/bin/latchkey holds no provider,
#      man pages, the three completion
#      files, systemd-analyze verify on the units, pam_latchkey.so loaded by pamtester from
#      the system module folder under pam_wrapper, latchkey demo from /usr/bin;
#   4. removed: refused while a hand-edited PAM file names the module, then nothing of the
#      PAM stack names it, the units and the binary are gone;
#   5. purged: nothing it installed is left; what the guide says stays, stays.
#
#   scripts/check-deb.sh
#
# It refuses to start when a latchkey package is installed or /var/lib/latchkey exists, and
# takes away whatever it made, failure included.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
export DEBIAN_FRONTEND=noninteractive

fail() { echo "check-deb: $*" >&2; exit 1; }
step() { echo "check-deb: $*"; }

[ "$(id -u)" = 0 ] || fail "installing a package needs root"
for package in latchkey latchkey-provider; do
    if dpkg -s "$package" >/dev/null 2>&1; then fail "$package is installed already; this check would remove it"; fi
done
[ ! -e /var/lib/latchkey ] || fail "/var/lib/latchkey exists; this check would use and delete it"

work=$(mktemp -d "${TMPDIR:-/tmp}/latchkey-deb.XXXXXX")
serve_pid=""
stop_serve() {
    if [ -n "$serve_pid" ]; then
        kill "$serve_pid" 2>/dev/null || true
        wait "$serve_pid" 2>/dev/null || true
        serve_pid=""
    fi
}
cleanup() {
    stop_serve
    rm -f /etc/pam.d/latchkey-check-deb
    if dpkg -s latchkey >/dev/null 2>&1 || dpkg -s latchkey-provider >/dev/null 2>&1; then
        pam-auth-update --package --remove latchkey latchkey-host >/dev/null 2>&1 || true
        apt-get purge -y -qq latchkey latchkey-provider >/dev/null 2>&1 \
            || dpkg --purge --force-all latchkey-provider latchkey >/dev/null 2>&1 || true
    fi
    rm -rf /var/lib/latchkey /var/lib/private/latchkey "$work"
}
trap cleanup EXIT

# --- The two packages ------------------------------------------------------------------
if git rev-parse --verify -q HEAD~1 >/dev/null; then
    step "packaging the previous commit ($(git rev-parse --short HEAD~1))"
    mapfile -t previous < <(scripts/package-deb.sh --commit HEAD~1 --no-lintian | grep '\.deb$')
else
    # A clone of one commit has no previous one to build; the upgrade is then checked from a
    # package of this same tree under a lower version, and says so.
    echo "check-deb: WARNING: no previous commit in this clone (a shallow clone?); the upgrade starts from this commit's tree" >&2
    previous=()
fi
step "packaging this commit (lintian: no error, no warning)"
mapfile -t current < <(scripts/package-deb.sh | grep '\.deb$')
[ "${#current[@]}" = 2 ] || fail "this commit should make two packages (latchkey, latchkey-provider): ${current[*]}"
if [ "${#previous[@]}" = 0 ]; then
    mkdir -p "$work/previous"
    version=$(dpkg-deb -f "${current[0]}" Version)
    for deb in "${current[@]}"; do
        name=$(dpkg-deb -f "$deb" Package)
        dpkg-deb -R "$deb" "$work/previous/$name"
        sed -i -e "s/^Version: .*/Version: ${version%%+*}~previous/" -e "s/(= $version)/(= ${version%%+*}~previous)/" "$work/previous/$name/DEBIAN/control"
        dpkg-deb --root-owner-group -b "$work/previous/$name" "$work/previous/${name}_previous_amd64.deb" >/dev/null
        previous+=("$work/previous/${name}_previous_amd64.deb")
    done
fi
old_version=$(dpkg-deb -f "${previous[0]}" Version)
new_version=$(dpkg-deb -f "${current[0]}" Version)
dpkg --compare-versions "$new_version" gt "$old_version" || fail "$new_version does not sort after $old_version"

# --- 1. The previous package, and a provider with data ----------------------------------
step "installing $old_version"
apt-get install -y -qq "${previous[@]}" >/dev/null
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
issuer="http://127.0.0.1:$port"
data=/var/lib/latchkey/provider
install -d -m 0700 "$data"
start_serve() {
    : > "$work/serve.json"
    /usr/bin/latchkey serve --host 127.0.0.1 --port "$port" --data-dir "$data" --json > "$work/serve.json" 2> "$work/serve.log" &
    serve_pid=$!
    for _ in $(seq 300); do
        if grep -q '"issuer"' "$work/serve.json"; then return 0; fi
        kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.log" >&2; fail "serve ended at start"; }
        sleep 0.1
    done
    fail "serve did not start within 30 s"
}
start_serve
export LATCHKEY_ADMIN_TOKEN
LATCHKEY_ADMIN_TOKEN=$(cat "$data/admin-token")
# The person's vault, opened with a raw key given as a systemd credential.
install -d -m 0700 "$work/credentials"
head -c 32 /dev/urandom > "$work/credentials/latchkey-vault-key"
chmod 0600 "$work/credentials/latchkey-vault-key"
export CREDENTIALS_DIRECTORY="$work/credentials" LATCHKEY_STORE="$work/vault"
created=$(/usr/bin/latchkey admin create-identity --idp "$issuer" --username ada --json)
identity=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["identity"]["id"])' <<<"$created")
bind_url=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["bindURL"])' <<<"$created")
credential=$(/usr/bin/latchkey bind "$bind_url" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["credential"]["id"])')
/usr/bin/latchkey authenticate --issuer "$issuer" --json >/dev/null || fail "the credential bound under $old_version does not sign in"
stop_serve

# --- 2. The upgrade keeps the provider's data --------------------------------------------
step "upgrading to $new_version"
apt-get install -y -qq "${current[@]}" >/dev/null
for package in latchkey latchkey-provider; do
    [ "$(dpkg-query -W -f '${Version}' "$package")" = "$new_version" ] || fail "the upgrade did not install $package $new_version"
done
start_serve
/usr/bin/latchkey admin list-identities --idp "$issuer" --json | grep -q "\"$identity\"" || fail "identity ada is gone after the upgrade"
/usr/bin/latchkey admin list-credentials --idp "$issuer" --json "$identity" | grep -q "\"$credential\"" || fail "ada's credential is gone after the upgrade"
/usr/bin/latchkey authenticate --issuer "$issuer" --json >/dev/null || fail "ada's credential no longer signs in after the upgrade"
stop_serve
unset LATCHKEY_ADMIN_TOKEN CREDENTIALS_DIRECTORY LATCHKEY_STORE

# --- 3. The installed tool ----------------------------------------------------------------
step "checking the installed tool"
commit=$(git rev-parse HEAD)
/usr/bin/latchkey --version | grep -q "(commit $commit" || fail "latchkey --version does not name $commit: $(/usr/bin/latchkey --version)"
/usr/libexec/latchkey/latchkey-provider --version | grep -q "(commit $commit" || fail "latchkey-provider --version does not name $commit"
# The host's binary carries none of the provider: its size is well under the provider's.
host_size=$(stat -c %s /usr/bin/latchkey)
provider_size=$(stat -c %s /usr/libexec/latchkey/latchkey-provider)
[ $((host_size * 10)) -lt $((provider_size * 8)) ] || fail "/usr/bin/latchkey ($host_size bytes) is not smaller than the provider's binary ($provider_size)"
man -w latchkey >/dev/null || fail "man -w latchkey finds no page"
man -w latchkey.host.run >/dev/null || fail "man -w latchkey.host.run finds no page"
MANWIDTH=80 man latchkey.serve 2>/dev/null | grep -q -- "--data-dir" || fail "man latchkey.serve does not show --data-dir"
bash -c 'source /usr/share/bash-completion/completions/latchkey && complete -p latchkey' >/dev/null \
    || fail "the bash completion does not register for latchkey"
head -1 /usr/share/zsh/vendor-completions/_latchkey | grep -q '^#compdef latchkey' || fail "the zsh completion is not a #compdef file"
grep -q "^complete -c 'latchkey'" /usr/share/fish/vendor_completions.d/latchkey.fish || fail "the fish completion completes nothing for latchkey"
systemd-analyze verify /lib/systemd/system/latchkey-serve.service /lib/systemd/system/latchkey-host.service \
    || fail "systemd-analyze verify refuses the system units"
systemd-analyze verify /usr/lib/systemd/user/latchkey-agent.socket /usr/lib/systemd/user/latchkey-agent.service \
    || fail "systemd-analyze verify refuses the user units"
# The module by its bare name, as a PAM file names it: found in the system's module folder.
# root is a local account, which the account step leaves to the other modules (PAM_IGNORE),
# after the module ran the installed helper; without the module the stack would fail.
install -d "$work/pam.d"
printf 'account required pam_latchkey.so\naccount required pam_permit.so\n' > "$work/pam.d/latchkey-check"
pam_wrapper=/usr/lib/x86_64-linux-gnu/libpam_wrapper.so
LD_PRELOAD=$pam_wrapper PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$work/pam.d" \
    pamtester -v latchkey-check root acct_mgmt > "$work/pamtester.log" 2>&1 \
    || { cat "$work/pamtester.log" >&2; fail "pamtester could not run pam_latchkey.so from the system module folder"; }
printf 'auth required pam_latchkey.so config=%s/no-such.conf\n' "$work" > "$work/pam.d/latchkey-check"
if LD_PRELOAD=$pam_wrapper PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$work/pam.d" PAM_WRAPPER_DEBUGLEVEL=3 \
    pamtester -v latchkey-check root authenticate > "$work/pamtester.log" 2>&1; then
    fail "pam_latchkey approved root with no configuration"
fi
# The module ran the installed helper, which said why (the module's syslog line, which
# pam_wrapper prints).
grep -q "cannot open the configuration $work/no-such.conf" "$work/pamtester.log" \
    || { cat "$work/pamtester.log" >&2; fail "the module did not run the helper for authenticate"; }
step "latchkey demo from /usr/bin"
(cd "$work" && /usr/bin/latchkey demo >/dev/null) || fail "latchkey demo failed from /usr/bin"

# --- 4. Removal ---------------------------------------------------------------------------
step "removing"
pam-auth-update --package --enable latchkey latchkey-host
grep -q pam_latchkey /etc/pam.d/common-auth || fail "pam-auth-update --enable latchkey did not add the module to common-auth"
printf 'auth [success=done default=ignore] pam_latchkey.so\n' > /etc/pam.d/latchkey-check-deb
if apt-get remove -y -qq latchkey latchkey-provider >/dev/null 2>&1; then fail "the removal went on while /etc/pam.d/latchkey-check-deb names the module"; fi
[ -x /usr/lib/x86_64-linux-gnu/security/pam_latchkey.so ] || [ -f /usr/lib/x86_64-linux-gnu/security/pam_latchkey.so ] \
    || fail "a refused removal took the module away"
rm -f /etc/pam.d/latchkey-check-deb
# The refused removal took the profiles out already; turn them on again for the real one.
pam-auth-update --package --enable latchkey latchkey-host
install -d /var/lib/latchkey/host
echo cache > /var/lib/latchkey/host/directory.cache
apt-get remove -y -qq latchkey latchkey-provider >/dev/null
for package in latchkey latchkey-provider; do
    [ "$(dpkg-query -W -f '${db:Status-Status}' "$package")" = "config-files" ] || fail "$package is not removed"
done
if grep -ls pam_latchkey /etc/pam.d/*; then fail "PAM files still name pam_latchkey after the removal"; fi
for gone in /usr/bin/latchkey /usr/libexec/latchkey/latchkey-provider /usr/lib/x86_64-linux-gnu/security/pam_latchkey.so /lib/systemd/system/latchkey-serve.service \
    /lib/systemd/system/latchkey-host.service /usr/lib/systemd/user/latchkey-agent.socket; do
    [ ! -e "$gone" ] || fail "$gone is still there after the removal"
done
[ -f /etc/default/latchkey-serve ] || fail "the conffile went with the removal (only purge takes it)"

# --- 5. Purge -----------------------------------------------------------------------------
step "purging"
apt-get purge -y -qq latchkey latchkey-provider >/dev/null
for package in latchkey latchkey-provider; do
    dpkg -s "$package" >/dev/null 2>&1 && fail "$package is still known to dpkg after the purge"
done
for deb in "${current[@]}"; do dpkg-deb -c "$deb"; done | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' > "$work/files"
while read -r path; do
    [ ! -e "$path" ] || fail "$path is left after the purge"
done < "$work/files"
[ ! -e /etc/default/latchkey-serve ] || fail "/etc/default/latchkey-serve is left after the purge"
[ ! -e /var/lib/latchkey/host ] || fail "the host daemon's cache is left after the purge"
# What the guide says a purge never deletes: the provider's store.
[ -f "$data/latchkey.sqlite3" ] || fail "the purge deleted the provider's store, which it must keep"
step "all good: $old_version → $new_version, installed, checked, removed and purged"
