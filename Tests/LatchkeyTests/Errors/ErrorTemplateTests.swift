import Foundation
@testable import Latchkey
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// The agent's socket errors and the PAM login detail's follow the template every Latchkey
/// error shares (swift-certificates' shape): an open-ended code, a reason, the cause kept.
@Suite("Errors: the socket and PAM detail errors follow the template")
struct ErrorTemplateTests {
    @Test("connecting to a socket that is not there: UnixSocketError.systemCall with the errno kept as a POSIXError, and the description names its cause")
    func unixSocketError() throws {
        let directory = try TemporaryDirectory()
        let missing = directory.url.appendingPathComponent("nobody.sock").path
        let error = try #require(#expect(throws: UnixSocketError.self) { _ = try UnixSocket.connect(path: missing) })
        #expect(error.code == .systemCall && error.reason.contains(missing))
        #expect((error.underlying as? POSIXError)?.code == .ENOENT, "\(String(describing: error.underlying))")
        #expect(error.description.hasPrefix("UnixSocketError.systemCall: ") && error.description.contains("caused by"))
        let long = try #require(#expect(throws: UnixSocketError.self) { _ = try UnixSocket.connect(path: "/" + String(repeating: "a", count: 200)) })
        #expect(long.code == .unusable && long.underlying == nil)
    }

    @Test("a refused authorization_details: PAMLoginDetailError with tooLarge, malformed (the decoder's error kept) or invalidDetail")
    func pamLoginDetailError() throws {
        func refusal(_ parameter: String) throws -> PAMLoginDetailError {
            guard case .failure(let error) = PAMLoginDetail.parse(parameter) else { throw TestSupportError("\(parameter.prefix(40)) was taken") }
            return error
        }
        #expect(try refusal(String(repeating: " ", count: 4097)).code == .tooLarge)
        let malformed = try refusal("{not json")
        #expect(malformed.code == .malformed && malformed.underlying is DecodingError)
        #expect(try refusal("[]").code == .malformed)
        let detail = try refusal(#"[{"type":"\#(PAMLoginDetail.type)","service":"sshd","user":"a\u0007b"}]"#)
        #expect(detail.code == .invalidDetail && detail.reason.contains("user"), "\(detail)")
    }
}
