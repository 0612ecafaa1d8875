#!/usr/bin/env python3
"""Verifies registrations and assertions made by Latchkey's software authenticator with
two independent relying-party libraries: py_webauthn 3.x and python-fido2 2.x.

Input: a JSON file written by LatchkeyWebAuthnTests (InteropTests), a list of cases with
rpId, origin, the registration challenge and RegistrationResponseJSON, and the assertion
challenge and AuthenticationResponseJSON. Exit status 0 only if every case verifies with
both libraries. Prints one line per case and library.
"""
import base64
import json
import sys

import webauthn
from fido2.server import Fido2Server
from fido2.webauthn import PublicKeyCredentialRpEntity, UserVerificationRequirement


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def check_py_webauthn(case):
    registration = webauthn.verify_registration_response(
        credential=json.dumps(case["registration"]),
        expected_challenge=b64url_decode(case["registrationChallenge"]),
        expected_origin=case["origin"],
        expected_rp_id=case["rpId"],
        require_user_verification=True,
    )
    authentication = webauthn.verify_authentication_response(
        credential=json.dumps(case["assertion"]),
        expected_challenge=b64url_decode(case["assertionChallenge"]),
        expected_rp_id=case["rpId"],
        expected_origin=case["origin"],
        credential_public_key=registration.credential_public_key,
        credential_current_sign_count=registration.sign_count,
        require_user_verification=True,
    )
    return f"fmt={registration.fmt} sign_count={authentication.new_sign_count}"


def check_fido2(case):
    server = Fido2Server(
        PublicKeyCredentialRpEntity(name="Latchkey interop", id=case["rpId"]),
        verify_origin=lambda origin: origin == case["origin"],
    )
    registration_state = {
        "challenge": case["registrationChallenge"],
        "user_verification": UserVerificationRequirement.REQUIRED,
    }
    auth_data = server.register_complete(registration_state, case["registration"])
    assertion_state = {
        "challenge": case["assertionChallenge"],
        "user_verification": UserVerificationRequirement.REQUIRED,
    }
    credential = server.authenticate_complete(assertion_state, [auth_data.credential_data], case["assertion"])
    return f"credential {len(credential.credential_id)} bytes, alg {credential.public_key[3]}"


def main(path):
    with open(path) as handle:
        cases = json.load(handle)
    failures = 0
    for case in cases:
        for name, check in (("py_webauthn", check_py_webauthn), ("python-fido2", check_fido2)):
            try:
                print(f"{case['name']}: {name} ok ({check(case)})")
            except Exception as error:  # report every failure, then fail
                failures += 1
                print(f"{case['name']}: {name} FAILED: {type(error).__name__}: {error}")
    print(f"interop checks: {len(cases) * 2 - failures} of {len(cases) * 2} verified")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
