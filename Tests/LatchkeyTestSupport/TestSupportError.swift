/// A test could not set itself up, or a helper found something it cannot work with.
public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}
