public import Foundation

extension Data {
    /// Bytes from hex text (either case, no separators). Anything else, an odd length
    /// included, throws: a typo in a test vector must fail the test, not become zeros.
    public init(hex: String) throws {
        var bytes = [UInt8]()
        bytes.reserveCapacity(hex.utf8.count / 2)
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next() {
            guard let low = iterator.next(), let h = Self.nibble(high), let l = Self.nibble(low) else {
                throw TestSupportError("\"\(hex.prefix(40))\" is not hex")
            }
            bytes.append(h << 4 | l)
        }
        self.init(bytes)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Lower-case hex.
    public var hex: String { map { String(format: "%02x", $0) }.joined() }
}
