#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto
import LatchkeyProtocol

/// Makes an application the handler of its link scheme on a Linux desktop, the
/// freedesktop.org way: a desktop entry with `MimeType=x-scheme-handler/<scheme>;` in the
/// applications folder, `update-desktop-database` when it is installed, and the default set
/// with `xdg-mime` (docs/ARCHITECTURE.md, "Links on a Linux desktop"). `latchkey desktop
/// install` is this with Latchkey's own command; an application that embeds Latchkey
/// registers its own scheme and program the same way.
///
/// It never touches another scheme's handler, and it refuses to take over a scheme
/// another application handles (``LatchkeyError/Code/schemeOwned``) unless forced.
/// Installing twice changes nothing the second time.
public struct DeepLinkRegistration: Sendable {
    /// For whom: the user's own folders, or every user of the host.
    public enum Scope: String, Sendable {
        /// `$XDG_DATA_HOME/applications` (default `~/.local/share/applications`), the
        /// default set by `xdg-mime` in `$XDG_CONFIG_HOME/mimeapps.list`.
        case user
        /// `/usr/local/share/applications`, the default in `/etc/xdg/mimeapps.list`
        /// (`$XDG_CONFIG_DIRS`; written here, since `xdg-mime` sets only a user's).
        case system
    }

    /// The scheme, lowercase (RFC 3986 §3.1).
    public let scheme: String
    /// The program and its arguments; the link is added as the last (`%u`).
    public let command: [String]
    /// The desktop entry's name (`<id>.desktop`'s `Name=`).
    public let applicationName: String
    /// The desktop file id, by default `latchkey-<scheme>.desktop`.
    public let desktopFileID: String
    /// Whether the desktop opens a terminal for the program (`Terminal=true`), so it can ask.
    public let terminal: Bool
    public let scope: Scope
    /// Where `HOME`, `XDG_DATA_HOME`, `XDG_CONFIG_HOME` and `PATH` are read.
    public let environment: [String: String]

    /// Schemes no application may claim through this: the web's and the system's own.
    static let reservedSchemes: Set<String> = [
        "http", "https", "file", "ftp", "ftps", "mailto", "javascript", "data", "about", "blob", "ws", "wss", "ssh", "sftp", "tel", "sms", "x-scheme-handler",
    ]

    /// Throws ``LatchkeyError/Code/invalidArgument`` for a scheme that is not a plain RFC
    /// 3986 scheme of at most 64 characters, or one of the web's or the system's own.
    public init(
        scheme: String, command: [String], applicationName: String = "Latchkey", desktopFileID: String? = nil, terminal: Bool = true,
        scope: Scope = .user, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        let scheme = scheme.lowercased()
        guard Self.isScheme(scheme) else {
            throw LatchkeyError.invalidArgument(reason: "\(scheme.logSafe(maximumLength: 80)) is not a link scheme (a letter, then letters, digits, +, - or .; at most 64)")
        }
        guard !Self.reservedSchemes.contains(scheme) else {
            throw LatchkeyError.invalidArgument(reason: "\(scheme) links belong to the browser or the system; pick a scheme of your own")
        }
        let id = desktopFileID ?? "latchkey-\(scheme).desktop"
        guard id.hasSuffix(".desktop"), id.count <= 255, DesktopEntry.isPlainArgument(id), !id.contains("/") else {
            throw LatchkeyError.invalidArgument(reason: "\(id.logSafe(maximumLength: 80)) is not a desktop file id (<name>.desktop)")
        }
        self.scheme = scheme
        self.command = command
        self.applicationName = applicationName
        self.desktopFileID = id
        self.terminal = terminal
        self.scope = scope
        self.environment = environment
    }

    /// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` (RFC 3986 §3.1), lowercase here.
    static func isScheme(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, ("a"..."z").contains(first), text.unicodeScalars.count <= 64 else { return false }
        return text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) }
    }

    /// The MIME type the scheme is handled as.
    public var mimeType: String { "x-scheme-handler/\(scheme)" }

    /// The folder the desktop entry goes in.
    public var applicationsFolder: URL {
        switch scope {
        case .user: XDGBaseDirectories(environment: environment).dataHome.appendingPathComponent("applications")
        case .system: URL(fileURLWithPath: "/usr/local/share/applications")
        }
    }

    /// The desktop entry's path.
    public var desktopEntryFile: URL { applicationsFolder.appendingPathComponent(desktopFileID) }

    /// The `mimeapps.list` the default goes in.
    public var mimeAppsFile: URL {
        switch scope {
        case .user: XDGBaseDirectories(environment: environment).configHome.appendingPathComponent("mimeapps.list")
        case .system: URL(fileURLWithPath: "/etc/xdg/mimeapps.list")
        }
    }

    /// What was done.
    public struct Outcome: Sendable {
        /// Whether anything changed.
        public var changed: Bool
        /// One sentence per step, for the person who asked.
        public var steps: [String]
    }

    /// Writes the desktop entry, updates the desktop database and makes the entry the
    /// scheme's default. With `force`, also when another application is the default now.
    public func install(force: Bool = false) throws -> Outcome {
        let entry = try DesktopEntry(
            name: applicationName, comment: "Opens \(scheme): links (sign-in, new credentials, approvals)", command: command, scheme: scheme,
            terminal: terminal
        ).text()
        let current = try currentHandler()
        if let current, current != desktopFileID, !force {
            throw LatchkeyError.schemeOwned(
                reason: "\(mimeType) is handled by \(current.logSafe(maximumLength: 200)); nothing was changed (force takes it over)"
            )
        }
        let existing = FileManager.default.contents(atPath: desktopEntryFile.path).map { String(decoding: $0, as: UTF8.self) }
        if existing == entry, current == desktopFileID {
            return Outcome(changed: false, steps: ["\(desktopEntryFile.path) is in place and the default for \(mimeType): nothing changed"])
        }
        if let existing, !DesktopEntry.isOurs(existing, scheme: scheme) {
            throw LatchkeyError.schemeOwned(reason: "\(desktopEntryFile.path) exists and was not written for \(scheme): links; it was left alone")
        }
        var steps: [String] = []
        do {
            try FileManager.default.createDirectory(at: applicationsFolder, withIntermediateDirectories: true)
            try Data(entry.utf8).write(to: desktopEntryFile, options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: desktopEntryFile.path)
        } catch {
            throw LatchkeyError.desktopIntegration(reason: "cannot write \(desktopEntryFile.path)", underlying: error)
        }
        steps.append("wrote \(desktopEntryFile.path)")
        if let note = try updateDesktopDatabase() { steps.append(note) }
        if let current, current != desktopFileID { steps.append("took \(mimeType) over from \(current.logSafe(maximumLength: 200))") }
        if scope == .user, let xdgMime = tool("xdg-mime") {
            try run(xdgMime, ["default", desktopFileID, mimeType])
            steps.append("made \(desktopFileID) the default for \(mimeType) (xdg-mime default)")
        } else {
            var list = try MimeAppsList(contentsOf: mimeAppsFile)
            list.setDefault(desktopFileID, for: mimeType)
            try list.write(to: mimeAppsFile)
            steps.append("made \(desktopFileID) the default for \(mimeType) in \(mimeAppsFile.path)")
        }
        let now = try currentHandler()
        guard now == desktopFileID else {
            throw LatchkeyError.desktopIntegration(
                reason: "the desktop still names \(now?.logSafe(maximumLength: 200) ?? "no application") for \(mimeType) after the default was set"
            )
        }
        return Outcome(changed: true, steps: steps)
    }

    /// Deletes the desktop entry (only one this registration wrote) and takes its default
    /// out of `mimeapps.list`; another application's default is left as it is.
    public func uninstall() throws -> Outcome {
        var steps: [String] = []
        if let data = FileManager.default.contents(atPath: desktopEntryFile.path) {
            guard DesktopEntry.isOurs(String(decoding: data, as: UTF8.self), scheme: scheme) else {
                throw LatchkeyError.schemeOwned(reason: "\(desktopEntryFile.path) was not written for \(scheme): links; it was left alone")
            }
            do {
                try FileManager.default.removeItem(at: desktopEntryFile)
            } catch {
                throw LatchkeyError.desktopIntegration(reason: "cannot delete \(desktopEntryFile.path)", underlying: error)
            }
            steps.append("deleted \(desktopEntryFile.path)")
        }
        var list = try MimeAppsList(contentsOf: mimeAppsFile)
        if list.removeDefault(for: mimeType, where: { $0 == desktopFileID }) {
            try list.write(to: mimeAppsFile)
            steps.append("took \(desktopFileID) out of \(mimeAppsFile.path) as the default for \(mimeType)")
        }
        guard !steps.isEmpty else { return Outcome(changed: false, steps: ["nothing of \(desktopFileID) was installed: nothing changed"]) }
        if let note = try updateDesktopDatabase() { steps.append(note) }
        return Outcome(changed: true, steps: steps)
    }

    /// The desktop file id the desktop opens `<scheme>:` links with now, or nil: what
    /// `xdg-mime query default` answers, else the `mimeapps.list` this scope writes.
    public func currentHandler() throws -> String? {
        if scope == .user, let xdgMime = tool("xdg-mime") {
            let answer = try run(xdgMime, ["query", "default", mimeType]).trimmingWhitespace()
            return answer.isEmpty ? nil : answer
        }
        return try MimeAppsList(contentsOf: mimeAppsFile).defaultApplication(for: mimeType)
    }

    // MARK: The tools

    /// `update-desktop-database <folder>` when installed, so launchers that read
    /// `mimeinfo.cache` see the entry; a sentence saying what happened.
    private func updateDesktopDatabase() throws -> String? {
        guard let program = tool("update-desktop-database") else {
            return "update-desktop-database is not installed; desktops that need its cache see the entry once it runs"
        }
        try run(program, [applicationsFolder.path])
        return "ran update-desktop-database \(applicationsFolder.path)"
    }

    /// `name` on `PATH`, or nil.
    private func tool(_ name: String) -> URL? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").lazy.map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Runs a tool with this registration's environment; its standard output, or an error
    /// with what it said when it fails.
    @discardableResult
    private func run(_ program: URL, _ arguments: [String]) throws -> String {
        guard let outcome = ToolProcess(program.path, environment: environment).run(arguments) else {
            throw LatchkeyError.desktopIntegration(reason: "cannot run \(program.path)")
        }
        let text = String(decoding: outcome.output, as: UTF8.self)
        guard outcome.status == 0 else {
            throw LatchkeyError.desktopIntegration(
                reason: "\(program.lastPathComponent) \(arguments.joined(separator: " ")) failed (\(outcome.status)): \(text.logSafe(maximumLength: 400))"
            )
        }
        return text
    }
}
