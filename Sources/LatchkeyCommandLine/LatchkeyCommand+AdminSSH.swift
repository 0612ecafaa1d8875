import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol

extension LatchkeyCommand {
    /// `latchkey admin ssh-ca`: the provider's SSH CA keys, one line each, for
    /// `TrustedUserCAKeys` (docs/PROTOCOL.md section 12). Public: no admin token is sent.
    struct SSHAuthorityKeys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ssh-ca",
            abstract: "Print the provider's SSH CA keys, one OpenSSH line each, for sshd_config's TrustedUserCAKeys."
        )

        @Option(help: "The identity provider's issuer URL.")
        var idp: String

        func run() async throws {
            guard let base = URL(string: idp), base.host != nil else { throw ValidationError("--idp \(idp) is not a URL") }
            let response = try await HTTP1Transport().send(TransportRequest(method: HTTPMethod.get, url: base.appendingPathComponent(ProtocolPath.sshAuthority)))
            guard response.status == 200 else { throw ValidationError("the provider answered \(response.status): is it started with --ssh-ca?") }
            // Each line must be a key this CLI reads, so nothing else reaches a config file.
            for line in String(decoding: response.body.prefix(64 * 1024), as: UTF8.self).split(separator: "\n") {
                let key = try SSHPublicKey(openSSHLine: String(line))
                TextOutput.line(key.openSSHLine(comment: String(line.split(separator: " ").dropFirst(2).first ?? "latchkey-ssh-ca").displaySafe(maximumLength: 128)))
            }
        }
    }

    /// `latchkey admin rotate-ssh-ca`: a rotation of the SSH CA in two steps (docs/PROTOCOL.md
    /// section 12, "Rotating the CA"): first a next key published beside the current one,
    /// then, once every host trusts both lines, `--activate`.
    struct RotateSSHAuthority: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-ssh-ca",
            abstract: "Rotate the SSH CA: make a next key and publish it beside the current one; with --activate, let it sign and retire the old one.",
            discussion: """
                Step 1: latchkey admin rotate-ssh-ca --idp URL, then put every line latchkey admin ssh-ca prints into each \
                host's TrustedUserCAKeys. Step 2: latchkey admin rotate-ssh-ca --idp URL --activate. The retired key stays \
                published, and its certificates on the KRL, until they have all expired (24 hours at most).
                """
        )

        @OptionGroup var options: AdminOptions

        @Flag(help: "Finish the rotation: the next key signs from now on, the current one is retired.")
        var activate = false

        func run() async throws {
            let answer = try await options.send(AdminAPI.rotateSSHAuthority, body: AdminAPI.SSHAuthorityRotation(activate: activate ? true : nil))
            if options.json { return try options.print(json: answer) }
            for key in answer.keys {
                let retired = key.retiredAt.map { " retired \($0.displaySafe(maximumLength: 40))" } ?? ""
                TextOutput.line("\(key.state)\(retired)\(key.published ? "" : " (no longer published)"): \(key.fingerprint.displaySafe(maximumLength: 128))")
            }
            TextOutput.line(activate
                ? "The next key signs now. Keep the old line in TrustedUserCAKeys until its certificates expire (24 hours at most)."
                : "Put every line of `latchkey admin ssh-ca --idp \(options.idp.displaySafe(maximumLength: 256))` into each host's TrustedUserCAKeys, then run this again with --activate.")
        }
    }

    /// `latchkey admin set-ssh-principals`: the principals an identity's certificates may
    /// name beyond its username.
    struct SetSSHPrincipals: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-ssh-principals",
            abstract: "Set the SSH principals an identity may have certified beyond its username (none: only the username), or, with --client, a registered client's own (none: no certificate)."
        )

        @OptionGroup var options: AdminOptions

        @Flag(help: "The id names a registered client, whose client credentials tokens get certificates for these principals only.")
        var client = false

        @Argument(help: "The identity id (with --client, the client id).")
        var identity: String

        @Argument(help: "Principals (user names on hosts), each without commas, spaces or control characters.")
        var principals: [String] = []

        func run() async throws {
            let endpoint = client ? AdminAPI.setClientSSHPrincipals : AdminAPI.setSSHPrincipals
            let answer = try await options.send(endpoint, identity, body: AdminAPI.SSHPrincipals(principals: principals))
            if options.json { return try options.print(json: answer) }
            TextOutput.line("Principals: \(answer.principals.map { $0.displaySafe(maximumLength: 256) }.joined(separator: " "))")
        }
    }

    /// `latchkey admin ssh-host-certificate`: a host certificate for `HostCertificate` in
    /// `sshd_config`.
    struct SSHHostCertificateCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ssh-host-certificate",
            abstract: "Sign a host's SSH key for the names clients reach it by; prints the certificate line for sshd_config's HostCertificate."
        )

        @OptionGroup var options: AdminOptions

        @Option(name: .customLong("host"), help: ArgumentHelp("A name clients reach the host by; repeat for more.", valueName: "name"))
        var hosts: [String] = []

        @Option(help: ArgumentHelp("The host's public key file (/etc/ssh/ssh_host_ed25519_key.pub).", valueName: "file"))
        var publicKey: String

        @Option(help: ArgumentHelp("How long it lasts (a number and s, m, h or d; default 30d, at most 365d).", valueName: "duration"))
        var lifetime: String?

        func run() async throws {
            guard !hosts.isEmpty else { throw ValidationError("name the host with --host (repeat for more names)") }
            guard let bytes = FileDescriptorIO.read(path: publicKey, upTo: SSHPublicKey.maximumLineLength + 1),
                  bytes.count <= SSHPublicKey.maximumLineLength, let line = String(validating: bytes, as: UTF8.self)
            else { throw ValidationError("cannot read \(publicKey) (a .pub line of at most \(SSHPublicKey.maximumLineLength) bytes)") }
            let seconds = try lifetime.map { Int(try ListEvents.duration($0)) }
            let answer = try await options.send(
                AdminAPI.createSSHHostCertificate, body: AdminAPI.SSHHostCertificateRequest(publicKey: line, hosts: hosts, lifetime: seconds)
            )
            if options.json { return try options.print(json: answer) }
            TextOutput.line(answer.certificate.displaySafe(maximumLength: 16 * 1024))
        }
    }
}
