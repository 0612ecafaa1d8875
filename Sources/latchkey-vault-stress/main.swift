// latchkey-vault-stress: a vault writer for crash tests. It creates and updates keys in a
// loop, and after each write has returned (so is committed) reports it on stdout:
//   created <handle>
//   updated <handle> <counter>
// A test SIGKILLs it at random moments and then checks that every reported write
// survived and nothing is torn.
//
// Usage: latchkey-vault-stress <vault-directory> <key-file> <worker-id>

import Foundation
import LatchkeyCrypto

let arguments = CommandLine.arguments
guard arguments.count == 4, let worker = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: latchkey-vault-stress <vault-directory> <key-file> <worker-id>\n".utf8))
    exit(2)
}

/// Metadata of this tool's keys: "worker <id> counter <n>".
func metadata(counter: Int) -> Data {
    Data("worker \(worker) counter \(counter)".utf8)
}

func counter(in metadata: Data) -> Int? {
    let words = String(decoding: metadata, as: UTF8.self).split(separator: " ")
    guard words.count == 4, words[0] == "worker", Int(words[1]) == worker, words[2] == "counter" else { return nil }
    return Int(words[3])
}

func report(_ line: String) {
    // Unbuffered: the line reaches the file before the next write starts.
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

do {
    let vault = try KeyVault.open(
        at: URL(fileURLWithPath: arguments[1]),
        key: .keyFile(URL(fileURLWithPath: arguments[2]))
    )
    var mine = try vault.entries().filter { counter(in: $0.metadata) != nil }.map(\.handle)
    while true {
        if mine.isEmpty || Int.random(in: 0..<3) == 0 {
            let algorithm: SigningAlgorithm = Bool.random() ? .es256 : .ed25519
            let entry = try vault.createKey(algorithm, metadata: metadata(counter: 0))
            mine.append(entry.handle)
            report("created \(entry.handle)")
        } else if let handle = mine.randomElement() {
            var reached = 0
            try vault.updateMetadata(handle) { data in
                reached = (counter(in: data) ?? 0) + 1
                data = metadata(counter: reached)
            }
            report("updated \(handle) \(reached)")
        }
    }
} catch {
    FileHandle.standardError.write(Data("latchkey-vault-stress: \(error)\n".utf8))
    exit(1)
}
