#!/usr/bin/env bash
# Proves two rules of the crypto core on every CI run:
# 1. The C module's header hides OpenSSL's deprecated API: a sample of deprecated calls
#    must fail to compile through it (so none is reachable from Swift either).
# 2. Only Sources/LatchkeyCrypto/OpenSSL/ imports the C module, and only
#    Sources/LatchkeyCrypto/TPM/ imports tpm2-tss's (CLatchkeyTSS).
set -euo pipefail
cd "$(dirname "$0")/.."

cc_bin=${CC:-cc}
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT

# Positive control: the header itself compiles and a current API call is visible,
# so the failures below mean "deprecated", not "broken header".
printf '#include "shim.h"\nint main(void) { return EVP_MD_fetch(0, "SHA2-256", 0) != 0; }\n' > "$probe_dir/control.c"
"$cc_bin" -fsyntax-only -Werror=implicit-function-declaration -I Sources/CLatchkeyOpenSSL "$probe_dir/control.c"

for call in 'EC_KEY_new_by_curve_name(415)' 'ECDSA_sign(0, 0, 0, 0, 0, 0)' 'RSA_new()' \
            'HMAC_CTX_new()' 'SHA256_Init(0)' 'SSL_CTX_set_tmp_dh_callback(0, 0)' 'EVP_PKEY_get1_EC_KEY(0)'; do
    printf '#include "shim.h"\nint main(void) { return %s != 0; }\n' "$call" > "$probe_dir/probe.c"
    if "$cc_bin" -fsyntax-only -Werror=implicit-function-declaration -Werror=int-conversion \
        -I Sources/CLatchkeyOpenSSL "$probe_dir/probe.c" 2>/dev/null; then
        echo "FAIL: deprecated OpenSSL call compiles through shim.h: $call" >&2
        exit 1
    fi
done

leaks=$(grep -rlE '^\s*((public|package|internal|@_implementationOnly) )?import CLatchkeyOpenSSL' Sources \
    | grep -v '^Sources/LatchkeyCrypto/OpenSSL/' || true)
if [ -n "$leaks" ]; then
    echo "FAIL: the C module is imported outside Sources/LatchkeyCrypto/OpenSSL/: $leaks" >&2
    exit 1
fi
tss_leaks=$(grep -rlE '^\s*((public|package|internal|@_implementationOnly) )?import CLatchkeyTSS' Sources \
    | grep -v '^Sources/LatchkeyCrypto/TPM/' || true)
if [ -n "$tss_leaks" ]; then
    echo "FAIL: the tpm2-tss module is imported outside Sources/LatchkeyCrypto/TPM/: $tss_leaks" >&2
    exit 1
fi
# The build information (a C target for its string macros) is read by BuildInfo alone.
info_leaks=$(grep -rlE '^\s*((public|package|internal|@_implementationOnly) )?import CLatchkeyBuildInfo' Sources \
    | grep -v '^Sources/LatchkeyCommandLine/BuildInfo.swift$' || true)
if [ -n "$info_leaks" ]; then
    echo "FAIL: CLatchkeyBuildInfo is imported outside Sources/LatchkeyCommandLine/BuildInfo.swift: $info_leaks" >&2
    exit 1
fi
echo "OpenSSL API check passed: deprecated calls do not compile; C modules imported only under Sources/LatchkeyCrypto/OpenSSL/ and TPM/ (and the build information by BuildInfo)"
