/*
 * The one C header Latchkey sees. It pins the OpenSSL 3.0 API before any OpenSSL
 * header is read: OPENSSL_API_COMPAT 30000 hides everything deprecated before 3.0
 * and OPENSSL_NO_DEPRECATED hides everything deprecated since, so a call to a
 * deprecated function (EC_KEY_*, RSA_*, HMAC_*, ...) does not even compile.
 */
#ifndef CLATCHKEY_OPENSSL_SHIM_H
#define CLATCHKEY_OPENSSL_SHIM_H

#define OPENSSL_API_COMPAT 30000
#define OPENSSL_NO_DEPRECATED 1

#include <openssl/opensslv.h>

#if !defined(OPENSSL_VERSION_MAJOR) || OPENSSL_VERSION_MAJOR < 3
#error "Latchkey needs OpenSSL 3.0 or later (Debian/Ubuntu: apt-get install libssl-dev)"
#endif

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <openssl/provider.h>
#include <openssl/encoder.h>
#include <openssl/decoder.h>

/* TLS clients (LatchkeyCrypto's TLSClientConnection): the minimum version and SNI are
 * macros over SSL_CTX_ctrl / SSL_ctrl. */
static inline int CLatchkey_SSL_CTX_require_tls12(SSL_CTX *context) {
    return (int)SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
}

static inline int CLatchkey_SSL_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/* OPENSSL_free is a macro carrying file and line: Swift cannot call it. */
static inline void CLatchkey_OPENSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}

/* OPENSSL_clear_free is a macro too: it wipes, then frees. */
static inline void CLatchkey_OPENSSL_clear_free(void *pointer, size_t count) {
    OPENSSL_clear_free(pointer, count);
}

/* EVP_PKEY_Q_keygen is variadic and EVP_EC_gen is a macro over it. */
static inline EVP_PKEY *CLatchkey_EVP_EC_gen(const char *curve) {
    return EVP_EC_gen(curve);
}

static inline EVP_PKEY *CLatchkey_EVP_PKEY_Q_keygen_ED25519(void) {
    return EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
}

/* EVP_PKEY_PUBLIC_KEY is an expression macro, which Swift does not import. */
static const int CLatchkey_EVP_PKEY_PUBLIC_KEY = EVP_PKEY_PUBLIC_KEY;

/* OSSL_PARAM_END is an initializer macro. */
static inline OSSL_PARAM CLatchkey_OSSL_PARAM_END(void) {
    OSSL_PARAM end = OSSL_PARAM_END;
    return end;
}

/*
 * Process protection for the keys this process holds in memory (not OpenSSL, but C
 * only: prctl is variadic, so Swift cannot call it). Makes the process non-dumpable
 * (no core file, no ptrace by other users' processes, /proc/<pid>/mem closed to them)
 * and sets RLIMIT_CORE to 0, so no core file is written even where dumpable is
 * restored. Returns 0, or the errno of the step that failed.
 */
#include <errno.h>
#include <sys/prctl.h>
#include <sys/resource.h>

static inline int CLatchkey_disable_core_dumps(void) {
    struct rlimit none = { 0, 0 };
    if (setrlimit(RLIMIT_CORE, &none) != 0) return errno;
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return errno;
    return 0;
}

#endif
