#!/usr/bin/env bash
# A software TPM for the tests. swtpm_install installs swtpm, swtpm_setup, OpenSSL's tpm2
# provider and the swtpm TCTI when missing (Debian: swtpm swtpm-tools tpm2-openssl
# libtss2-tcti-swtpm0). swtpm_start manufactures a TPM as a maker would (swtpm_setup: RSA
# and ECC endorsement keys with certificates from a private swtpm-localca CA, which stands
# for a TPM maker's), starts it on free loopback ports (the TCTI's control channel is the
# command port + 1), and exports TPM2OPENSSL_TCTI for the tests that use the TPM in their
# own process (TPMTests, TPMAttestationTests) and LATCHKEY_TEST_EK_ROOTS, the PEM file of
# that CA's certificates; the command-line TPM tests start a swtpm of their own each.
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
    # The maker's CA and the manufacturing: swtpm_localca makes its root and issuing
    # certificates on first use, under the private state directory named here.
    mkdir -p "$SWTPM_WORK/state" "$SWTPM_WORK/ca"
    printf 'statedir = %s\nsigningkey = %s\nissuercert = %s\ncertserial = %s\n' \
        "$SWTPM_WORK/ca" "$SWTPM_WORK/ca/signkey.pem" "$SWTPM_WORK/ca/issuercert.pem" "$SWTPM_WORK/ca/certserial" \
        >"$SWTPM_WORK/localca.conf"
    printf -- '--platform-manufacturer Latchkey\n--platform-version 2.1\n--platform-model CI\n' >"$SWTPM_WORK/localca.options"
    printf 'create_certs_tool = /usr/bin/swtpm_localca\ncreate_certs_tool_config = %s\ncreate_certs_tool_options = %s\nactive_pcr_banks = sha256\n' \
        "$SWTPM_WORK/localca.conf" "$SWTPM_WORK/localca.options" >"$SWTPM_WORK/setup.conf"
    swtpm_setup --tpm2 --tpmstate "$SWTPM_WORK/state" --create-ek-cert --create-platform-cert \
        --config "$SWTPM_WORK/setup.conf" --logfile "$SWTPM_WORK/setup.log" >/dev/null
    cat "$SWTPM_WORK/ca/swtpm-localca-rootca-cert.pem" "$SWTPM_WORK/ca/issuercert.pem" >"$SWTPM_WORK/ek-roots.pem"
    export LATCHKEY_TEST_EK_ROOTS="$SWTPM_WORK/ek-roots.pem"
    swtpm socket --tpm2 --server "type=tcp,port=$port,bindaddr=127.0.0.1" \
        --ctrl "type=tcp,port=$((port + 1)),bindaddr=127.0.0.1" \
        --tpmstate "dir=$SWTPM_WORK/state" --flags not-need-init,startup-clear \
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
