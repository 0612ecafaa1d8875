#!/usr/bin/env python3
"""A real SMTP server for the mail tests (aiosmtpd): takes mail on 127.0.0.1 and writes
each message, decoded, as NNNNN.json in a directory ({"to", "from", "subject", "body"}).

Usage: smtp_sink.py DIRECTORY [--starttls CERT KEY] [--auth USER PASSWORD] [--defer-rcpt DOMAIN]
With --defer-rcpt, RCPT TO an address at DOMAIN is answered 450, as Postfix answers for a
recipient it has not verified yet, and noted as refused-NNNNN in the directory.
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
    def __init__(self, directory, deferred_domain=None):
        self.directory = directory
        self.count = 0
        self.refused = 0
        self.deferred_domain = deferred_domain

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.deferred_domain and address.lower().endswith("@" + self.deferred_domain):
            self.refused += 1
            open(os.path.join(self.directory, "refused-%05d" % self.refused), "w").close()
            return "450 4.1.1 <%s>: Recipient address rejected: unverified address" % address
        envelope.rcpt_tos.append(address)
        return "250 OK"

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
    deferred = None
    if "--defer-rcpt" in arguments:
        deferred = arguments[arguments.index("--defer-rcpt") + 1].lower()
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    controller = Controller(Saver(directory, deferred), hostname="127.0.0.1", port=port, **options)
    controller.start()
    print("READY %d" % port, flush=True)
    try:
        asyncio.run(asyncio.Event().wait())
    finally:
        controller.stop()


if __name__ == "__main__":
    main()
