import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyProtocol

/// `latchkey admin`'s POSIX accounts, renames and groups (docs/PROTOCOL.md section 14).
extension LatchkeyCommand {
    /// `latchkey admin set-posix`: a POSIX account for an identity (its `uid` allocated the
    /// first time), or a change of its shell, home or GECOS.
    struct SetPOSIX: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-posix",
            abstract: "Give an identity a POSIX account (a uid from the provider's range, kept for good), or change its shell, home or GECOS."
        )

        @OptionGroup var options: AdminOptions

        @Option(help: "Login shell (default at creation: /bin/bash).")
        var shell: String?

        @Option(help: "Home directory (default at creation: /home/<username>).")
        var home: String?

        @Option(help: "GECOS field (default: the display name).")
        var gecos: String?

        @Argument(help: "The identity's id or username (after `--` when it starts with '-').")
        var identity: String

        func run() async throws {
            let answer = try await options.send(AdminAPI.setPOSIXAccount, identity, body: AdminAPI.POSIXAccountChange(shell: shell, home: home, gecos: gecos))
            if options.json { return try options.print(json: answer) }
            TextOutput.line("\(answer.username.displaySafe(maximumLength: 64)): uid \(answer.uid), gid \(answer.gid), home \(answer.home.displaySafe(maximumLength: 256)), shell \(answer.shell.displaySafe(maximumLength: 256))")
        }
    }

    /// `latchkey admin unset-posix`: hosts no longer see the account.
    struct UnsetPOSIX: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unset-posix",
            abstract: "Take an identity's POSIX account away; its uid stays its own, never handed to anyone else."
        )

        @OptionGroup var options: AdminOptions

        @Argument(help: "The identity's id or username (after `--` when it starts with '-').")
        var identity: String

        func run() async throws {
            let answer = try await options.send(AdminAPI.unsetPOSIXAccount, identity)
            if options.json { return try options.print(json: answer) }
            TextOutput.line(answer.deleted ? "The POSIX account is gone; hosts drop it at their next refresh" : "The identity had no POSIX account")
        }
    }

    /// `latchkey admin rename`: a new username; a POSIX account keeps its `uid`.
    struct RenameIdentity: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rename", abstract: "Give an identity a new username; a POSIX account keeps its uid and home."
        )

        @OptionGroup var options: AdminOptions

        @Argument(help: "The identity's id or username (after `--` when it starts with '-').")
        var identity: String

        @Argument(help: "The new username.")
        var username: String

        func run() async throws {
            let answer = try await options.send(AdminAPI.renameIdentity, identity, body: AdminAPI.IdentityRename(username: username))
            if options.json { return try options.print(json: answer) }
            let kept = answer.uid.map { "; uid \($0) kept" } ?? ""
            TextOutput.line("Renamed to \(answer.identity.username.displaySafe(maximumLength: 256))\(kept)")
        }
    }

    /// `latchkey admin create-group`: a POSIX group with its own `gid`.
    struct CreateGroup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create-group", abstract: "Create a POSIX group (its gid is never reused).")

        @OptionGroup var options: AdminOptions

        @Argument(help: "The group's name: lower-case letters, digits, _ and -, starting with a letter, at most 32 bytes.")
        var name: String

        func run() async throws {
            let answer = try await options.send(AdminAPI.createGroup, body: AdminAPI.GroupCreation(name: name))
            if options.json { return try options.print(json: answer) }
            TextOutput.line("\(answer.name.displaySafe(maximumLength: 64)): gid \(answer.gid)")
        }
    }

    /// `latchkey admin delete-group`.
    struct DeleteGroup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete-group", abstract: "Delete a POSIX group, its memberships and its host access; its gid is never reused."
        )

        @OptionGroup var options: AdminOptions

        @Argument(help: "The group's name.")
        var name: String

        func run() async throws {
            let answer = try await options.send(AdminAPI.deleteGroup, name)
            if options.json { return try options.print(json: answer) }
            TextOutput.line("Deleted the group \(name.displaySafe(maximumLength: 64))")
        }
    }

    /// A group and an identity, as `add-member` and `remove-member` take them.
    struct MemberArguments: ParsableArguments {
        @Argument(help: "The group's name.")
        var group: String

        @Argument(help: "The identity's id or username (after `--` when it starts with '-').")
        var identity: String
    }

    /// `latchkey admin add-member` and `remove-member`.
    struct AddMember: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add-member", abstract: "Add an identity to a POSIX group.")

        @OptionGroup var options: AdminOptions
        @OptionGroup var member: MemberArguments

        func run() async throws {
            try GroupLine.print(try await options.send(AdminAPI.addGroupMember, member.group, member.identity), options)
        }
    }

    struct RemoveMember: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "remove-member", abstract: "Remove an identity from a POSIX group.")

        @OptionGroup var options: AdminOptions
        @OptionGroup var member: MemberArguments

        func run() async throws {
            try GroupLine.print(try await options.send(AdminAPI.removeGroupMember, member.group, member.identity), options)
        }
    }

    /// `latchkey admin list-groups`: every group, a page at a time.
    struct ListGroups: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list-groups", abstract: "List the POSIX groups, their gids, member counts and host access.")

        @OptionGroup var options: AdminOptions

        func run() async throws {
            var after: String?
            var all: [AdminAPI.Group] = []
            repeat {
                var query = [(AdminAPI.GroupQuery.limit, "500")]
                if let after { query.append((AdminAPI.GroupQuery.after, after)) }
                let page = try await options.send(AdminAPI.listGroups, query: query)
                all += page.groups
                after = page.next
            } while after != nil && all.count < 1_000_000
            if options.json { return try options.print(json: AdminAPI.GroupPage(groups: all)) }
            for group in all { TextOutput.line(GroupLine.text(group)) }
        }
    }
}

/// One group as `latchkey admin` prints it.
enum GroupLine {
    /// The answer as `--json` asks, else as a line.
    static func print(_ group: AdminAPI.Group, _ options: LatchkeyCommand.AdminOptions) throws {
        if options.json { return try options.print(json: group) }
        TextOutput.line(text(group))
    }

    static func text(_ group: AdminAPI.Group) -> String {
        let login = group.loginLabels.isEmpty ? "no host access" : "login on " + group.loginLabels.joined(separator: ",")
        let sudo = group.sudoLabels.isEmpty ? "" : ", sudo on " + group.sudoLabels.joined(separator: ",")
        return "\(group.name) gid \(group.gid), \(group.members) members, \(login)\(sudo)".displaySafe(maximumLength: 1024)
    }
}
