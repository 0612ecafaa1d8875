#!/usr/bin/env python3
"""Verifies a registration with `tpm` attestation made by Latchkey on a (software) TPM, with
two independent relying-party libraries: py_webauthn 3.x (the whole registration, with the
attestation CA's root as the only trusted root for fmt tpm) and python-fido2 2.x (the
statement, then the certificate path to that root).

Input: a JSON file written by LatchkeyIdPTests (AttestationAuthorityTests) with rpId, origin,
challenge (base64url), registration (RegistrationResponseJSON) and root (PEM). Exit status 0
only if both accept. Prints one line per library.
"""
import base64
import hashlib
import json
import sys

import webauthn
from webauthn.helpers.structs import AttestationFormat
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from fido2.attestation import TpmAttestation, verify_x509_chain
from fido2.webauthn import AttestationObject


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def main():
    with open(sys.argv[1]) as handle:
        case = json.load(handle)
    root_pem = case["root"].encode()
    verified = webauthn.verify_registration_response(
        credential=json.dumps(case["registration"]),
        expected_challenge=b64url_decode(case["challenge"]),
        expected_origin=case["origin"],
        expected_rp_id=case["rpId"],
        require_user_verification=True,
        pem_root_certs_bytes_by_fmt={AttestationFormat.TPM: [root_pem]},
    )
    print(f"py_webauthn: fmt={getattr(verified.fmt, 'value', verified.fmt)} aaguid={verified.aaguid}")

    response = case["registration"]["response"]
    attestation = AttestationObject(b64url_decode(response["attestationObject"]))
    client_data_hash = hashlib.sha256(b64url_decode(response["clientDataJSON"])).digest()
    result = TpmAttestation().verify(attestation.att_stmt, attestation.auth_data, client_data_hash)
    root_der = x509.load_pem_x509_certificate(root_pem).public_bytes(Encoding.DER)
    verify_x509_chain(result.trust_path + [root_der])
    print(f"python-fido2: {type(result.attestation_type).__name__}.{result.attestation_type.name}, trust path of {len(result.trust_path)}")


if __name__ == "__main__":
    main()
