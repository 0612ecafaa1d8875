import Foundation
@testable import LatchkeyIdP
import LatchkeyProtocol
import Testing

/// The directory's page written by hand is the page `JSONEncoder` writes, and the
/// `If-None-Match` comparison and the cursors read what RFC 9110 and section 14 say.
@Suite("Provider: the host directory's encoding, tags and cursors")
struct HostDirectoryEncodingTests {
    @Test("a page written directly is byte for byte what JSONEncoder with sorted keys writes, hostile strings included")
    func pageJSON() throws {
        let hostile = "a\"b\\c\u{0}\u{1B}[2J\n\u{202E}é/€"
        let page = HostDirectoryPage(
            version: "42",
            accounts: [
                .init(name: "ada", uid: 65536, gid: 65536, gecos: hostile, home: "/home/ada", shell: "/bin/bash"),
                .init(name: "grace", uid: 99999, gid: 99999, gecos: "", home: "/srv/g", shell: "/usr/bin/zsh"),
            ],
            groups: [.init(name: "ops", gid: 70000, sudo: true, members: ["ada", hostile]), .init(name: "dba", gid: 70001, sudo: false, members: [])],
            next: "42.g70001.-1"
        )
        let reference = JSONEncoder()
        reference.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(page.encodedJSON() == (try reference.encode(page)))
        let last = HostDirectoryPage(version: "1", accounts: [], groups: [], next: nil)
        #expect(last.encodedJSON() == (try reference.encode(last)))
        #expect(try JSONDecoder().decode(HostDirectoryPage.self, from: page.encodedJSON()) == page)
    }

    @Test("If-None-Match: the tag, a list holding it, W/ and * match; anything else does not")
    func entityTags() {
        let tag = HostDirectory.entityTag(42)
        #expect(tag == "\"42\"")
        for header in ["\"42\"", "W/\"42\"", " \"41\" , \"42\"", "*", "\"1\",\t\"42\"\t"] {
            #expect(HostDirectory.matches(header, tag), "\(header)")
        }
        for header in ["\"4\"", "42", "\"420\"", "", ",", "W/", "**", "\"42", String(repeating: " ", count: 1100) + "\"42\""] {
            #expect(!HostDirectory.matches(header, tag), "\(header)")
        }
    }

    @Test("cursors read back as written; anything else is nil")
    func cursors() {
        for cursor in [HostDirectoryCursor.accounts(version: 7, afterUID: -1), .accounts(version: 7, afterUID: 65536), .groups(version: 1, fromGID: 0, afterMember: -1), .groups(version: 9, fromGID: 70000, afterMember: 65537)] {
            #expect(HostDirectoryCursor(cursor.text) == cursor)
        }
        for text in ["0.a1", "7.a-2", "7.g-1.1", "7.g1.-2", "7.a1.1", "7.x1", "7", "7.", ".a1", "7.a 1", "7.a+1", "7.a1\n"] {
            #expect(HostDirectoryCursor(text) == nil, "\(text.debugDescription)")
        }
    }
}
