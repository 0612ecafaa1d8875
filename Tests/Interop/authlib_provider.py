#!/usr/bin/env python3
"""An independent OAuth 2.0 provider for the interop tests, written with Authlib (not
Latchkey): RFC 6749 client credentials with RFC 7523 private_key_jwt client
authentication, and the RFC 8628 device authorization grant, behind an RFC 8414
discovery document. Latchkey's CLI signs in to it as it would to Keycloak or Okta.

Authlib checks a client assertion's aud against its token endpoint URL (RFC 7523 §3 as
first written), so Latchkey's client is run with --assertion-audience token-endpoint here.

Test-only endpoints (the provider has no people and no pages, so the test plays both):
  POST /test/clients         {"client_id", "jwks"?, "grant_types": [...], "scope": "...",
                              "slow_down_first"?: true (its device codes' first poll is slow_down)}
  POST /test/device/decide   {"user_code", "approve": true|false}
  GET  /api/whoami           a resource: the bearer token's client and scope
Prints "READY <issuer>" once it listens on 127.0.0.1 (a free port); runs until killed.
"""
import json
import sys
import threading
import time

from authlib.integrations.flask_oauth2 import AuthorizationServer, ResourceProtector, current_token
from authlib.jose import JsonWebKey
from authlib.oauth2.rfc6749 import ClientMixin, grants
from authlib.oauth2.rfc6750 import BearerTokenValidator
from authlib.oauth2.rfc7523 import JWTBearerClientAssertion
from authlib.oauth2.rfc8628 import DeviceAuthorizationEndpoint, DeviceCodeGrant, DeviceCredentialDict
from flask import Flask, jsonify, request
from werkzeug.serving import make_server

CLIENTS = {}
TOKENS = {}
DEVICE_CODES = {}
DECISIONS = {}
JTIS = set()
LOCK = threading.Lock()
ISSUER = None


class Client(ClientMixin):
    def __init__(self, client_id, jwks, grant_types, scope, slow_down_first=False):
        self.slow_down_first = slow_down_first
        self.client_id = client_id
        self.jwks = jwks
        self.grant_types = grant_types
        self.scope = scope

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        if not scope:
            return ""
        allowed = set(self.scope.split())
        return " ".join(s for s in scope.split() if s in allowed)

    def check_redirect_uri(self, redirect_uri):
        return False

    def check_client_secret(self, client_secret):
        return False

    def check_endpoint_auth_method(self, method, endpoint):
        return method == ("private_key_jwt" if self.jwks else "none")

    def check_response_type(self, response_type):
        return False

    def check_grant_type(self, grant_type):
        return grant_type in self.grant_types


class PrivateKeyJWT(JWTBearerClientAssertion):
    CLIENT_AUTH_METHOD = "private_key_jwt"

    def validate_jti(self, claims, jti):
        key = f"{claims['sub']}:{jti}"
        with LOCK:
            if key in JTIS:
                return False
            JTIS.add(key)
            return True

    def resolve_client_public_key(self, client, headers):
        for key in client.jwks.get("keys", []):
            if key.get("kid") == headers.get("kid"):
                return JsonWebKey.import_key(key)
        raise ValueError("no key of the client's set has this kid")


class ClientCredentialsGrant(grants.ClientCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["private_key_jwt"]


class DeviceCodeGrantWithPolling(DeviceCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["none", "private_key_jwt"]

    def query_device_credential(self, device_code):
        with LOCK:
            data = DEVICE_CODES.get(device_code)
        return DeviceCredentialDict(data) if data else None

    def query_user_grant(self, user_code):
        with LOCK:
            decision = DECISIONS.get(user_code)
        if decision is None:
            return None
        return {"id": "person-1"}, decision

    def should_slow_down(self, credential):
        # RFC 8628 §3.5: polled before the interval passed since the last poll.
        with LOCK:
            data = DEVICE_CODES[credential["device_code"]]
            now = time.time()
            last = data.get("last_poll")
            data["last_poll"] = now
            client = CLIENTS.get(data["client_id"])
            forced = client is not None and client.slow_down_first and not data.get("slowed")
            if forced or (last is not None and now - last < data["interval"]):
                data["slowed"] = True
                data["interval"] += 5
                return True
            return False


class DeviceEndpoint(DeviceAuthorizationEndpoint):
    CLIENT_AUTH_METHODS = ["none", "private_key_jwt"]
    EXPIRES_IN = 600
    INTERVAL = 1

    def get_verification_uri(self):
        return ISSUER + "/device"

    def save_device_credential(self, client_id, scope, data):
        record = dict(data, client_id=client_id, scope=scope, expires_at=int(time.time()) + self.EXPIRES_IN)
        with LOCK:
            DEVICE_CODES[data["device_code"]] = record


class TokenValidator(BearerTokenValidator):
    def authenticate_token(self, token_string):
        with LOCK:
            return TOKENS.get(token_string)


class StoredToken(dict):
    def is_expired(self):
        return self["expires_at"] < time.time()

    def is_revoked(self):
        return False

    def get_scope(self):
        return self.get("scope", "")


def query_client(client_id):
    with LOCK:
        return CLIENTS.get(client_id)


def save_token(token, req):
    with LOCK:
        TOKENS[token["access_token"]] = StoredToken(
            token, client_id=req.client.client_id, expires_at=time.time() + token.get("expires_in", 3600)
        )


app = Flask(__name__)
server = AuthorizationServer(app, query_client=query_client, save_token=save_token)
resource = ResourceProtector()
resource.register_token_validator(TokenValidator())


@app.get("/.well-known/openid-configuration")
def discovery():
    return jsonify({
        "issuer": ISSUER,
        "authorization_endpoint": ISSUER + "/authorize",
        "token_endpoint": ISSUER + "/token",
        "jwks_uri": ISSUER + "/jwks",
        "device_authorization_endpoint": ISSUER + "/device_authorization",
        "grant_types_supported": ["client_credentials", "urn:ietf:params:oauth:grant-type:device_code"],
        "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"],
        "token_endpoint_auth_signing_alg_values_supported": ["ES256"],
    })


@app.get("/jwks")
def jwks():
    return jsonify({"keys": []})


@app.post("/token")
def token():
    return server.create_token_response()


@app.post("/device_authorization")
def device_authorization():
    return server.create_endpoint_response(DeviceEndpoint.ENDPOINT_NAME)


@app.post("/test/clients")
def register():
    body = request.get_json()
    client = Client(body["client_id"], body.get("jwks"), body["grant_types"], body.get("scope", ""), bool(body.get("slow_down_first")))
    with LOCK:
        CLIENTS[client.client_id] = client
    return jsonify({"registered": client.client_id}), 201


@app.post("/test/device/decide")
def decide():
    body = request.get_json()
    with LOCK:
        if not any(d["user_code"] == body["user_code"] for d in DEVICE_CODES.values()):
            return jsonify({"error": "unknown user code"}), 404
        DECISIONS[body["user_code"]] = bool(body["approve"])
    return jsonify({"decided": body["user_code"]})


@app.get("/api/whoami")
@resource()
def whoami():
    return jsonify({"client_id": current_token["client_id"], "scope": current_token.get_scope()})


def main():
    global ISSUER
    http = make_server("127.0.0.1", 0, app, threaded=True)
    ISSUER = f"http://127.0.0.1:{http.server_port}"
    # Authlib checks the assertion's aud against this URL: its token endpoint.
    server.register_client_auth_method(PrivateKeyJWT.CLIENT_AUTH_METHOD, PrivateKeyJWT(ISSUER + "/token"))
    server.register_grant(ClientCredentialsGrant)
    server.register_grant(DeviceCodeGrantWithPolling)
    server.register_endpoint(DeviceEndpoint)
    print(f"READY {ISSUER}", flush=True)
    http.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
