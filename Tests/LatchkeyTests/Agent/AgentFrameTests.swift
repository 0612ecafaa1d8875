import Foundation
import LatchkeyProtocol
import Testing

/// The agent socket's framing (docs/PROTOCOL.md section 11): frames in any pieces, and
/// every malformed header or body refused with its own code, never a crash; then a fuzz of
/// random and mutated streams.
@Suite("Agent framing")
struct AgentFrameTests {
    struct Message: Codable, Equatable {
        var op: String
        var credential: String?
    }

    /// SplitMix64: the fuzz is the same on every run, and a failure names its seed.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func header(version: UInt8 = AgentFrame.version, length: Int) -> Data {
        Data([version, UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
    }

    static func code(_ body: () throws -> Void) -> AgentProtocolError.Code? {
        do {
            try body()
            return nil
        } catch let error as AgentProtocolError {
            return error.code
        } catch {
            Issue.record("not an AgentProtocolError: \(error)")
            return nil
        }
    }

    @Test("frames arrive whole, byte by byte, or two in one read, and name their operation")
    func roundTrip() throws {
        let first = Message(op: "sign-assertion", credential: "abc")
        let second = Message(op: "lock", credential: nil)
        let stream = try AgentFrame.encode(first) + AgentFrame.encode(second)

        var reader = AgentFrameReader()
        var bodies: [Data] = []
        for byte in stream {
            try reader.append([byte])
            while let body = try reader.next() { bodies.append(body) }
        }
        try reader.finish()
        #expect(try bodies.map { try JSONDecoder().decode(Message.self, from: $0) } == [first, second])
        #expect(try bodies.map(AgentFrame.operation(of:)) == ["sign-assertion", "lock"])

        var together = AgentFrameReader()
        try together.append(stream)
        #expect(try together.next() != nil && together.next() != nil && together.next() == nil)
    }

    @Test("refused by name: another version, an empty or oversized body (before it is buffered), a frame cut short, a body that is not an object with a valid op")
    func hostileFrames() throws {
        var reader = AgentFrameReader()
        #expect(Self.code { try reader.append(Self.header(version: 2, length: 2) + Data("{}".utf8)) } == .unsupportedVersion)
        reader = AgentFrameReader()
        #expect(Self.code { try reader.append(Self.header(length: 0)) } == .frameSize)
        reader = AgentFrameReader()
        #expect(Self.code { try reader.append(Self.header(length: AgentFrame.maximumBodySize + 1)) } == .frameSize, "refused from the header alone")
        reader = AgentFrameReader()
        #expect(Self.code { try reader.append(Self.header(length: Int(UInt32.max))) } == .frameSize)

        reader = AgentFrameReader()
        try reader.append(Self.header(length: 10) + Data("{\"op\"".utf8))
        #expect(try reader.next() == nil)
        #expect(Self.code { try reader.finish() } == .truncated)

        #expect(Self.code { _ = try AgentFrame.encode(String(repeating: "x", count: AgentFrame.maximumBodySize)) } == .frameSize)
        for body in ["[]", "\"op\"", "{}", "{\"op\":1}", "{\"op\":\"\"}", "{\"op\":\"Sign\"}", "{\"op\":\"sign\u{0}\"}", "{\"op\":\"\(String(repeating: "a", count: 65))\"}", "not json"] {
            #expect(Self.code { _ = try AgentFrame.operation(of: Data(body.utf8)) } == .malformedMessage, "\(body)")
        }
    }

    @Test("fuzz: random streams and mutated frames in random pieces end in a frame or a typed error, never a crash")
    func fuzz() throws {
        let valid = try AgentFrame.encode(Message(op: "tokens", credential: String(repeating: "c", count: 40)))
        for seed in UInt64(1)...1500 {
            var random = SeededGenerator(state: seed)
            var stream: Data
            if seed % 2 == 0 {
                stream = Data((0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
            } else {
                stream = valid + valid
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    stream[Int.random(in: 0..<stream.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
                stream = stream.prefix(Int.random(in: 0...stream.count, using: &random))
            }
            var reader = AgentFrameReader()
            var offset = 0
            do {
                while offset < stream.count {
                    let piece = Int.random(in: 1...8, using: &random)
                    try reader.append(stream[offset..<min(offset + piece, stream.count)])
                    offset += piece
                    while let body = try reader.next() {
                        #expect(!body.isEmpty && body.count <= AgentFrame.maximumBodySize, "seed \(seed)")
                        _ = try? AgentFrame.operation(of: body)
                    }
                }
                try reader.finish()
            } catch let error as AgentProtocolError {
                #expect([.unsupportedVersion, .frameSize, .truncated].contains(error.code), "seed \(seed): \(error)")
            } catch {
                Issue.record("seed \(seed): not an AgentProtocolError: \(error)")
            }
        }
    }
}
