import Foundation
@testable import LatchkeyLogging
import Logging
import Testing

/// The two log line formats, written into one buffer each: the text line keeps its logfmt
/// shape with every value escaped and quoted where it could pose as another field, and the
/// JSON line is byte for byte what `JSONEncoder` with sorted keys writes for its fields.
@Suite("Log line formats")
struct LogFormatTests {
    static let metadata: Logger.Metadata = [
        "hb.request.id": "r-1", "client": "my client", "grant": "a=b", "x": "\n\u{1B}[2J", "quote": "say \"hi\"", "mark": "a \u{301}b", "empty": "",
    ]

    @Test("text: time, level, logger, message, then the fields sorted by key, escaped and quoted where needed")
    func text() throws {
        let line = try #require(TextLogFormat.line(level: .info, label: "latchkey-idp", message: "token\nrequest", metadata: Self.metadata))
        let time = line.prefix(12)
        #expect(time.wholeMatch(of: /\d\d:\d\d:\d\d\.\d\d\d/) != nil, "\(line)")
        #expect(line.dropFirst(12) == #" info latchkey-idp: token\nrequest client="my client" empty="" grant="a=b" request_id=r-1 mark="a "# + "\u{301}" + #"b" quote="say \"hi\"" x=\n\u{1B}[2J"#)
        let single = try #require(TextLogFormat.line(level: .warning, label: "l", message: "m", metadata: ["k": "v"]))
        #expect(single.dropFirst(12) == " warning l: m k=v")
        #expect(try #require(TextLogFormat.line(level: .error, label: "l", message: "m", metadata: [:])).dropFirst(12) == " error l: m")
    }

    @Test("JSON: the same bytes JSONEncoder with sorted keys writes for the line's fields")
    func json() throws {
        let line = try #require(JSONLogFormat.line(level: .info, label: "latchkey-idp", message: "token \"request\"\n", metadata: Self.metadata))
        let fields = try JSONDecoder().decode([String: String].self, from: Data(line.utf8))
        #expect(fields["request_id"] == "r-1" && fields["message"] == "token \"request\"\n" && fields["level"] == "info" && fields["logger"] == "latchkey-idp")
        #expect(fields["x"] == "\n\u{1B}[2J" && fields["mark"] == "a \u{301}b" && fields.count == 11)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(line == String(decoding: try encoder.encode(fields), as: UTF8.self))
        #expect(!line.contains("\n"), "one line")
    }

    @Test("the time is what ISO8601FormatStyle's time with fractional seconds writes, for 10,000 random instants and the day's edges")
    func time() {
        let style = Date.ISO8601FormatStyle.iso8601.time(includingFractionalSeconds: true)
        var instants: [Double] = [0, 86_399.999, 86_400, 1_700_000_000.0005, 1_799_999_999.9999, -0.5, -86_400.25, 4_102_444_799.998]
        for _ in 0..<10_000 { instants.append(Double.random(in: -1e9...4e9)) }
        for instant in instants {
            let date = Date(timeIntervalSince1970: instant)
            #expect(TextLogFormat.time(date) == style.format(date), "\(instant)")
        }
    }
}
