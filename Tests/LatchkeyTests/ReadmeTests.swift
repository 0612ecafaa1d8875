import Foundation
import Testing

/// The README stays true: its library example is the file the build compiles, and it
/// names the two commands a newcomer runs.
@Suite("README")
struct ReadmeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("the library example in README.md is Examples/ReadmeExample/main.swift, verbatim")
    func exampleIsCompiled() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(contentsOf: Self.root.appendingPathComponent("Examples/ReadmeExample/main.swift"), encoding: .utf8)
        let block = "```swift\n" + example.trimmingCharacters(in: .newlines) + "\n```"
        #expect(readme.contains(block))
    }

    @Test("the two commands come first")
    func twoCommands() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Two commands"))
        let rest = readme[section.upperBound...]
        let firstBlock = try #require(rest.range(of: "```sh\n")).upperBound
        let end = try #require(rest[firstBlock...].range(of: "```")).lowerBound
        let commands = rest[firstBlock..<end].split(separator: "\n").map { $0.split(separator: "#").first?.trimmingCharacters(in: .whitespaces) }
        #expect(commands == ["swift run latchkey demo", "swift test"])
    }
}
