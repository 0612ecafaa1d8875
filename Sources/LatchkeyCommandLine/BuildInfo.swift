import CLatchkeyBuildInfo

/// What this binary is: the release and the commit it was built from (Package.swift defines
/// both), so a bug report or an installed package names exactly the source it came from.
enum BuildInfo {
    /// The release, e.g. `0.5.0`.
    static let version = String(cString: latchkey_build_version())
    /// The commit's full hash (`-dirty` when the tree differed from it), or `unknown`.
    static let commit = String(cString: latchkey_build_commit())
    /// `latchkey --version`: `latchkey 0.5.0 (commit 0123abcd…)`.
    static let versionLine = "latchkey \(version) (commit \(commit))"
}
