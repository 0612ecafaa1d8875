/// `application/x-www-form-urlencoded` parameters (WHATWG URL §5.1, the format of RFC 6749
/// §4.1.1 query strings and §4.1.3 token request bodies), decoded once, byte by byte.
///
/// One decoder serves the query string and the form body alike. It used to be Foundation's
/// `removingPercentEncoding` on top of Hummingbird's `queryParameters`, which had already
/// percent-decoded the values: a value was decoded twice, so `%2B` (a literal `+`) became
/// a space and `%2541` became `A`. Parsing the raw text here decodes everything exactly
/// once, and costs a fraction of the bridged Foundation calls on the token endpoint.
enum FormURLEncoded {
    /// The parameters of `text`. A parameter repeated is an error (RFC 6749 §3.1: "MUST
    /// NOT be included more than once"), as is a malformed escape or a name or value that
    /// is not UTF-8 once decoded.
    static func parse(_ text: Substring) throws(ProviderError) -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in text.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let separator = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            let valueStart = separator == pair.endIndex ? separator : pair.index(after: separator)
            guard let name = decode(pair[pair.startIndex..<separator]), let value = decode(pair[valueStart..<pair.endIndex]) else {
                throw ProviderError.badRequest("invalid_request", "malformed form or query parameters")
            }
            guard parameters.updateValue(value, forKey: name) == nil else {
                throw ProviderError.badRequest("invalid_request", "parameter \(Self.printable(name)) repeated")
            }
        }
        return parameters
    }

    /// One name or value: `+` is a space, `%XX` a byte; the bytes must be UTF-8.
    static func decode(_ encoded: Substring.UTF8View.SubSequence) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.count)
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let byte = encoded[index]
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                let high = encoded.index(after: index)
                guard high < encoded.endIndex, encoded.index(after: high) < encoded.endIndex,
                      let upper = hexValue(encoded[high]), let lower = hexValue(encoded[encoded.index(after: high)])
                else { return nil }
                bytes.append(upper << 4 | lower)
                index = encoded.index(after: high)
            default:
                bytes.append(byte)
            }
            index = encoded.index(after: index)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A parameter name as it may appear in an error message: short and without controls.
    private static func printable(_ name: String) -> String {
        String(name.unicodeScalars.prefix(40).map { $0.properties.generalCategory == .control ? "?" : Character($0) })
    }
}
