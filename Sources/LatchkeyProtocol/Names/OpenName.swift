/// A name from an open set: step names, field names, transfer states, error codes. A
/// newer provider may send one this client does not know, so these are strings with
/// known values as static members, not enums: decoding never fails on a new name, and the
/// code that reads it decides what an unknown one means.
///
/// Encoded as the bare string (the standard library's `Codable` for `String`-backed
/// `RawRepresentable` types).
public protocol OpenName: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral
where RawValue == String {
    init(rawValue: String)
}

extension OpenName {
    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }

    public var description: String { rawValue }
}
