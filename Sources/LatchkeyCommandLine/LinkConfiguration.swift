#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyProtocol

/// What `latchkey open` acts on beyond its arguments: `$XDG_CONFIG_HOME/latchkey/links.conf`
/// (default `~/.config/latchkey/links.conf`), believed only when its owner alone may write
/// it (``TrustedFile``), with lines of `key = value` and `#` comments:
///
/// ```
/// allow-provider = https://id.example.com
/// scheme = acme-login
/// ```
///
/// `allow-provider` (repeatable): a provider whose links are acted on. `scheme`
/// (repeatable): a link scheme besides `latchkey` that is read as Latchkey's.
/// docs/SECURITY.md, "Links on a Linux desktop".
struct LinkConfiguration {
    var allowedProviders: [URL] = []
    var schemes: [String] = []

    static let maximumSize = 64 * 1024

    /// The file's path for this user.
    static var path: URL {
        XDGBaseDirectories().configHome.appendingPathComponent("latchkey/links.conf")
    }

    /// The user's file, or an empty configuration when there is none; a file that is
    /// there but not trusted, or not understood, is an error (never silently skipped).
    static func load(_ file: URL = path) throws -> LinkConfiguration {
        guard FileManager.default.fileExists(atPath: file.path) || (try? FileManager.default.destinationOfSymbolicLink(atPath: file.path)) != nil else {
            return LinkConfiguration()
        }
        let data = try TrustedFile.read(file.path, what: "the link configuration", maximumSize: maximumSize)
        return try parse(String(decoding: data, as: UTF8.self), path: file.path)
    }

    static func parse(_ text: String, path: String) throws -> LinkConfiguration {
        var configuration = LinkConfiguration()
        for line in try KeyValueLine.parse(text, path: path, maximumValueLength: 2048) {
            let (key, value) = (line.key, line.value)
            func refuse(_ why: String) -> CommandFailure { line.refusal(why, path: path) }
            switch key {
            case "allow-provider":
                configuration.allowedProviders.append(try allowedProvider(value, refuse: refuse))
            case "scheme":
                configuration.schemes.append(value.lowercased())
            default:
                throw refuse("unknown key \(key.displaySafe(maximumLength: 64)) (allow-provider, scheme)")
            }
        }
        return configuration
    }

    /// An allowed provider as given: an absolute https URL (http on loopback), no query,
    /// no user info.
    static func allowedProvider(_ text: String, refuse: (String) -> any Error) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
              let host = url.host, !host.isEmpty, url.user == nil, url.query == nil, url.fragment == nil
        else { throw refuse("\(text.displaySafe(maximumLength: 256)) is not a provider URL (https://host[/path])") }
        return url
    }
}
