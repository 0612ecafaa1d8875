import HTTPTypes
@testable import LatchkeyIdP
import Testing

/// Which requests arm the body's deadline (`RequestBodyDeadline`, RFC 9112 §6.3):
/// only those whose head announces a body. The deadline's effect on a live connection
/// (408 for a body trickled past it, with a length or chunked) is in `HostileInputSuite`.
@Suite("Provider: which requests have a body to wait for")
struct RequestBodyDeadlineTests {
    @Test("a length other than 0, or any transfer coding, announces a body; none, or a length of 0, does not", arguments: [
        ([], false),
        ([(HTTPField.Name.contentLength, "0")], false),
        ([(.contentLength, "12")], true),
        ([(.transferEncoding, "chunked")], true),
        ([(.contentLength, "0"), (.transferEncoding, "chunked")], true),
        ([(.accept, "application/json"), (.contentType, "application/x-www-form-urlencoded")], false),
        ([(.accept, "*/*"), (.contentLength, "1")], true),
    ] as [([(HTTPField.Name, String)], Bool)])
    func announcesBody(fields: [(HTTPField.Name, String)], expected: Bool) {
        var headers = HTTPFields()
        for (name, value) in fields { headers.append(HTTPField(name: name, value: value)) }
        #expect(RequestBodyDeadline.announcesBody(headers) == expected, "\(headers)")
    }
}
