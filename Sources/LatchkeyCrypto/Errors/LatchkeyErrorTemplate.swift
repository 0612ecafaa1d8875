/// The shape every Latchkey error shares, after swift-certificates' `CertificateError`:
/// an open-ended ``code`` to match on (new codes are not a breaking change), a human
/// ``reason``, the error it stands for kept whole in ``underlying``, and where in
/// Latchkey it arose. Equality and hashing consider the code only, so a test can compare
/// against `SomeError(code: .x)`; the description reads
/// `Type.code: reason [details] (file:line) caused by underlying`.
///
/// Adopted by `CryptoError`, `KeyVaultError`, `WebAuthnError`, `OAuthError`,
/// `LatchkeyError`, `StoreError`, `MailError`, `ReferenceProviderError` and the provider's
/// internal `ProviderError`. Each has one factory per code in its `+Factories.swift`
/// (`CryptoError.invalidKey(reason:)`), as swift-certificates' `CertificateError` has, so a
/// call site names the kind first. No reason ever carries a secret.
package protocol LatchkeyErrorTemplate: Error, Hashable, CustomStringConvertible {
    associatedtype Code: Hashable, Sendable, CustomStringConvertible
    /// What kind of failure this is.
    var code: Code { get }
    /// What went wrong, in words someone can act on.
    var reason: String { get }
    /// The error this one stands for: one from a layer below, an engine, the system.
    var underlying: (any Error)? { get }
    /// Where in Latchkey the error was raised.
    var file: String { get }
    /// The line in ``file``.
    var line: UInt { get }
    /// What else the description shows in brackets after the reason (OpenSSL's error
    /// queue, a provider's error object); nil for nothing.
    var details: String? { get }
}

extension LatchkeyErrorTemplate {
    package var details: String? { nil }

    public var description: String {
        var text = "\(Self.self).\(code): \(reason)"
        if let details { text += " [\(details)]" }
        text += " (\(file):\(line))"
        if let underlying { text += " caused by \(underlying)" }
        return text
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
    }
}
