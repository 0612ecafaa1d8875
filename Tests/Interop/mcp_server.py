"""An MCP server, the MCP Python SDK's own (mcp 2.x `MCPServer`, streamable HTTP, stateless
with JSON answers), whose tokens come from a Latchkey provider: the test suite's stand-in
for a team's MCP server behind `latchkey serve` (issue 76).

    mcp_server.py ISSUER PORT introspect ID SECRET
    mcp_server.py ISSUER PORT jwt

It is a resource server (RFC 9728 protected resource metadata, served by the SDK) for
http://127.0.0.1:PORT/mcp and checks each bearer token either at the provider's
introspection endpoint (RFC 7662, with the resource server's credential) or offline as a
JWT access token (RFC 9068) with the provider's JWKS (PyJWT): active, issued by ISSUER and
for this resource alone. Its one tool, `whoami`, answers the token's subject and client.
Prints "READY <resource>" once it listens.
"""

import base64
import json
import sys
import urllib.request

import jwt
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings


def fetch_json(request):
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read(1 << 20))


class IntrospectingVerifier:
    """RFC 7662 §2: the provider says whether the token is active and for whom."""

    def __init__(self, endpoint, resource, server_id, secret):
        self.endpoint = endpoint
        self.resource = resource
        self.authorization = "Basic " + base64.b64encode(f"{server_id}:{secret}".encode()).decode()

    async def verify_token(self, token):
        request = urllib.request.Request(
            self.endpoint,
            data=urllib.parse.urlencode({"token": token}).encode(),
            headers={"Authorization": self.authorization, "Content-Type": "application/x-www-form-urlencoded"},
        )
        answer = fetch_json(request)
        if answer.get("active") is not True or answer.get("aud") != self.resource:
            return None
        return AccessToken(
            token=token,
            client_id=answer.get("client_id", ""),
            scopes=answer.get("scope", "").split(),
            expires_at=answer.get("exp"),
            resource=answer.get("aud"),
            subject=answer.get("sub"),
            claims={"iss": answer.get("iss")},
        )


class JWTVerifier:
    """RFC 9068 §4: typ at+jwt, signed by a key of the provider's JWKS, this issuer, this
    resource as the audience, not expired."""

    def __init__(self, issuer, jwks_uri, resource):
        self.issuer = issuer
        self.resource = resource
        self.keys = jwt.PyJWKClient(jwks_uri)

    async def verify_token(self, token):
        try:
            header = jwt.get_unverified_header(token)
            if header.get("typ", "").lower() not in ("at+jwt", "application/at+jwt"):
                return None
            key = self.keys.get_signing_key_from_jwt(token)
            claims = jwt.decode(
                token,
                key.key,
                algorithms=["ES256", "EdDSA"],
                audience=self.resource,
                issuer=self.issuer,
                options={"require": ["exp", "iat", "sub", "aud", "iss", "client_id", "jti"]},
            )
        except jwt.PyJWTError:
            return None
        return AccessToken(
            token=token,
            client_id=claims["client_id"],
            scopes=claims.get("scope", "").split(),
            expires_at=claims["exp"],
            resource=self.resource,
            subject=claims["sub"],
            claims={"iss": claims["iss"]},
        )


def main():
    issuer, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    resource = f"http://127.0.0.1:{port}/mcp"
    discovery = fetch_json(issuer + "/.well-known/oauth-authorization-server")
    if mode == "introspect":
        verifier = IntrospectingVerifier(discovery["introspection_endpoint"], resource, sys.argv[4], sys.argv[5])
    else:
        verifier = JWTVerifier(issuer, discovery["jwks_uri"], resource)

    server = MCPServer(
        name=f"latchkey-test-{mode}",
        token_verifier=verifier,
        auth=AuthSettings(issuer_url=issuer, resource_server_url=resource, validate_token_resource=True),
    )

    @server.tool()
    def whoami() -> str:
        """Who the token says is calling."""
        token = get_access_token()
        return json.dumps({"sub": token.subject, "client_id": token.client_id, "resource": token.resource})

    print(f"READY {resource}", flush=True)
    server.run(
        "streamable-http",
        host="127.0.0.1",
        port=port,
        json_response=True,
        stateless_http=True,
        transport_security=TransportSecuritySettings(allowed_hosts=[f"127.0.0.1:{port}"], allowed_origins=[]),
    )


if __name__ == "__main__":
    main()
