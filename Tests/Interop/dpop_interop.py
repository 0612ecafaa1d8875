#!/usr/bin/env python3
"""Verifies DPoP proofs made by Latchkey (RFC 9449 section 4.2) with an independent JOSE
implementation, joserfc.

Input: a JSON file written by LatchkeyOAuthTests (DPoPTests), a list of cases with the
proof, the request's method and URL (htu as sent), the access token when one is
presented, and the key's expected RFC 7638 thumbprint. Exit status 0 only if every proof
verifies and its header and claims are as RFC 9449 requires. Prints one line per case.
"""
import base64
import hashlib
import json
import sys

from joserfc import jws
from joserfc.jwk import JWKRegistry

PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi", "oth", "k"}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def check(case):
    proof = case["proof"]
    header = jws.extract_compact(proof.encode()).protected
    if header.get("typ") != "dpop+jwt":
        return "typ is not dpop+jwt"
    if header.get("alg") not in ("ES256", "EdDSA"):
        return "alg %r" % header.get("alg")
    jwk = header.get("jwk")
    if not isinstance(jwk, dict) or PRIVATE_MEMBERS & set(jwk):
        return "jwk missing or carrying private members"
    key = JWKRegistry.import_key(jwk)
    verified = jws.deserialize_compact(proof, key, algorithms=["ES256", "EdDSA"])
    claims = json.loads(verified.payload)
    if claims.get("htm") != case["method"] or claims.get("htu") != case["htu"]:
        return "htm or htu differ: %r %r" % (claims.get("htm"), claims.get("htu"))
    if not isinstance(claims.get("iat"), int) or len(claims.get("jti", "")) < 22:
        return "iat or jti malformed"
    token = case.get("accessToken")
    if token is not None and claims.get("ath") != b64url(hashlib.sha256(token.encode()).digest()):
        return "ath is not the access token's hash"
    if key.thumbprint() != case["jkt"]:
        return "thumbprint %s, expected %s" % (key.thumbprint(), case["jkt"])
    return None


def main():
    with open(sys.argv[1]) as handle:
        cases = json.load(handle)
    failures = 0
    for index, case in enumerate(cases):
        try:
            problem = check(case)
        except Exception as error:  # a library refusal is a failure of this case
            problem = "%s: %s" % (type(error).__name__, error)
        print("case %d (%s): %s" % (index, case.get("alg"), problem or "ok"))
        failures += problem is not None
    sys.exit(1 if failures or not cases else 0)


if __name__ == "__main__":
    main()
