import SystemPackage

/// Path arithmetic on text, as `NSString`'s `deletingLastPathComponent` and
/// `deletingPathExtension` did, through swift-system's `FilePath`: `NSString` is
/// swift-corelibs-foundation's and brings ICU's data into every binary that links it
/// (docs/PERFORMANCE.md, "The Debian package").
package enum PathText {
    /// The directory holding `path`: `/a/b` and `/a/b/` give `/a`, `/` gives `/`, a bare
    /// name gives the empty string.
    package static func parent(of path: String) -> String {
        FilePath(path).removingLastComponent().string
    }

    /// `path` without its last component's extension: `/run/agent.sock` gives
    /// `/run/agent`; a name without one, or one that starts with its only dot, is kept.
    package static func removingExtension(of path: String) -> String {
        var file = FilePath(path)
        file.extension = nil
        return file.string
    }
}
