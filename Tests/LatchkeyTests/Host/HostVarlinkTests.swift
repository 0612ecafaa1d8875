import Foundation
@testable import LatchkeyHost
import LatchkeyProtocol
import Testing

/// The varlink side of the daemon with hostile peers (docs/PROTOCOL.md section 15): the
/// framing, the call's shape, and `io.systemd.UserDatabase`'s answers to every kind of
/// question, right or wrong.
@Suite("latchkey host: varlink and io.systemd.UserDatabase")
struct HostVarlinkTests {
    @Test("messages are cut at NUL however they arrive; more than 64 KiB without one, or a connection ending inside one, is refused")
    func framing() throws {
        var reader = VarlinkFrameReader()
        try reader.append(Data("{\"method\":\"a\"}\0{\"meth".utf8))
        #expect(try reader.next() == Data("{\"method\":\"a\"}".utf8))
        #expect(try reader.next() == nil)
        try reader.append(Data("od\":\"b\"}\0".utf8))
        #expect(try reader.next() == Data("{\"method\":\"b\"}".utf8))
        try reader.finish()

        var flooded = VarlinkFrameReader()
        #expect(throws: HostError.self) {
            for _ in 0..<5 { try flooded.append(Data(repeating: UInt8(ascii: "x"), count: 16 * 1024)) }
        }
        var cut = VarlinkFrameReader()
        try cut.append(Data("{\"method\"".utf8))
        #expect(throws: HostError.self) { try cut.finish() }
        // Many calls in one stream never pile up: what was handed out is dropped.
        var stream = VarlinkFrameReader()
        for _ in 0..<10_000 {
            try stream.append(Data("{\"method\":\"x\"}\0{".utf8))
            _ = try stream.next()
            try stream.append(Data("}\0".utf8))
            _ = try stream.next()
        }
    }

    @Test("a call that is not a JSON object with a method, or whose method is over 256 bytes, is refused", arguments: [
        "not json", "[]", "{}", "{\"method\": 7}", "{\"method\": \"\(String(repeating: "m", count: 300))\"}",
    ])
    func malformedCalls(_ text: String) {
        #expect(throws: HostError.self) { try VarlinkCall(Data(text.utf8)) }
    }

    static let directory = HostDirectory(version: "3", accounts: [
        .init(name: "alice", uid: 70001, gid: 70001, gecos: "Alice", home: "/home/alice", shell: "/bin/bash"),
        .init(name: "bob", uid: 70002, gid: 70002, gecos: "", home: "/home/bob", shell: "/bin/sh"),
    ], groups: [.init(name: "ops", gid: 70100, sudo: true, members: ["alice", "bob"])])

    /// The replies `service` writes for `call`.
    static func ask(_ call: String) throws -> [String] {
        let index = HostDirectoryIndex(directory: directory, local: LocalAccounts(), servesAccounts: true)
        let service = UserDatabaseService(service: "io.latchkey", index: { index })
        var replies: [String] = []
        try service.handle(try VarlinkCall(Data(call.utf8))) { reply in
            replies.append(String(decoding: reply.encoded.dropLast(), as: UTF8.self))
        }
        return replies
    }

    @Test("records by name, by ID and by both; every account with more; memberships by user and by group")
    func answers() throws {
        let byName = try Self.ask(#"{"method": "io.systemd.UserDatabase.GetUserRecord", "parameters": {"userName": "alice", "service": "io.latchkey"}}"#)
        #expect(byName.count == 1 && byName[0].contains(#""userName":"alice""#) && byName[0].contains(#""service":"io.latchkey""#) && byName[0].contains(#""realName":"Alice""#))
        #expect(!byName[0].contains("continues") && !byName[0].lowercased().contains("password"))
        #expect(try Self.ask(#"{"method": "io.systemd.UserDatabase.GetUserRecord", "parameters": {"uid": 70002}}"#)[0].contains(#""userName":"bob""#))
        let mismatch = try Self.ask(#"{"method": "io.systemd.UserDatabase.GetUserRecord", "parameters": {"userName": "alice", "uid": 70002}}"#)
        #expect(mismatch == [#"{"error":"io.systemd.UserDatabase.NoRecordFound","parameters":{}}"#])
        let all = try Self.ask(#"{"method": "io.systemd.UserDatabase.GetUserRecord", "parameters": {}, "more": true}"#)
        #expect(all.count == 2 && all[0].hasSuffix(#","continues":true}"#) && !all[1].contains("continues"))
        let groups = try Self.ask(#"{"method": "io.systemd.UserDatabase.GetGroupRecord", "parameters": {"gid": 70001}}"#)
        #expect(groups.count == 1 && groups[0].contains(#""groupName":"alice""#) && !groups[0].contains("members"), "a private group")
        let ops = try Self.ask(#"{"method": "io.systemd.UserDatabase.GetGroupRecord", "parameters": {"groupName": "ops"}}"#)
        #expect(ops[0].contains(#""members":["alice","bob"]"#))
        let memberships = try Self.ask(#"{"method": "io.systemd.UserDatabase.GetMemberships", "parameters": {"groupName": "ops"}, "more": true}"#)
        #expect(memberships.count == 2 && memberships[1].contains(#""userName":"bob""#))
        #expect(try Self.ask(#"{"method": "io.systemd.UserDatabase.GetMemberships", "parameters": {"userName": "alice"}}"#)[0].contains(#""groupName":"ops""#))
    }

    @Test("another service, enumeration without more, an unknown method, parameters of the wrong type, nothing found: each its varlink error")
    func refusals() throws {
        for (call, error) in [
            (#"{"method": "io.systemd.UserDatabase.GetUserRecord", "parameters": {"userName": "alice", "service": "io.other"}}"#, "io.systemd.UserDatabase.BadService"),
            (#"{"method": "io.systemd.UserDatabase.GetUserRecord", "parameters": {}}"#, "org.varlink.service.ExpectedMore"),
            (#"{"method": "io.systemd.UserDatabase.GetGroupRecord"}"#, "org.varlink.service.ExpectedMore"),
            (#"{"method": "io.systemd.UserDatabase.GetMemberships", "parameters": {"groupName": "ops"}}"#, "org.varlink.service.ExpectedMore"),
            (#"{"method": "io.systemd.UserDatabase.Delete", "parameters": {}}"#, "org.varlink.service.MethodNotFound"),
            (#"{"method": "io.systemd.UserDatabase.GetUserRecord", "parameters": {"uid": "0"}}"#, "org.varlink.service.InvalidParameter"),
            (#"{"method": "io.systemd.UserDatabase.GetUserRecord", "parameters": {"userName": "root"}}"#, "io.systemd.UserDatabase.NoRecordFound"),
            (#"{"method": "io.systemd.UserDatabase.GetUserRecord", "parameters": {"uid": 0}}"#, "io.systemd.UserDatabase.NoRecordFound"),
        ] {
            let replies = try Self.ask(call)
            #expect(replies.count == 1 && replies[0].hasPrefix(#"{"error":"\#(error)""#), "\(call): \(replies)")
        }
    }
}
