#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A `mimeapps.list` (the freedesktop.org "Association between MIME types and
/// applications" specification): the `[Default Applications]` line for one MIME type
/// read, set or taken out, every other line kept as it was. Used where `xdg-mime` cannot
/// be (the system-wide file, `$XDG_CONFIG_DIRS/mimeapps.list`, and taking a default out,
/// which `xdg-mime` has no command for).
struct MimeAppsList {
    var lines: [String]

    static let defaultsSection = "[Default Applications]"
    /// A mimeapps.list longer than this is not one this code should rewrite.
    static let maximumSize = 1 << 20

    init(contentsOf file: URL) throws {
        guard let data = FileManager.default.contents(atPath: file.path) else {
            lines = []
            return
        }
        guard data.count <= Self.maximumSize, let text = String(data: data, encoding: .utf8) else {
            throw LatchkeyError.desktopIntegration(reason: "\(file.path) is over 1 MiB or not UTF-8; it was left alone")
        }
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
    }

    /// The first application named as the default for `mimeType`, or nil.
    func defaultApplication(for mimeType: String) -> String? {
        var inDefaults = false
        for line in lines {
            if line.hasPrefix("[") { inDefaults = line == Self.defaultsSection; continue }
            guard inDefaults, line.hasPrefix(mimeType + "=") else { continue }
            return line.dropFirst(mimeType.count + 1).split(separator: ";").first.map(String.init)
        }
        return nil
    }

    /// Makes `application` the default for `mimeType`, replacing any default it had.
    mutating func setDefault(_ application: String, for mimeType: String) {
        removeDefault(for: mimeType) { _ in true }
        let line = "\(mimeType)=\(application);"
        if let section = lines.firstIndex(of: Self.defaultsSection) {
            lines.insert(line, at: section + 1)
        } else {
            lines += [Self.defaultsSection, line]
        }
    }

    /// Takes out the default lines for `mimeType` whose application `matches`; whether one was.
    @discardableResult
    mutating func removeDefault(for mimeType: String, where matches: (String) -> Bool) -> Bool {
        var inDefaults = false
        var removed = false
        lines = lines.filter { line in
            if line.hasPrefix("[") { inDefaults = line == Self.defaultsSection; return true }
            guard inDefaults, line.hasPrefix(mimeType + "="),
                  matches(line.dropFirst(mimeType.count + 1).split(separator: ";").first.map(String.init) ?? "")
            else { return true }
            removed = true
            return false
        }
        return removed
    }

    /// Writes the list back (a new file, then renamed over the old one).
    func write(to file: URL) throws {
        do {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: file, options: .atomic)
        } catch {
            throw LatchkeyError.desktopIntegration(reason: "cannot write \(file.path)", underlying: error)
        }
    }
}
