#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

/// The `htu` of a DPoP proof: a request's URL without query and fragment (RFC 9449 §4.2),
/// in a normal form, so the server's comparison (§4.3 step 9) ignores what RFC 3986 §6.2.2
/// and §6.2.3 say does not change a URI: the case of scheme and host, a default port,
/// the case of percent-encoding hex digits, percent-encoded unreserved characters, and
/// dot segments. Anything else (user info, a relative or non-HTTP URL, broken
/// percent-encoding) is refused.
struct DPoPTarget: Hashable {
    static let maximumLength = 4096

    /// The normal form.
    let text: String

    init(_ url: URL) throws {
        try self.init(url.absoluteString)
    }

    init(_ string: String) throws {
        func refuse(_ why: String) -> OAuthError {
            OAuthError.invalidDPoPProof(reason: "htu: \(why)")
        }
        guard string.utf8.count <= Self.maximumLength else { throw refuse("over \(Self.maximumLength) bytes") }
        // Checked on the text itself: Foundation's parser quietly re-encodes a stray "%".
        let bytes = Array(string.utf8)
        for (index, byte) in bytes.enumerated() where byte == 0x25 {
            guard index + 2 < bytes.count, bytes[index + 1].isHexDigit, bytes[index + 2].isHexDigit else {
                throw refuse("broken percent-encoding")
            }
        }
        guard let components = URLComponents(string: string), let scheme = components.scheme?.lowercased(),
              scheme == "https" || scheme == "http", let host = components.percentEncodedHost?.lowercased(), !host.isEmpty
        else { throw refuse("not an absolute http(s) URL") }
        guard components.percentEncodedUser == nil, components.percentEncodedPassword == nil else {
            throw refuse("carries user info")
        }
        var text = scheme + "://" + host
        if let port = components.port, !(scheme == "https" && port == 443), !(scheme == "http" && port == 80) {
            text += ":\(port)"
        }
        text += try Self.normalPath(components.percentEncodedPath, refuse: refuse)
        self.text = text
    }

    /// Percent-encoding with upper-case hex and unreserved characters decoded (§6.2.2.1,
    /// §6.2.2.2), then dot segments removed (§5.2.4); an empty path is "/" (§6.2.3).
    private static func normalPath(_ path: String, refuse: (String) -> OAuthError) throws -> String {
        var bytes: [UInt8] = []
        var iterator = Array(path.utf8).makeIterator()
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 0x30...0x39: byte - 0x30
            case 0x41...0x46: byte - 0x41 + 10
            case 0x61...0x66: byte - 0x61 + 10
            default: nil
            }
        }
        while let byte = iterator.next() {
            guard byte == 0x25 else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hex), let low = iterator.next().flatMap(hex) else {
                throw refuse("broken percent-encoding")
            }
            let decoded = high << 4 | low
            let unreserved = (0x41...0x5A).contains(decoded) || (0x61...0x7A).contains(decoded) || (0x30...0x39).contains(decoded)
                || [0x2D, 0x2E, 0x5F, 0x7E].contains(decoded)
            if unreserved {
                bytes.append(decoded)
            } else {
                bytes.append(contentsOf: Array(("%" + HexadecimalText.padded(decoded, digits: 2, uppercase: true)).utf8))
            }
        }
        var output: [Substring] = []
        let segments = String(decoding: bytes, as: UTF8.self).split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        for (index, segment) in segments.enumerated() {
            let last = index == segments.count - 1
            switch segment {
            case ".":
                if last { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if last { output.append("") }
            default:
                output.append(segment)
            }
        }
        return "/" + output.joined(separator: "/")
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
