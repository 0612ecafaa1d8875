#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A user's XDG base directories (XDG Base Directory Specification 0.8): `$XDG_DATA_HOME`
/// and `$XDG_CONFIG_HOME`, each used only when absolute (a relative value is invalid and
/// ignored), else `~/.local/share` and `~/.config` under `$HOME`. Read from an
/// environment passed in, so a desktop registration can be made for another one.
public struct XDGBaseDirectories: Sendable {
    public let dataHome: URL
    public let configHome: URL

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = URL(fileURLWithPath: environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path)
        func base(_ name: String, default fallback: String) -> URL {
            if let value = environment[name], value.hasPrefix("/") { return URL(fileURLWithPath: value) }
            return home.appendingPathComponent(fallback)
        }
        dataHome = base("XDG_DATA_HOME", default: ".local/share")
        configHome = base("XDG_CONFIG_HOME", default: ".config")
    }
}
