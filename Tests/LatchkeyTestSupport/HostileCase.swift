public import Testing

/// One named attack of a hostile-input suite: what it does to a `Context` and what must
/// come of it (an error code, or a status and code), shown by name in the test report
/// (docs/SECURITY.md: each attack has a named test). Every module's suite lists its
/// attacks as these, so they read and report alike.
public struct HostileCase<Context: Sendable, Expected: Sendable>: Sendable, CustomTestStringConvertible {
    public let name: String
    public let expected: Expected
    public let run: @Sendable (Context) async throws -> Void

    public init(_ name: String, _ expected: Expected, _ run: @escaping @Sendable (Context) async throws -> Void) {
        self.name = name
        self.expected = expected
        self.run = run
    }

    public init(name: String, expected: Expected, _ run: @escaping @Sendable (Context) async throws -> Void) {
        self.init(name, expected, run)
    }

    public var testDescription: String { name }
}
