#!/usr/bin/env python3
"""A peer identity provider for the benchmark (docs/PERFORMANCE.md, "A Python peer"):
the same passkey sign-in as `latchkey serve`'s redirect flow, written the way a Python team
would write it, with Flask, py_webauthn (the WebAuthn relying party) and Authlib (the
token endpoint, PKCE and the ES256 ID token). `latchkey-bench` binds its clients here and
signs them in with the same `Embedded.authenticate`, reading this process's CPU from /proc,
so Latchkey's CPU per sign-in stands next to a peer's doing the same ceremony.

It speaks docs/PROTOCOL.md sections 1 to 3 (discovery, JWKS, bind, /authorize with
`Accept: application/json`, the authenticate URL's options and assertion, /token), for
the public client `latchkey-cli` only, state in memory. Test-only endpoint:
  POST /test/identities {"username"}  ->  {"bindURL"}
Prints "READY <issuer>" once it listens on 127.0.0.1 (a free port); runs until killed.
"""
import base64
import json
import secrets
import sys
import threading
import time
from urllib.parse import urlencode

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.jose import JsonWebKey
from authlib.oauth2.rfc6749 import AuthorizationCodeMixin, ClientMixin, grants
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oidc.core import OpenIDCode, UserInfo
from flask import Flask, jsonify, redirect, request
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers.structs import AttestationConveyancePreference, UserVerificationRequirement
from werkzeug.serving import make_server

CLIENT_ID = "latchkey-cli"
ISSUER = None
RP_ID = "127.0.0.1"


def _full_length_key():
    """An ES256 key whose JWK coordinates are 32 bytes each. Authlib writes x and y without
    their leading zero bytes, which RFC 7518 section 6.2.1.2 forbids and Latchkey refuses,
    so about one key in 128 would make a run fail; such a key is drawn again."""
    while True:
        key = JsonWebKey.generate_key("EC", "P-256", is_private=True, options={"kid": "peer-es256"})
        public = key.as_dict(is_private=False)
        if all(len(public[c]) == 43 for c in ("x", "y")):
            return key


KEY = _full_length_key()
LOCK = threading.Lock()
IDENTITIES = {}  # id -> {"username"}
CREDENTIALS = {}  # credential id (bytes) -> {"identity", "public_key", "sign_count"}
BIND_JOBS = {}  # job -> {"identity", "token", "challenge"}
SESSIONS = {}  # session -> {"params", "challenge", "expires"}
CODES = {}  # code -> AuthorizationCode
TOKENS = {}


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Client(ClientMixin):
    def get_client_id(self):
        return CLIENT_ID

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        allowed = {"openid", "profile", "email", "offline_access"}
        return " ".join(s for s in (scope or "").split() if s in allowed)

    def check_redirect_uri(self, redirect_uri):
        return redirect_uri.startswith("http://127.0.0.1")

    def check_client_secret(self, client_secret):
        return False

    def check_endpoint_auth_method(self, method, endpoint):
        return method == "none"

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type in ("authorization_code", "refresh_token")


class AuthorizationCode(AuthorizationCodeMixin):
    def __init__(self, identity, params):
        self.identity = identity
        self.params = params
        self.auth_time = int(time.time())
        self.code_challenge = params.get("code_challenge")
        self.code_challenge_method = params.get("code_challenge_method")
        self.expires = time.time() + 60

    def get_redirect_uri(self):
        return self.params.get("redirect_uri")

    def get_scope(self):
        return Client().get_allowed_scope(self.params.get("scope"))

    def get_nonce(self):
        return self.params.get("nonce")

    def get_auth_time(self):
        return self.auth_time

    def get_acr(self):
        return None

    def get_amr(self):
        return ["pop", "swk"]


class User:
    def __init__(self, identity):
        self.id = identity

    def get_user_id(self):
        return self.id


class CodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]

    def save_authorization_code(self, code, request):  # codes are made after the assertion, below
        raise NotImplementedError

    def query_authorization_code(self, code, client):
        with LOCK:
            found = CODES.get(code)
        if found and found.expires > time.time():
            return found
        return None

    def delete_authorization_code(self, authorization_code):
        with LOCK:
            CODES.pop(next((k for k, v in CODES.items() if v is authorization_code), None), None)

    def authenticate_user(self, authorization_code):
        return User(authorization_code.identity)


class IDToken(OpenIDCode):
    def exists_nonce(self, nonce, request):
        return False

    def get_jwt_config(self, grant):
        return {"key": KEY, "alg": "ES256", "iss": ISSUER, "exp": 3600, "kid": "peer-es256"}

    def generate_user_info(self, user, scope):
        return UserInfo(sub=user.id)


def save_token(token, req):
    with LOCK:
        TOKENS[token["access_token"]] = token


app = Flask(__name__)
server = AuthorizationServer(app, query_client=lambda client_id: Client() if client_id == CLIENT_ID else None, save_token=save_token)
server.register_grant(CodeGrant, [CodeChallenge(required=True), IDToken(require_nonce=True)])


def error(code, description, status=400):
    response = jsonify({"error": code, "error_description": description})
    response.status_code = status
    return response


@app.get("/.well-known/openid-configuration")
def discovery():
    return jsonify({
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/authorize",
        "token_endpoint": f"{ISSUER}/token",
        "jwks_uri": f"{ISSUER}/jwks",
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"],
        "code_challenge_methods_supported": ["S256"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["openid", "profile", "email", "offline_access"],
        "authorization_response_iss_parameter_supported": True,
    })


@app.get("/jwks")
def jwks():
    return jsonify({"keys": [KEY.as_dict(is_private=False)]})


@app.get("/health")
def health():
    return jsonify({"status": "ok"})


@app.post("/test/identities")
def create_identity():
    username = (request.get_json(force=True) or {}).get("username")
    if not isinstance(username, str) or not username:
        return error("invalid_request", "username")
    identity, job, token = secrets.token_hex(16), secrets.token_urlsafe(16), secrets.token_urlsafe(32)
    with LOCK:
        IDENTITIES[identity] = {"username": username}
        BIND_JOBS[job] = {"identity": identity, "token": token, "challenge": None}
    return jsonify({"bindURL": f"{ISSUER}/v1/bind/{job}?token={token}"}), 201


def bind_job(job):
    with LOCK:
        found = BIND_JOBS.get(job)
    if not found or not secrets.compare_digest(found["token"], request.args.get("token", "")):
        return None
    return found


@app.get("/v1/bind/<job>")
def bind_options(job):
    found = bind_job(job)
    if not found:
        return error("invalid_request", "unknown or used bind link", 404)
    identity = found["identity"]
    options = generate_registration_options(
        rp_id=RP_ID, rp_name="Peer", user_id=identity.encode(), user_name=IDENTITIES[identity]["username"],
        attestation=AttestationConveyancePreference.NONE,
    )
    found["challenge"] = options.challenge
    return jsonify({"publicKey": json.loads(options_to_json(options)), "submit": f"{ISSUER}/v1/bind/{job}?token={found['token']}"})


@app.post("/v1/bind/<job>")
def bind_submit(job):
    found = bind_job(job)
    if not found or not found["challenge"]:
        return error("invalid_request", "unknown or used bind link", 404)
    try:
        verified = verify_registration_response(
            credential=request.get_data(as_text=True), expected_challenge=found["challenge"], expected_origin=ISSUER, expected_rp_id=RP_ID,
        )
    except Exception as failure:  # py_webauthn raises one of several types
        return error("invalid_registration", str(failure))
    with LOCK:
        BIND_JOBS.pop(job, None)
        CREDENTIALS[verified.credential_id] = {
            "identity": found["identity"], "public_key": verified.credential_public_key, "sign_count": verified.sign_count,
        }
    return jsonify({"credential": {"id": b64url(verified.credential_id), "identity": found["identity"]}}), 201


@app.get("/authorize")
def authorize():
    params = request.args.to_dict()
    if params.get("response_type") != "code" or params.get("client_id") != CLIENT_ID:
        return error("unsupported_response_type", "response_type=code for latchkey-cli")
    if not Client().check_redirect_uri(params.get("redirect_uri", "")):
        return error("invalid_request", "redirect_uri")
    if params.get("code_challenge_method") != "S256" or len(params.get("code_challenge", "")) != 43:
        return error("invalid_request", "PKCE S256 is required")
    session = secrets.token_urlsafe(24)
    with LOCK:
        SESSIONS[session] = {"params": params, "challenge": None, "expires": time.time() + 300}
    url = f"{ISSUER}/v1/authenticate/{session}"
    if "application/json" in request.headers.get("Accept", ""):
        return jsonify({"authenticateURL": url})
    return redirect(url)


def sign_in_session(session):
    with LOCK:
        found = SESSIONS.get(session)
    return found if found and found["expires"] > time.time() else None


@app.get("/v1/authenticate/<session>")
def authenticate_options(session):
    found = sign_in_session(session)
    if not found:
        return error("invalid_request", "unknown or expired session", 404)
    options = generate_authentication_options(rp_id=RP_ID, user_verification=UserVerificationRequirement.PREFERRED)
    found["challenge"] = options.challenge
    return jsonify({"publicKey": json.loads(options_to_json(options)), "submit": f"{ISSUER}/v1/authenticate/{session}", "application": CLIENT_ID})


@app.post("/v1/authenticate/<session>")
def authenticate_submit(session):
    found = sign_in_session(session)
    if not found or not found["challenge"]:
        return error("invalid_request", "unknown or expired session", 404)
    body = request.get_data(as_text=True)
    try:
        credential_id = b64url_decode(json.loads(body)["rawId"])
    except (ValueError, KeyError, TypeError):
        return error("invalid_request", "not an assertion")
    with LOCK:
        credential = CREDENTIALS.get(credential_id)
    if not credential:
        return error("invalid_credential", "unknown credential")
    try:
        verified = verify_authentication_response(
            credential=body, expected_challenge=found["challenge"], expected_rp_id=RP_ID, expected_origin=ISSUER,
            credential_public_key=credential["public_key"], credential_current_sign_count=credential["sign_count"],
        )
    except Exception as failure:  # py_webauthn raises one of several types
        return error("invalid_assertion", str(failure))
    user_handle = json.loads(body)["response"].get("userHandle")
    if user_handle and b64url_decode(user_handle) != credential["identity"].encode():
        return error("invalid_assertion", "userHandle is another account's")
    params = found["params"]
    code = secrets.token_urlsafe(32)
    with LOCK:
        SESSIONS.pop(session, None)
        credential["sign_count"] = verified.new_sign_count
        CODES[code] = AuthorizationCode(credential["identity"], params)
    query = {"code": code, "iss": ISSUER}
    if "state" in params:
        query["state"] = params["state"]
    return jsonify({"redirectURL": f"{params['redirect_uri']}?{urlencode(query)}"})


@app.post("/token")
def token():
    response = server.create_token_response()
    response.headers["Cache-Control"] = "no-store"
    return response


def main():
    global ISSUER
    # Werkzeug's request log stays on, as it is by default: `latchkey serve` writes a line
    # per request too.
    http = make_server("127.0.0.1", 0, app, threaded=True)
    ISSUER = f"http://127.0.0.1:{http.server_port}"
    print(f"READY {ISSUER}", flush=True)
    http.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
