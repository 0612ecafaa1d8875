import Foundation
import LatchkeyTestSupport
import Testing

/// Every `latchkey` command line the README and docs/ show, and the one `latchkey pam
/// enroll` prints, is read by the real parser (`latchkey check-arguments`), arguments and
/// all: an example that names an option the command does not have fails here, not at a
/// reader's terminal (the red team found `admin create-client --id`, which has none).
@Suite("Documented command lines parse")
struct DocumentedCommandTests {
    static let root = ReadmeTests.root

    /// The `latchkey` command lines of `markdown`'s shell blocks (```sh, ```bash,
    /// ```console, or no language): continuation lines joined, comments cut, pipelines,
    /// lists and `$(…)` split into their commands, `swift run`, `sudo` and variable
    /// assignments in front taken off, and redirections dropped. Placeholders stay words:
    /// `<bind URL>` one argument, `$port` the number 1, so an option that takes a number
    /// still parses.
    static func commandLines(in markdown: String) -> [[String]] {
        var lines: [[String]] = []
        var inShell = false
        var inBlock = false
        var block = ""
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if inBlock {
                    if inShell { lines += commands(inScript: block) }
                    inBlock = false
                    block = ""
                } else {
                    inBlock = true
                    inShell = ["", "sh", "bash", "console", "shell"].contains(line.dropFirst(3).trimmingCharacters(in: .whitespaces))
                }
            } else if inBlock {
                block += line + "\n"
            }
        }
        return lines
    }

    /// The `latchkey` commands of a shell script.
    static func commands(inScript script: String) -> [[String]] {
        let joined = script.replacingOccurrences(of: "\\\n", with: " ")
        var found: [[String]] = []
        for line in joined.split(separator: "\n") {
            for words in simpleCommands(String(line)) {
                var rest = words[...]
                while let first = rest.first, first == "sudo" || first == "eval" || (first.contains("=") && !first.hasPrefix("-")) { rest = rest.dropFirst() }
                if rest.starts(with: ["swift", "run"]) {
                    rest = rest.dropFirst(2)
                    if rest.first == "-c" { rest = rest.dropFirst(2) }
                }
                guard rest.first == "latchkey" else { continue }
                found.append(Array(rest.dropFirst()))
            }
        }
        return found
    }

    /// The simple commands of one shell line, as words: quotes removed, `$(…)` taken as a
    /// command of its own, `#` comments and redirections dropped.
    static func simpleCommands(_ line: String) -> [[String]] {
        var commands: [[String]] = []
        var words: [String] = []
        var word = ""
        var hasWord = false
        var quote: Character?
        var skipNext = false
        var characters = Array(line)[...]
        func endWord() {
            if hasWord {
                if skipNext { skipNext = false } else { words.append(word) }
            }
            word = ""
            hasWord = false
        }
        func endCommand() {
            endWord()
            if !words.isEmpty { commands.append(words) }
            words = []
        }
        while let character = characters.popFirst() {
            if let open = quote {
                if character == open {
                    quote = nil
                } else if open == "\"", character == "$", characters.first == "(" {
                    let (inner, rest) = Self.substitution(characters)
                    commands += simpleCommands(inner)
                    characters = rest
                    word += "1"
                } else if open == "\"", character == "$", characters.first.map({ $0.isLetter || $0 == "{" }) == true {
                    characters = characters.drop { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "{" || $0 == "}" }
                    word += "1"
                } else {
                    word.append(character)
                }
                continue
            }
            switch character {
            case "'", "\"":
                quote = character
                hasWord = true
            case " ", "\t":
                endWord()
            case "#" where !hasWord:
                endCommand()
                return commands
            case "|", ";", "&", "(", ")":
                endCommand()
            case "<" where characters.contains(">") && characters.prefix(while: { $0 != ">" }).allSatisfy({ $0.isLetter || $0 == " " }):
                // A placeholder, `<credential id>`: one word.
                let inside = characters.prefix { $0 != ">" }
                characters = characters.dropFirst(inside.count + 1)
                word += "<" + String(inside) + ">"
                hasWord = true
            case ">", "<":
                // A redirection: its target is the next word (or the rest of this one).
                if word.allSatisfy(\.isNumber) { word = ""; hasWord = false }
                endWord()
                if characters.first == ">" || characters.first == "&" { characters = characters.dropFirst() }
                if characters.first == " " { skipNext = true } else { skipNext = true; hasWord = false }
            case "$" where characters.first == "(":
                let (inner, rest) = Self.substitution(characters)
                commands += simpleCommands(inner)
                characters = rest
                word += "1"
                hasWord = true
            case "$" where characters.first.map({ $0.isLetter || $0 == "{" }) == true:
                characters = characters.drop { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "{" || $0 == "}" }
                word += "1"
                hasWord = true
            default:
                word.append(character)
                hasWord = true
            }
        }
        endCommand()
        return commands
    }

    /// The text of a `$(…)` whose `(` starts `characters`, and what follows it.
    static func substitution(_ characters: ArraySlice<Character>) -> (String, ArraySlice<Character>) {
        var depth = 0
        var inner = ""
        var rest = characters
        while let character = rest.popFirst() {
            if character == "(" { depth += 1; if depth == 1 { continue } }
            if character == ")" { depth -= 1; if depth == 0 { break } }
            inner.append(character)
        }
        return (inner, rest)
    }

    @Test("the extractor reads pipelines, substitutions, placeholders, comments and redirections as a shell would")
    func extractor() {
        let script = """
            latchkey client-key --issuer https://id.example.com --client-id web-1 \\
              | latchkey admin create-client --idp https://id.example.com --client-id web-1 --jwks -   # a comment
            TOKEN=$(latchkey token --issuer https://id.example.com)
            eval "$(latchkey agent --locked 2>/dev/null &)"
            latchkey export <credential id> > out.txt
            swift run -c release latchkey serve --port $port
            (umask 077; latchkey admin generate-token > /etc/latchkey/admin-token)
            curl -s https://example.com > x.pem
            """
        #expect(Self.commands(inScript: script) == [
            ["client-key", "--issuer", "https://id.example.com", "--client-id", "web-1"],
            ["admin", "create-client", "--idp", "https://id.example.com", "--client-id", "web-1", "--jwks", "-"],
            ["token", "--issuer", "https://id.example.com"],
            ["agent", "--locked"],
            ["export", "<credential id>"],
            ["serve", "--port", "1"],
            ["admin", "generate-token"],
        ])
    }

    @Test("every latchkey command line in README.md, docs/*.md and docs/guides/*.md parses with the real parser")
    func documentedCommands() async throws {
        var files = [Self.root.appendingPathComponent("README.md")]
        for folder in ["docs", "docs/guides"] {
            let docs = Self.root.appendingPathComponent(folder)
            files += try FileManager.default.contentsOfDirectory(atPath: docs.path).filter { $0.hasSuffix(".md") }.sorted().map { docs.appendingPathComponent($0) }
        }
        var checked = 0
        for file in files {
            for arguments in Self.commandLines(in: try String(contentsOf: file, encoding: .utf8)) {
                let run = try await LatchkeyCommand.run(["check-arguments"] + arguments)
                #expect(run.status == 0, "\(file.lastPathComponent): latchkey \(arguments.joined(separator: " ")): \(run.stderr)")
                checked += 1
            }
        }
        #expect(checked >= 60, "only \(checked) command lines found: has the extractor lost some?")
    }

    @Test("the command lines latchkey pam enroll and latchkey host enroll print parse", arguments: ["pam", "host"])
    func enrollHints(_ command: String) async throws {
        let directory = try TemporaryDirectory()
        let enrolled = try await LatchkeyCommand.run([
            command, "enroll", "--issuer", "http://127.0.0.1:9", "--client-id", "web-1", "--config", directory.url.appendingPathComponent("\(command).conf").path,
            "--vault", directory.url.appendingPathComponent("vault").path, "--vault-key-file", directory.url.appendingPathComponent("vault.key").path,
        ] + (command == "host" ? [
            "--state-dir", directory.url.appendingPathComponent("state").path, "--ssh-ca-file", directory.url.appendingPathComponent("ca.pub").path,
            "--ssh-krl-file", directory.url.appendingPathComponent("revoked.krl").path,
        ] : []))
        try #require(enrolled.status == 0, "\(enrolled.stderr)")
        let hinted = Self.commands(inScript: enrolled.stderr)
        #expect(hinted.contains { $0.starts(with: ["admin", "create-client"]) }, "\(enrolled.stderr)")
        #expect(hinted.count == (command == "host" ? 2 : 1), "\(hinted)")
        for line in hinted {
            let run = try await LatchkeyCommand.run(["check-arguments"] + line)
            #expect(run.status == 0, "latchkey \(line.joined(separator: " ")): \(run.stderr)")
        }
    }

    @Test("check-arguments refuses an option the command does not have, with the usage error's exit status, and runs nothing")
    func refusesUnknownOptions() async throws {
        let run = try await LatchkeyCommand.run(["check-arguments", "admin", "create-client", "--idp", "https://id.example.com", "--id", "x", "--grant", "device_code"])
        #expect(run.status == 2 && run.stderr.contains("--id"), "\(run.status) \(run.stderr)")
        let serve = try await LatchkeyCommand.run(["check-arguments", "serve", "--port", "0"])
        #expect(serve.status == 0 && serve.stdout.contains("Serve"), "\(serve.stdout)\(serve.stderr)")
    }
}
