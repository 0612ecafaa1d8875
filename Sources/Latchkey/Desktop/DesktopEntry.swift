#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyProtocol

/// The desktop entry that makes an application the handler of a link scheme (Desktop
/// Entry Specification 1.5, "Registering MIME types": `MimeType=x-scheme-handler/<scheme>;`,
/// and "The Exec key": `%u` for the one URL).
///
/// Every argument of the `Exec` line must be one word that needs no quoting: the spec's
/// quoting rules are not what every launcher implements (xdg-open 1.1's generic path
/// splits the line at spaces and keeps quotes as they are), so an argument that would need
/// them is refused rather than written in a form some desktop reads differently.
struct DesktopEntry: Equatable {
    var name: String
    var comment: String
    var command: [String]
    var scheme: String
    var terminal: Bool

    /// The key that marks an entry as written by ``DeepLinkRegistration``: uninstall
    /// deletes only a file that carries it, for this scheme.
    static let markerKey = "X-Latchkey-Scheme"

    /// Characters an `Exec` argument may hold: none of the spec's reserved characters
    /// (space, quotes, `\`, `>`, `<`, `~`, `|`, `&`, `;`, `$`, `*`, `?`, `#`, `(`, `)`, backtick),
    /// no `%` (a field code), no control characters.
    static func isPlainArgument(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 2048 && text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && scalar.value > 0x20 && scalar.value < 0x7F && !"\"'\\><~|&;$*?#()`%".unicodeScalars.contains(scalar)
        }
    }

    /// The file's text.
    func text() throws -> String {
        for argument in command where !Self.isPlainArgument(argument) {
            throw LatchkeyError.invalidArgument(
                reason: "\(argument.logSafe(maximumLength: 200)) cannot go on a desktop entry's Exec line: it would need quoting, which launchers read differently"
            )
        }
        guard let program = command.first, program.hasPrefix("/") else {
            throw LatchkeyError.invalidArgument(reason: "the Exec line needs the program's absolute path")
        }
        for value in [name, comment] where value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw LatchkeyError.invalidArgument(reason: "a desktop entry's Name and Comment are one line of text")
        }
        return """
            [Desktop Entry]
            Type=Application
            Version=1.5
            Name=\(name)
            Comment=\(comment)
            Exec=\((command + ["%u"]).joined(separator: " "))
            Terminal=\(terminal)
            NoDisplay=true
            MimeType=x-scheme-handler/\(scheme);
            \(Self.markerKey)=\(scheme)

            """
    }

    /// Whether the desktop entry `text` was written for `scheme` by a registration.
    static func isOurs(_ text: String, scheme: String) -> Bool {
        text.split(separator: "\n").contains { $0 == Substring("\(markerKey)=\(scheme)") }
    }
}
