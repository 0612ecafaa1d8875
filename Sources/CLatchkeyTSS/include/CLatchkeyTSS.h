/*
 * The TPM commands tpm2-openssl does not expose, over tpm2-tss's ESAPI (Debian
 * libtss2-dev): an attestation key (AK), TPM2_Certify of a credential key by it, the
 * endorsement key (EK) and its certificate, and TPM2_ActivateCredential
 * (docs/ARCHITECTURE.md, "TPM attestation"). Only LatchkeyCrypto/TPM/ calls these.
 *
 * Every call takes and returns flat byte strings in the TPM's own marshalled forms, so
 * Swift never touches the TSS's structures. Every object a call loads into the TPM is
 * flushed before it returns, success or not: swtpm and many TPMs without a resource
 * manager hold only three transient objects. ESAPI itself resubmits a command the TPM
 * answered with TPM_RC_RETRY, TPM_RC_YIELDED or TPM_RC_TESTING.
 *
 * Each returns 0 or a TSS2_RC; CLatchkey_tpm_error describes one.
 */
#ifndef CLATCHKEY_TSS_H
#define CLATCHKEY_TSS_H

#include <stddef.h>
#include <stdint.h>

typedef struct CLatchkey_tpm CLatchkey_tpm;

/* The response code this module uses for a caller's buffer that is too small or a
 * marshalled input that does not parse; TSS2_RC values never take it. */
#define CLATCHKEY_TPM_BAD_INPUT 0xFFFF0001u

/* Connects to the TPM `tcti` names (tpm2-tss loader syntax, as TPM2OPENSSL_TCTI:
 * "device:/dev/tpmrm0", "swtpm:host=127.0.0.1,port=2321"); NULL or "" lets the loader
 * search. */
uint32_t CLatchkey_tpm_open(const char *tcti, CLatchkey_tpm **tpm);
/* Disconnects; NULL is allowed. */
void CLatchkey_tpm_close(CLatchkey_tpm *tpm);
/* Whether the last call failed in TPM2_Load of a key blob (an integrity failure there
 * means a blob of another TPM) rather than in the command it was loaded for. */
int CLatchkey_tpm_failed_loading(const CLatchkey_tpm *tpm);
/* A description of `rc` (static storage). */
const char *CLatchkey_tpm_error(uint32_t rc);

/* A TPM property of TPM2_CAP_TPM_PROPERTIES (TPM_PT_MANUFACTURER, ...). */
uint32_t CLatchkey_tpm_property(CLatchkey_tpm *tpm, uint32_t property, uint32_t *value);

/* Creates an attestation key: ECC P-256, restricted, signing, ECDSA with SHA-256, under
 * the storage primary tpm2-openssl uses (so the same TPM loads both kinds of blob).
 * Writes its TPM2B_PUBLIC and TPM2B_PRIVATE, marshalled. */
uint32_t CLatchkey_tpm_create_attestation_key(
    CLatchkey_tpm *tpm,
    uint8_t *public_area, size_t *public_length,
    uint8_t *private_area, size_t *private_length);

/* TPM2_Certify: loads `key` and the attestation key `ak` (each a marshalled
 * TPM2B_PUBLIC and TPM2B_PRIVATE under the storage primary), and has the AK sign a
 * TPMS_ATTEST naming `key`, with `qualifying` as its extraData. Writes the TPMS_ATTEST
 * (marshalled, without the TPM2B size) and the ECDSA signature's r and s. */
uint32_t CLatchkey_tpm_certify(
    CLatchkey_tpm *tpm,
    const uint8_t *key_public, size_t key_public_length,
    const uint8_t *key_private, size_t key_private_length,
    const uint8_t *ak_public, size_t ak_public_length,
    const uint8_t *ak_private, size_t ak_private_length,
    const uint8_t *qualifying, size_t qualifying_length,
    uint8_t *attest, size_t *attest_length,
    uint8_t *signature_r, size_t *signature_r_length,
    uint8_t *signature_s, size_t *signature_s_length);

/* The contents of NV index `index` (an EK certificate: 0x01C00002 for the RSA 2048 EK). */
uint32_t CLatchkey_tpm_nv_read(CLatchkey_tpm *tpm, uint32_t index, uint8_t *data, size_t *length);

/* The RSA 2048 endorsement key made from the TCG's default template (EK Credential
 * Profile 2.0, B.3.3, template L-1): its modulus (256 bytes). */
uint32_t CLatchkey_tpm_endorsement_key_rsa(CLatchkey_tpm *tpm, uint8_t *modulus, size_t *modulus_length);

/* TPM2_ActivateCredential with the RSA 2048 EK and the attestation key `ak`:
 * `credential` is a marshalled TPM2B_ID_OBJECT and `secret` a TPM2B_ENCRYPTED_SECRET,
 * as TPM2_MakeCredential makes them. Writes the recovered credential. The EK is used
 * through a policy session satisfied by TPM2_PolicySecret(TPM_RH_ENDORSEMENT). */
uint32_t CLatchkey_tpm_activate_credential(
    CLatchkey_tpm *tpm,
    const uint8_t *ak_public, size_t ak_public_length,
    const uint8_t *ak_private, size_t ak_private_length,
    const uint8_t *credential, size_t credential_length,
    const uint8_t *secret, size_t secret_length,
    uint8_t *recovered, size_t *recovered_length);

#endif
