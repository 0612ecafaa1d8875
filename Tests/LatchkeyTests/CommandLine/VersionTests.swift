import Foundation
import LatchkeyTestSupport
import Testing

/// `latchkey --version` names the release and the commit the binary was built from, so an
/// installed package or a bug report points at exact source.
@Suite("latchkey --version")
struct VersionTests {
    @Test("latchkey --version prints 'latchkey RELEASE (commit HASH)', and the hash is a commit of this repository")
    func versionNamesTheCommit() async throws {
        let run = try await LatchkeyCommand.run(["--version"])
        #expect(run.status == 0, "\(run.stderr)")
        let line = run.stdout.trimmingCharacters(in: .newlines)
        let match = try #require(line.wholeMatch(of: /latchkey (\d+\.\d+\.\d+) \(commit (([0-9a-f]{40})(-dirty)?|unknown)\)/), "\(line)")
        // The checkout the tests run in holds the commit the build named (SwiftPM may keep
        // the manifest's answer from an earlier commit of the same checkout; it is still one
        // of this repository's). Outside git there is nothing to compare with.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        if FileManager.default.fileExists(atPath: root.appendingPathComponent(".git").path) {
            let commit = try #require(match.3.map(String.init), "built in a git checkout, yet no commit named: \(line)")
            let git = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/git"), ["-C", root.path, "cat-file", "-e", commit + "^{commit}"])
            #expect(git.status == 0, "\(commit) is not a commit of \(root.path): \(git.stderr)")
        }
    }
}
