#!/usr/bin/env python3
"""A standard OpenID Connect relying party for the browser tests, written with Authlib's
Flask client (not Latchkey): the kind of web app (a wiki, a dashboard) a team signs in to
Latchkey's provider through a browser. It discovers the provider (OIDC Discovery 1.0),
sends an authorization request with PKCE S256, state and nonce, takes the redirect,
redeems the code as a public client, and validates the ID token itself (signature from
the provider's JWKS, iss, aud, exp, nonce: OIDC Core 3.1.3.7).

Usage: authlib_relying_party.py ISSUER CLIENT_ID
  GET /login      starts the sign-in (a redirect to the provider's /authorize)
  GET /callback   finishes it; answers JSON {"verified": true, "sub", "name", "iss"}
                  or {"verified": false, "error"}
Prints "READY http://127.0.0.1:PORT" once it listens; runs until killed.
"""
import os
import sys

from authlib.integrations.flask_client import OAuth
from flask import Flask, jsonify, request
from werkzeug.serving import make_server

ISSUER, CLIENT_ID = sys.argv[1], sys.argv[2]

app = Flask(__name__)
app.secret_key = os.urandom(32)
oauth = OAuth(app)
oauth.register(
    "latchkey",
    client_id=CLIENT_ID,
    server_metadata_url=ISSUER.rstrip("/") + "/.well-known/openid-configuration",
    client_kwargs={"scope": "openid profile", "code_challenge_method": "S256", "token_endpoint_auth_method": "none"},
)
BASE = None


@app.get("/login")
def login():
    return oauth.latchkey.authorize_redirect(BASE + "/callback")


@app.get("/callback")
def callback():
    if "error" in request.args:
        return jsonify(verified=False, error=request.args["error"], iss=request.args.get("iss"))
    try:
        token = oauth.latchkey.authorize_access_token()
    except Exception as error:  # the RP's own refusal, reported to the test
        return jsonify(verified=False, error=f"{type(error).__name__}: {error}")
    claims = token["userinfo"]
    return jsonify(verified=True, sub=claims["sub"], name=claims.get("name"), iss=claims["iss"], aud=claims["aud"],
                   iss_parameter=request.args.get("iss"))


def main():
    global BASE
    server = make_server("127.0.0.1", 0, app, threaded=True)
    BASE = f"http://127.0.0.1:{server.server_port}"
    print(f"READY {BASE}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
