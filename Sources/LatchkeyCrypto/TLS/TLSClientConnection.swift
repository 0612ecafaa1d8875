#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Synchronization

/// A TLS client connection over a socket the caller connected (for the provider's SMTP
/// mail: STARTTLS and implicit TLS), through the same OpenSSL as everything else, so no
/// second TLS library is linked. The peer's certificate chain is verified against the
/// system's trust store (or a given file of trusted certificates) and its name against
/// `host`; TLS 1.2 or later. Calls block: use it off the cooperative thread pool.
public final class TLSClientConnection: Sendable {
    private let session: Mutex<OpenSSLTLSSession?>

    /// Handshakes over `socket` (a connected stream socket the caller keeps owning).
    public init(socket: Int32, host: String, trustedCertificatesFile: String? = nil) throws {
        session = Mutex(try OpenSSLTLSSession(socket: socket, host: host, trustedCertificatesFile: trustedCertificatesFile))
    }

    /// Writes all of `bytes`.
    public func write(_ bytes: Data) throws {
        try session.withLock { session in
            guard let session else { throw CryptoError.tlsFailure(reason: "the TLS connection is closed") }
            try session.write(bytes)
        }
    }

    /// Up to `maximum` bytes as they arrive; empty when the peer closed the stream.
    public func read(maximum: Int = 16 * 1024) throws -> Data {
        try session.withLock { session in
            guard let session else { throw CryptoError.tlsFailure(reason: "the TLS connection is closed") }
            return try session.read(maximum: maximum)
        }
    }

    /// Ends TLS (close_notify) and frees its state; the socket stays open.
    public func close() {
        session.withLock { session in
            session?.close()
            session = nil
        }
    }
}
