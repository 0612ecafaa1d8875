/// A request or response whose members travel as `application/x-www-form-urlencoded`
/// parameters (``FormEncoding``): an authorization request in a query string, a token
/// request in a body. One type per message, read by the provider and written by the
/// client, so each parameter name is spelled once (in the type's `Name`).
public protocol FormParameters: Sendable {
    /// The message as decoded parameters; unknown parameters are ignored (RFC 6749 §3.1,
    /// §3.2). Values are taken as they are: the reader checks them.
    init(form: [String: String])
    /// The message's parameters, in a stable order, absent members left out.
    var formItems: [(String, String)] { get }
}

/// Collects form items in order, leaving out absent values.
struct FormItems<Name: RawRepresentable> where Name.RawValue == String {
    private(set) var items: [(String, String)] = []

    mutating func add(_ name: Name, _ value: String?) {
        if let value { items.append((name.rawValue, value)) }
    }
}
