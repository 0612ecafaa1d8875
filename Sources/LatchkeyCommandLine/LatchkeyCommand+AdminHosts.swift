import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyProtocol

/// `latchkey admin`'s host labels and host access (docs/PROTOCOL.md section 14).
extension LatchkeyCommand {
    /// `latchkey admin set-host-labels`: a host's labels (a host is a registered client).
    struct SetHostLabels: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-host-labels",
            abstract: "Set a host's labels (the host is a registered client, as latchkey pam enroll makes); none: the host sees no one."
        )

        @OptionGroup var options: AdminOptions

        @Option(help: "The host's client id.")
        var clientId: String

        @Argument(help: "Labels: lower-case letters, digits, ., _ and -.")
        var labels: [String] = []

        func run() async throws {
            let answer = try await options.send(AdminAPI.setHostLabels, clientId, body: AdminAPI.HostLabels(labels: labels))
            if options.json { return try options.print(json: answer) }
            TextOutput.line(("\(clientId): " + (answer.labels.isEmpty ? "no labels" : answer.labels.joined(separator: " "))).displaySafe(maximumLength: 1024))
        }
    }

    /// A label and a group, as `grant-host-access` and `revoke-host-access` take them.
    struct HostAccessArguments: ParsableArguments {
        @Option(help: "The host label.")
        var label: String

        @Option(help: "The group.")
        var group: String
    }

    /// `latchkey admin grant-host-access`: a group may log in on a label's hosts.
    struct GrantHostAccess: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "grant-host-access", abstract: "Let a group's members log in to every host with a label, and with --sudo use sudo there."
        )

        @OptionGroup var options: AdminOptions
        @OptionGroup var access: HostAccessArguments

        @Flag(help: "Its members may use sudo on those hosts too.")
        var sudo = false

        func run() async throws {
            let answer = try await options.send(AdminAPI.grantHostAccess, access.label, access.group, body: AdminAPI.HostAccessGrant(sudo: sudo))
            if options.json { return try options.print(json: answer) }
            TextOutput.line("\(answer.group) may log in\(answer.sudo ? " and use sudo" : "") on hosts labelled \(answer.label)".displaySafe(maximumLength: 512))
        }
    }

    /// `latchkey admin revoke-host-access`.
    struct RevokeHostAccess: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke-host-access", abstract: "Take a group's login (and sudo) on a label's hosts away."
        )

        @OptionGroup var options: AdminOptions
        @OptionGroup var access: HostAccessArguments

        func run() async throws {
            let answer = try await options.send(AdminAPI.revokeHostAccess, access.label, access.group)
            if options.json { return try options.print(json: answer) }
            TextOutput.line("\(access.group) no longer logs in on hosts labelled \(access.label)".displaySafe(maximumLength: 512))
        }
    }
}
