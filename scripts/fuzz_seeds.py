"""Writes seed corpora for the fuzz harnesses (Fuzz/) from the test vectors in Vectors/.

Usage: fuzz_seeds.py VECTORS_DIR OUTPUT_DIR   (one subdirectory per harness)
"""
import base64
import json
import os
import sys


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main() -> int:
    vectors, out = sys.argv[1], sys.argv[2]
    seeds: dict[str, list[bytes]] = {name: [] for name in [
        "fuzz-cbor", "fuzz-authenticator-data", "fuzz-webauthn-json", "fuzz-jws", "fuzz-jwks",
        "fuzz-links", "fuzz-transfer-code", "fuzz-vault-record", "fuzz-provider-bodies"]}

    # WebAuthn L3 §16 vectors: CBOR, authenticator data, client data, L3 JSON.
    webauthn = json.load(open(os.path.join(vectors, "webauthn-l3-section16.json")))
    for case in webauthn["cases"]:
        attestation = bytes.fromhex(case["reg_attestationObject"])
        auth_data = bytes.fromhex(case["auth_authenticatorData"])
        seeds["fuzz-cbor"].append(attestation)
        seeds["fuzz-authenticator-data"] += [attestation, auth_data]
        credential = b64u(bytes.fromhex(case["credentialId"]))
        seeds["fuzz-webauthn-json"] += [
            json.dumps({"id": credential, "rawId": credential, "type": "public-key", "response": {
                "clientDataJSON": b64u(bytes.fromhex(case["reg_clientDataJSON"])),
                "attestationObject": b64u(attestation)}}).encode(),
            json.dumps({"id": credential, "rawId": credential, "type": "public-key", "response": {
                "clientDataJSON": b64u(bytes.fromhex(case["auth_clientDataJSON"])),
                "authenticatorData": b64u(auth_data),
                "signature": b64u(bytes.fromhex(case["auth_signature"]))}}).encode(),
            bytes.fromhex(case["reg_clientDataJSON"]),
        ]
    seeds["fuzz-webauthn-json"] += [
        json.dumps({"publicKey": {"rp": {"id": "example.com", "name": "Example"}, "user": {"id": "dXNlcg", "name": "u", "displayName": "U"},
                    "challenge": "Y2hhbGxlbmdl", "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
                    "excludeCredentials": [{"type": "public-key", "id": "AAAA"}], "attestation": "none"}}).encode(),
        json.dumps({"challenge": "Y2hhbGxlbmdl", "rpId": "example.com", "allowCredentials": [{"type": "public-key", "id": "AAAA"}]}).encode(),
    ]

    # JOSE: RFC 7515 A.2/A.3 JWS, RFC 7638 and 7515 JWKs, a discovery document.
    for name in ["rfc7515-a3-es256.json", "rfc7515-a2-rs256.json", "rfc8037-a4-ed25519.json"]:
        document = json.load(open(os.path.join(vectors, name)))
        if "jws" in document:
            seeds["fuzz-jws"].append(str(document["jws"]).encode())
        if "jwk" in document:
            seeds["fuzz-jwks"].append(json.dumps({"keys": [document["jwk"]]}).encode())
    thumbprint = json.load(open(os.path.join(vectors, "rfc7638-thumbprint.json")))
    seeds["fuzz-jwks"].append(json.dumps({"keys": [thumbprint["jwk"]]}).encode())
    seeds["fuzz-jwks"].append(json.dumps({
        "issuer": "https://id.example.com", "authorization_endpoint": "https://id.example.com/authorize",
        "token_endpoint": "https://id.example.com/token", "jwks_uri": "https://id.example.com/jwks",
        "code_challenge_methods_supported": ["S256"]}).encode())

    token = "vOdKvNru0YxTvQP5rWHet6nNuf7s0XhomF3gn-Vrhsk"
    seeds["fuzz-links"] += [s.encode() for s in [
        f"https://id.example.com/v1/bind/job1?token={token}",
        f"myapp://bind?api_base_url=https://id.example.com/t&job_id=job1&token={token}",
        "https://id.example.com/v1/authenticate/session1",
        "myapp://authenticate?api_base_url=http://127.0.0.1:8080&session_id=s1"]]
    seeds["fuzz-transfer-code"] += [b"7KQ-4M2-X9A", b"7kq 4m2 x9a", b"OIL-ABC-DEF"]

    seeds["fuzz-vault-record"] += [
        json.dumps({"format": 1, "handle": "a" * 32, "algorithm": "ES256", "publicKey": "AAAA", "metadata": "e30",
                    "createdAt": 1.0, "updatedAt": 1.0, "sealed": "AAAA", "mac": "AAAA"}).encode(),
        json.dumps({"format": 1, "keyKind": "scrypt", "salt": "AAAA", "scrypt": {"costFactor": 16384, "blockSize": 8, "parallelism": 1},
                    "keyCheck": "AAAA"}).encode()]

    seeds["fuzz-provider-bodies"] += [
        b"grant_type=authorization_code&code=abc&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback&code_verifier=x&client_id=latchkey-cli",
        json.dumps({"username": "ada"}).encode(), json.dumps({"code": "123456"}).encode(),
        json.dumps({"credential": "AAAA"}).encode()]

    for name, items in seeds.items():
        directory = os.path.join(out, name)
        os.makedirs(directory, exist_ok=True)
        for index, item in enumerate(items):
            with open(os.path.join(directory, f"seed-{index:03d}"), "wb") as handle:
                handle.write(item)
    return 0


if __name__ == "__main__":
    sys.exit(main())
