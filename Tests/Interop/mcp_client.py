"""An MCP client, the MCP Python SDK's own (mcp 2.x `Client` over streamable HTTP with its
`OAuthClientProvider`), signing in through a Latchkey provider as an AI agent does under the
MCP authorization spec (issue 76).

    mcp_client.py SERVER SECOND_SERVER metadata-document CERTIFICATE KEY
    mcp_client.py SERVER SECOND_SERVER registration

The SDK finds the provider itself: a 401 from SERVER, its protected resource metadata
(RFC 9728), the provider's RFC 8414 metadata. With `metadata-document` the client is known
by a client ID metadata document that this script serves over https on localhost (the
certificate and key given); with `registration` the SDK registers itself (RFC 7591). It
prints "AUTHORIZE <url>" and waits for the browser (driven by the test) to reach its
loopback redirect URI; then it calls SERVER's `whoami` tool, and presents the same access
token to SECOND_SERVER, which must refuse it. The last line is a JSON summary.
"""

import asyncio
import json
import ssl
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata


class MemoryStorage:
    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


def serve(handler, certificate=None, key=None):
    """A threaded HTTP(S) server on a free loopback port; its port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if certificate:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


async def main():
    server_url, second_url, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    loop = asyncio.get_running_loop()
    redirected = loop.create_future()

    class Callback(BaseHTTPRequestHandler):
        def do_GET(self):
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            body = b"signed in"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            values = {name: query[name][0] for name in ("code", "state", "iss", "error") if name in query}
            loop.call_soon_threadsafe(lambda: redirected.done() or redirected.set_result(values))

        def log_message(self, *args):
            pass

    callback = f"http://127.0.0.1:{serve(Callback)}/callback"
    metadata = OAuthClientMetadata(
        client_name="MCP research agent",
        redirect_uris=[callback],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )

    client_metadata_url = None
    if mode == "metadata-document":
        certificate, key = sys.argv[4], sys.argv[5]
        holder = {}

        class Document(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path != "/agent/client.json":
                    self.send_error(404)
                    return
                body = json.dumps(holder["document"]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", "max-age=300")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        port = serve(Document, certificate, key)
        client_metadata_url = f"https://localhost:{port}/agent/client.json"
        holder["document"] = {
            "client_id": client_metadata_url,
            "client_name": "MCP research agent",
            "redirect_uris": [callback],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }

    async def redirect_handler(url):
        print(f"AUTHORIZE {url}", flush=True)

    async def callback_handler():
        values = await asyncio.wait_for(redirected, timeout=120)
        if "error" in values:
            raise RuntimeError(f"the provider answered {values['error']}")
        return AuthorizationCodeResult(code=values["code"], state=values.get("state"), iss=values.get("iss"))

    storage = MemoryStorage()
    auth = OAuthClientProvider(
        server_url=server_url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client_metadata_url,
    )
    async with httpx2.AsyncClient(auth=auth, timeout=60) as http:
        async with Client(streamable_http_client(server_url, http_client=http)) as client:
            result = await client.call_tool("whoami", {})
    text = "".join(getattr(part, "text", "") for part in result.content)

    # The same access token at another MCP server: refused (RFC 8707 audience).
    token = storage.tokens.access_token
    async with httpx2.AsyncClient(timeout=30) as plain:
        second = await plain.post(
            second_url,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        )
    print(
        json.dumps(
            {
                "whoami": json.loads(text),
                "clientID": storage.client_info.client_id if storage.client_info else None,
                "secondStatus": second.status_code,
                "secondChallenge": second.headers.get("www-authenticate", ""),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    asyncio.run(main())
