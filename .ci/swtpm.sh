#!/usr/bin/env bash
# A software TPM for the tests. swtpm_install installs swtpm, OpenSSL's tpm2 provider and
# the swtpm TCTI when missing (Debian: swtpm swtpm-tools tpm2-openssl libtss2-tcti-swtpm0).
# swtpm_start starts one swtpm on free loopback ports (the TCTI's control channel is the
# command port + 1) and exports TPM2OPENSSL_TCTI for the tests that use the TPM in their
# own process (TPMTests); the command-line TPM tests start a swtpm of their own each.
# Sourced by .ci/run, which stops it on exit (swtpm_stop), failure included.

swtpm_present() {
    local modules
    modules=$(openssl version -m 2>/dev/null | sed -E 's/^[^"]*"([^"]*)".*/\1/')
    command -v swtpm >/dev/null && [ -e "$modules/tpm2.so" ] \
        && ls /usr/lib/*/libtss2-tcti-swtpm.so* >/dev/null 2>&1
}

swtpm_install() {
    if ! swtpm_present; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq swtpm swtpm-tools tpm2-openssl libtss2-tcti-swtpm0 >/dev/null
    fi
}

swtpm_start() {
    local port
    SWTPM_WORK=$(mktemp -d /tmp/latchkey-swtpm.XXXXXX)
    # Two free adjacent ports.
    port=$(python3 -c '
import socket
while True:
    a = socket.socket(); a.bind(("127.0.0.1", 0)); port = a.getsockname()[1]
    b = socket.socket()
    try:
        b.bind(("127.0.0.1", port + 1)); print(port); break
    except OSError:
        pass
    finally:
        a.close(); b.close()
')
    swtpm socket --tpm2 --server "type=tcp,port=$port,bindaddr=127.0.0.1" \
        --ctrl "type=tcp,port=$((port + 1)),bindaddr=127.0.0.1" \
        --tpmstate "dir=$SWTPM_WORK" --flags not-need-init,startup-clear \
        --pid "file=$SWTPM_WORK/pid" >"$SWTPM_WORK/log" 2>&1 &
    for _ in $(seq 50); do
        [ -s "$SWTPM_WORK/pid" ] && break
        sleep 0.1
    done
    export TPM2OPENSSL_TCTI="swtpm:host=127.0.0.1,port=$port"
    echo "swtpm on 127.0.0.1:$port"
}

swtpm_stop() {
    if [ -n "${SWTPM_WORK:-}" ] && [ -s "$SWTPM_WORK/pid" ]; then
        kill -9 "$(cat "$SWTPM_WORK/pid")" 2>/dev/null || true
    fi
    [ -n "${SWTPM_WORK:-}" ] && rm -rf "$SWTPM_WORK"
    SWTPM_WORK=
}
