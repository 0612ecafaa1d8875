#!/usr/bin/env python3
"""A real SMTP server for the mail tests (aiosmtpd): takes mail on 127.0.0.1 and writes
each message, decoded, as NNNNN.json in a directory ({"to", "from", "subject", "body"}).

Usage: smtp_sink.py DIRECTORY [--starttls CERT KEY] [--auth USER PASSWORD]
Prints "READY <port>" once it listens; runs until killed.
"""
import asyncio
import email
import email.policy
import json
import os
import socket
import ssl
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Saver:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        message = email.message_from_bytes(envelope.original_content or envelope.content, policy=email.policy.default)
        record = {
            "to": envelope.rcpt_tos,
            "from": envelope.mail_from,
            "subject": str(message["subject"]),
            "body": message.get_content(),
            "tls": session.ssl is not None,
            "authenticated": session.authenticated,
        }
        path = os.path.join(self.directory, "%05d.json" % self.count)
        with open(path + ".tmp", "w", encoding="utf-8") as handle:
            json.dump(record, handle)
        os.rename(path + ".tmp", path)
        return "250 OK"


def main():
    directory = sys.argv[1]
    arguments = sys.argv[2:]
    options = {}
    if "--starttls" in arguments:
        index = arguments.index("--starttls")
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(arguments[index + 1], arguments[index + 2])
        options.update(tls_context=context, require_starttls=True)
    if "--auth" in arguments:
        index = arguments.index("--auth")
        user, password = arguments[index + 1].encode(), arguments[index + 2].encode()

        def authenticator(server, session, envelope, mechanism, data):
            ok = isinstance(data, LoginPassword) and data.login == user and data.password == password
            return AuthResult(success=ok)

        options.update(authenticator=authenticator, auth_required=True, auth_require_tls=True)
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    controller = Controller(Saver(directory), hostname="127.0.0.1", port=port, **options)
    controller.start()
    print("READY %d" % port, flush=True)
    try:
        asyncio.run(asyncio.Event().wait())
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
