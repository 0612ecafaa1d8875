/*
 * See include/CLatchkeyTSS.h. Written against tpm2-tss 3.x (Debian 12: 3.2.1).
 */
#include "CLatchkeyTSS.h"

#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

struct CLatchkey_tpm {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
    /* Whether the last failure was TPM2_Load's (see CLatchkey_tpm_failed_loading). */
    int failed_loading;
};

int CLatchkey_tpm_failed_loading(const CLatchkey_tpm *tpm) {
    return tpm->failed_loading;
}

uint32_t CLatchkey_tpm_open(const char *tcti, CLatchkey_tpm **tpm) {
    *tpm = NULL;
    CLatchkey_tpm *opened = calloc(1, sizeof *opened);
    if (opened == NULL) return TSS2_ESYS_RC_MEMORY;
    TSS2_RC rc = Tss2_TctiLdr_Initialize(tcti != NULL && tcti[0] != 0 ? tcti : NULL, &opened->tcti);
    if (rc != TSS2_RC_SUCCESS) {
        free(opened);
        return rc;
    }
    rc = Esys_Initialize(&opened->esys, opened->tcti, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        Tss2_TctiLdr_Finalize(&opened->tcti);
        free(opened);
        return rc;
    }
    *tpm = opened;
    return TSS2_RC_SUCCESS;
}

void CLatchkey_tpm_close(CLatchkey_tpm *tpm) {
    if (tpm == NULL) return;
    Esys_Finalize(&tpm->esys);
    Tss2_TctiLdr_Finalize(&tpm->tcti);
    free(tpm);
}

const char *CLatchkey_tpm_error(uint32_t rc) {
    if (rc == CLATCHKEY_TPM_BAD_INPUT) return "latchkey: a TPM structure did not parse, or a result did not fit";
    return Tss2_RC_Decode(rc);
}

uint32_t CLatchkey_tpm_property(CLatchkey_tpm *tpm, uint32_t property, uint32_t *value) {
    TPMI_YES_NO more = 0;
    TPMS_CAPABILITY_DATA *data = NULL;
    TSS2_RC rc = Esys_GetCapability(tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                    TPM2_CAP_TPM_PROPERTIES, property, 1, &more, &data);
    if (rc != TSS2_RC_SUCCESS) return rc;
    TPML_TAGGED_TPM_PROPERTY *list = &data->data.tpmProperties;
    if (list->count < 1 || list->tpmProperty[0].property != property) rc = CLATCHKEY_TPM_BAD_INPUT;
    else *value = list->tpmProperty[0].value;
    Esys_Free(data);
    return rc;
}

/* ---- The storage primary: tpm2-openssl 1.x's ECC template, byte for byte, so keys
 * tpm2-openssl made load here (tpm2-provider-pkey.c, primaryEccTemplate). ---- */

static const TPM2B_PUBLIC storage_primary_template = {
    .publicArea = {
        .type = TPM2_ALG_ECC,
        .nameAlg = TPM2_ALG_SHA256,
        .objectAttributes = TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT
            | TPMA_OBJECT_NODA | TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN,
        .authPolicy = { .size = 0 },
        .parameters.eccDetail = {
            .symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB },
            .scheme = { .scheme = TPM2_ALG_NULL },
            .curveID = TPM2_ECC_NIST_P256,
            .kdf = { .scheme = TPM2_ALG_NULL },
        },
        .unique.ecc = { .x.size = 0, .y.size = 0 },
    },
};

static TSS2_RC create_primary(CLatchkey_tpm *tpm, ESYS_TR hierarchy, const TPM2B_PUBLIC *template,
                              ESYS_TR *object, TPM2B_PUBLIC **public_out) {
    TPM2B_SENSITIVE_CREATE sensitive = { 0 };
    TPM2B_DATA outside = { 0 };
    TPML_PCR_SELECTION pcrs = { 0 };
    /* tpm2-openssl takes the owner hierarchy's authorization from this variable; so do we. */
    if (hierarchy == ESYS_TR_RH_OWNER) {
        TPM2B_AUTH auth = { 0 };
        const char *given = getenv("TPM2OPENSSL_PARENT_AUTH");
        if (given != NULL) {
            size_t length = strlen(given);
            if (length > sizeof auth.buffer) return CLATCHKEY_TPM_BAD_INPUT;
            memcpy(auth.buffer, given, length);
            auth.size = (UINT16)length;
        }
        TSS2_RC rc = Esys_TR_SetAuth(tpm->esys, hierarchy, &auth);
        if (rc != TSS2_RC_SUCCESS) return rc;
    }
    return Esys_CreatePrimary(tpm->esys, hierarchy, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                              &sensitive, template, &outside, &pcrs, object, public_out, NULL, NULL, NULL);
}

/* Loads a marshalled TPM2B_PUBLIC + TPM2B_PRIVATE under `parent`. */
static TSS2_RC load(CLatchkey_tpm *tpm, ESYS_TR parent, const uint8_t *public_bytes, size_t public_length,
                    const uint8_t *private_bytes, size_t private_length, ESYS_TR *object) {
    TPM2B_PUBLIC public_area = { 0 };
    TPM2B_PRIVATE private_area = { 0 };
    size_t offset = 0;
    if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(public_bytes, public_length, &offset, &public_area) != TSS2_RC_SUCCESS
        || offset != public_length) return CLATCHKEY_TPM_BAD_INPUT;
    offset = 0;
    if (Tss2_MU_TPM2B_PRIVATE_Unmarshal(private_bytes, private_length, &offset, &private_area) != TSS2_RC_SUCCESS
        || offset != private_length) return CLATCHKEY_TPM_BAD_INPUT;
    TSS2_RC rc = Esys_Load(tpm->esys, parent, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                           &private_area, &public_area, object);
    memset(&private_area, 0, sizeof private_area);
    tpm->failed_loading = rc != TSS2_RC_SUCCESS;
    return rc;
}

static void flush(CLatchkey_tpm *tpm, ESYS_TR *object) {
    if (*object != ESYS_TR_NONE) Esys_FlushContext(tpm->esys, *object);
    *object = ESYS_TR_NONE;
}

static int copy_out(const uint8_t *source, size_t length, uint8_t *destination, size_t *capacity) {
    if (length > *capacity) return 0;
    memcpy(destination, source, length);
    *capacity = length;
    return 1;
}

/* ---- The attestation key ---- */

static const TPM2B_PUBLIC attestation_key_template = {
    .publicArea = {
        .type = TPM2_ALG_ECC,
        .nameAlg = TPM2_ALG_SHA256,
        .objectAttributes = TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT
            | TPMA_OBJECT_NODA | TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN,
        .authPolicy = { .size = 0 },
        .parameters.eccDetail = {
            .symmetric = { .algorithm = TPM2_ALG_NULL },
            .scheme = { .scheme = TPM2_ALG_ECDSA, .details.ecdsa.hashAlg = TPM2_ALG_SHA256 },
            .curveID = TPM2_ECC_NIST_P256,
            .kdf = { .scheme = TPM2_ALG_NULL },
        },
        .unique.ecc = { .x.size = 0, .y.size = 0 },
    },
};

uint32_t CLatchkey_tpm_create_attestation_key(CLatchkey_tpm *tpm, uint8_t *public_bytes, size_t *public_length,
                                              uint8_t *private_bytes, size_t *private_length) {
    ESYS_TR primary = ESYS_TR_NONE;
    TSS2_RC rc = create_primary(tpm, ESYS_TR_RH_OWNER, &storage_primary_template, &primary, NULL);
    if (rc != TSS2_RC_SUCCESS) return rc;
    TPM2B_SENSITIVE_CREATE sensitive = { 0 };
    TPM2B_DATA outside = { 0 };
    TPML_PCR_SELECTION pcrs = { 0 };
    TPM2B_PUBLIC *created_public = NULL;
    TPM2B_PRIVATE *created_private = NULL;
    rc = Esys_Create(tpm->esys, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive,
                     &attestation_key_template, &outside, &pcrs, &created_private, &created_public, NULL, NULL, NULL);
    flush(tpm, &primary);
    if (rc != TSS2_RC_SUCCESS) return rc;
    size_t public_offset = 0, private_offset = 0;
    if (Tss2_MU_TPM2B_PUBLIC_Marshal(created_public, public_bytes, *public_length, &public_offset) != TSS2_RC_SUCCESS
        || Tss2_MU_TPM2B_PRIVATE_Marshal(created_private, private_bytes, *private_length, &private_offset) != TSS2_RC_SUCCESS) {
        rc = CLATCHKEY_TPM_BAD_INPUT;
    } else {
        *public_length = public_offset;
        *private_length = private_offset;
    }
    Esys_Free(created_public);
    Esys_Free(created_private);
    return rc;
}

uint32_t CLatchkey_tpm_certify(CLatchkey_tpm *tpm, const uint8_t *key_public, size_t key_public_length,
                               const uint8_t *key_private, size_t key_private_length, const uint8_t *ak_public,
                               size_t ak_public_length, const uint8_t *ak_private, size_t ak_private_length,
                               const uint8_t *qualifying, size_t qualifying_length, uint8_t *attest,
                               size_t *attest_length, uint8_t *signature_r, size_t *signature_r_length,
                               uint8_t *signature_s, size_t *signature_s_length) {
    TPM2B_DATA qualifying_data = { 0 };
    if (qualifying_length > sizeof qualifying_data.buffer) return CLATCHKEY_TPM_BAD_INPUT;
    memcpy(qualifying_data.buffer, qualifying, qualifying_length);
    qualifying_data.size = (UINT16)qualifying_length;

    ESYS_TR primary = ESYS_TR_NONE, key = ESYS_TR_NONE, ak = ESYS_TR_NONE;
    TPM2B_ATTEST *info = NULL;
    TPMT_SIGNATURE *signature = NULL;
    TSS2_RC rc = create_primary(tpm, ESYS_TR_RH_OWNER, &storage_primary_template, &primary, NULL);
    if (rc == TSS2_RC_SUCCESS) rc = load(tpm, primary, key_public, key_public_length, key_private, key_private_length, &key);
    if (rc == TSS2_RC_SUCCESS) rc = load(tpm, primary, ak_public, ak_public_length, ak_private, ak_private_length, &ak);
    /* Three objects would fill swtpm; the primary is not needed once both are loaded. */
    flush(tpm, &primary);
    if (rc == TSS2_RC_SUCCESS) {
        TPMT_SIG_SCHEME scheme = { .scheme = TPM2_ALG_NULL }; /* the AK's own: ECDSA, SHA-256 */
        rc = Esys_Certify(tpm->esys, key, ak, ESYS_TR_PASSWORD, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                          &qualifying_data, &scheme, &info, &signature);
    }
    flush(tpm, &key);
    flush(tpm, &ak);
    if (rc == TSS2_RC_SUCCESS) {
        if (signature->sigAlg != TPM2_ALG_ECDSA
            || !copy_out(info->attestationData, info->size, attest, attest_length)
            || !copy_out(signature->signature.ecdsa.signatureR.buffer, signature->signature.ecdsa.signatureR.size,
                         signature_r, signature_r_length)
            || !copy_out(signature->signature.ecdsa.signatureS.buffer, signature->signature.ecdsa.signatureS.size,
                         signature_s, signature_s_length)) {
            rc = CLATCHKEY_TPM_BAD_INPUT;
        }
    }
    Esys_Free(info);
    Esys_Free(signature);
    return rc;
}

/* ---- The endorsement key and its certificate ---- */

uint32_t CLatchkey_tpm_nv_read(CLatchkey_tpm *tpm, uint32_t index, uint8_t *data, size_t *length) {
    ESYS_TR nv = ESYS_TR_NONE;
    TSS2_RC rc = Esys_TR_FromTPMPublic(tpm->esys, index, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nv);
    if (rc != TSS2_RC_SUCCESS) return rc;
    TPM2B_NV_PUBLIC *public_area = NULL;
    rc = Esys_NV_ReadPublic(tpm->esys, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &public_area, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        Esys_TR_Close(tpm->esys, &nv);
        return rc;
    }
    size_t size = public_area->nvPublic.dataSize;
    TPMA_NV attributes = public_area->nvPublic.attributes;
    Esys_Free(public_area);
    if (size > *length) {
        Esys_TR_Close(tpm->esys, &nv);
        return CLATCHKEY_TPM_BAD_INPUT;
    }
    uint32_t chunk = 0;
    if (CLatchkey_tpm_property(tpm, TPM2_PT_NV_BUFFER_MAX, &chunk) != TSS2_RC_SUCCESS || chunk == 0 || chunk > 1024) chunk = 512;
    /* EK certificate indices allow reads by the owner (TCG EK Credential Profile, 2.2.1.5);
     * others may only allow their own authorization. */
    ESYS_TR authority = (attributes & TPMA_NV_OWNERREAD) ? ESYS_TR_RH_OWNER : nv;
    size_t done = 0;
    while (rc == TSS2_RC_SUCCESS && done < size) {
        UINT16 part = (UINT16)((size - done) < chunk ? (size - done) : chunk);
        TPM2B_MAX_NV_BUFFER *read = NULL;
        rc = Esys_NV_Read(tpm->esys, authority, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, part, (UINT16)done, &read);
        if (rc == TSS2_RC_SUCCESS) {
            if (read->size != part) rc = CLATCHKEY_TPM_BAD_INPUT;
            else memcpy(data + done, read->buffer, part);
            done += part;
        }
        Esys_Free(read);
    }
    Esys_TR_Close(tpm->esys, &nv);
    if (rc == TSS2_RC_SUCCESS) *length = size;
    return rc;
}

/* TCG EK Credential Profile 2.0, B.3.3, template L-1: RSA 2048, AES-128-CFB, the policy
 * PolicySecret(TPM_RH_ENDORSEMENT) (B.3.2), unique 256 zero bytes. */
static TPM2B_PUBLIC endorsement_key_template(void) {
    static const uint8_t policy[32] = {
        0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xB3, 0xF8, 0x1A, 0x90, 0xCC, 0x8D, 0x46, 0xA5, 0xD7, 0x24,
        0xFD, 0x52, 0xD7, 0x6E, 0x06, 0x52, 0x0B, 0x64, 0xF2, 0xA1, 0xDA, 0x1B, 0x33, 0x14, 0x69, 0xAA,
    };
    TPM2B_PUBLIC template = {
        .publicArea = {
            .type = TPM2_ALG_RSA,
            .nameAlg = TPM2_ALG_SHA256,
            .objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
                | TPMA_OBJECT_ADMINWITHPOLICY | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT,
            .parameters.rsaDetail = {
                .symmetric = { .algorithm = TPM2_ALG_AES, .keyBits.aes = 128, .mode.aes = TPM2_ALG_CFB },
                .scheme = { .scheme = TPM2_ALG_NULL },
                .keyBits = 2048,
                .exponent = 0,
            },
        },
    };
    template.publicArea.authPolicy.size = sizeof policy;
    memcpy(template.publicArea.authPolicy.buffer, policy, sizeof policy);
    template.publicArea.unique.rsa.size = 256;
    return template;
}

uint32_t CLatchkey_tpm_endorsement_key_rsa(CLatchkey_tpm *tpm, uint8_t *modulus, size_t *modulus_length) {
    TPM2B_PUBLIC template = endorsement_key_template();
    ESYS_TR ek = ESYS_TR_NONE;
    TPM2B_PUBLIC *public_area = NULL;
    TSS2_RC rc = create_primary(tpm, ESYS_TR_RH_ENDORSEMENT, &template, &ek, &public_area);
    flush(tpm, &ek);
    if (rc != TSS2_RC_SUCCESS) return rc;
    if (!copy_out(public_area->publicArea.unique.rsa.buffer, public_area->publicArea.unique.rsa.size, modulus, modulus_length))
        rc = CLATCHKEY_TPM_BAD_INPUT;
    Esys_Free(public_area);
    return rc;
}

uint32_t CLatchkey_tpm_activate_credential(CLatchkey_tpm *tpm, const uint8_t *ak_public, size_t ak_public_length,
                                           const uint8_t *ak_private, size_t ak_private_length,
                                           const uint8_t *credential, size_t credential_length,
                                           const uint8_t *secret, size_t secret_length,
                                           uint8_t *recovered, size_t *recovered_length) {
    TPM2B_ID_OBJECT credential_blob = { 0 };
    TPM2B_ENCRYPTED_SECRET encrypted_secret = { 0 };
    size_t offset = 0;
    if (Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(credential, credential_length, &offset, &credential_blob) != TSS2_RC_SUCCESS
        || offset != credential_length) return CLATCHKEY_TPM_BAD_INPUT;
    offset = 0;
    if (Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(secret, secret_length, &offset, &encrypted_secret) != TSS2_RC_SUCCESS
        || offset != secret_length) return CLATCHKEY_TPM_BAD_INPUT;

    ESYS_TR primary = ESYS_TR_NONE, ak = ESYS_TR_NONE, ek = ESYS_TR_NONE, session = ESYS_TR_NONE;
    TPM2B_DIGEST *certificate_info = NULL;
    TSS2_RC rc = create_primary(tpm, ESYS_TR_RH_OWNER, &storage_primary_template, &primary, NULL);
    if (rc == TSS2_RC_SUCCESS) rc = load(tpm, primary, ak_public, ak_public_length, ak_private, ak_private_length, &ak);
    flush(tpm, &primary);
    TPM2B_PUBLIC template = endorsement_key_template();
    if (rc == TSS2_RC_SUCCESS) rc = create_primary(tpm, ESYS_TR_RH_ENDORSEMENT, &template, &ek, NULL);
    TPMT_SYM_DEF no_symmetric = { .algorithm = TPM2_ALG_NULL };
    if (rc == TSS2_RC_SUCCESS)
        rc = Esys_StartAuthSession(tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                   NULL, TPM2_SE_POLICY, &no_symmetric, TPM2_ALG_SHA256, &session);
    if (rc == TSS2_RC_SUCCESS)
        rc = Esys_PolicySecret(tpm->esys, ESYS_TR_RH_ENDORSEMENT, session, ESYS_TR_PASSWORD, ESYS_TR_NONE,
                               ESYS_TR_NONE, NULL, NULL, NULL, 0, NULL, NULL);
    if (rc == TSS2_RC_SUCCESS) {
        /* The session ends with the command that uses it. */
        Esys_TRSess_SetAttributes(tpm->esys, session, 0, TPMA_SESSION_CONTINUESESSION);
        rc = Esys_ActivateCredential(tpm->esys, ak, ek, ESYS_TR_PASSWORD, session, ESYS_TR_NONE,
                                     &credential_blob, &encrypted_secret, &certificate_info);
        if (rc == TSS2_RC_SUCCESS) session = ESYS_TR_NONE;
    }
    flush(tpm, &session);
    flush(tpm, &ak);
    flush(tpm, &ek);
    if (rc == TSS2_RC_SUCCESS && !copy_out(certificate_info->buffer, certificate_info->size, recovered, recovered_length))
        rc = CLATCHKEY_TPM_BAD_INPUT;
    if (certificate_info != NULL) {
        memset(certificate_info->buffer, 0, certificate_info->size);
        Esys_Free(certificate_info);
    }
    return rc;
}
