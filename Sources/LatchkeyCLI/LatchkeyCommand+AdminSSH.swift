import ArgumentParser
import Foundation
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
            let response = try await URLSessionTransport().send(TransportRequest(method: HTTPMethod.get, url: base.appendingPathComponent(ProtocolPath.sshAuthority)))
            guard response.status == 200 else { throw ValidationError("the provider answered \(response.status): is it started with --ssh-ca?") }
            // Each line must be a key this CLI reads, so nothing else reaches a config file.
            for line in String(decoding: response.body.prefix(64 * 1024), as: UTF8.self).split(separator: "\n") {
                let key = try SSHPublicKey(openSSHLine: String(line))
                TextOutput.line(key.openSSHLine(comment: String(line.split(separator: " ").dropFirst(2).first ?? "latchkey-ssh-ca").displaySafe(maximumLength: 128)))
            }
        }
    }

    /// `latchkey admin set-ssh-principals`: the principals an identity's certificates may
    /// name beyond its username.
    struct SetSSHPrincipals: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-ssh-principals",
            abstract: "Set the SSH principals an identity may have certified beyond its username (none: only the username)."
        )

        @OptionGroup var options: AdminOptions

        @Argument(help: "The identity id.")
        var identity: String

        @Argument(help: "Principals (user names on hosts), each without commas, spaces or control characters.")
        var principals: [String] = []

        func run() async throws {
            let answer = try await options.send(AdminAPI.setSSHPrincipals, identity, body: AdminAPI.SSHPrincipals(principals: principals))
            if options.json { return try options.print(json: answer) }
            TextOutput.line("Principals: \(answer.principals.map { $0.displaySafe(maximumLength: 256) }.joined(separator: " "))")
        }
    }
}
