import CLatchkeyOpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// libssl's client side over a connected socket: owns the `SSL_CTX` and `SSL`, frees them
/// in `deinit`. Not the socket: its owner closes it after this is gone.
final class OpenSSLTLSSession {
    private let context: OpaquePointer
    private let ssl: OpaquePointer

    /// Handshakes as a client of `host` on `socket`, verifying its certificate chain
    /// against the system's trust store, or only `trustedCertificatesFile` when given,
    /// and its name (RFC 6125 through `SSL_set1_host`). TLS 1.2 at least.
    init(socket: Int32, host: String, trustedCertificatesFile: String?) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw CryptoError.fromOpenSSL(.tlsFailure, "SSL_CTX_new failed")
        }
        self.context = context
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw CryptoError.fromOpenSSL(.tlsFailure, "SSL_new failed")
        }
        self.ssl = ssl
        guard CLatchkey_SSL_CTX_require_tls12(context) == 1 else {
            throw CryptoError.fromOpenSSL(.tlsFailure, "cannot require TLS 1.2")
        }
        let loaded = trustedCertificatesFile.map { SSL_CTX_load_verify_locations(context, $0, nil) } ?? SSL_CTX_set_default_verify_paths(context)
        guard loaded == 1 else {
            throw CryptoError.fromOpenSSL(.tlsFailure, "cannot load trusted certificates\(trustedCertificatesFile.map { " from \($0)" } ?? "")")
        }
        SSL_set_verify(ssl, SSL_VERIFY_PEER, nil)
        // An IP address is checked against the certificate's IP addresses and sent
        // without SNI (RFC 6066 §3 allows host names only); a name against its DNS names.
        let named = Self.isIPAddress(host)
            ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1
            : SSL_set1_host(ssl, host) == 1 && CLatchkey_SSL_set_server_name(ssl, host) == 1
        guard named, SSL_set_fd(ssl, socket) == 1 else {
            throw CryptoError.fromOpenSSL(.tlsFailure, "cannot set up TLS for \(host)")
        }
        guard SSL_connect(ssl) == 1 else {
            let verification = SSL_get_verify_result(ssl)
            if verification != X509_V_OK {
                let reason = String(cString: X509_verify_cert_error_string(verification))
                throw CryptoError.fromOpenSSL(.tlsFailure, "the certificate of \(host) does not verify: \(reason)")
            }
            throw CryptoError.fromOpenSSL(.tlsFailure, "the TLS handshake with \(host) failed")
        }
    }

    private static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// Writes all of `bytes`.
    func write(_ bytes: Data) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                SSL_write(ssl, buffer.baseAddress! + offset, Int32(min(buffer.count - offset, Int(Int32.max))))
            }
            guard written > 0 else { throw CryptoError.fromOpenSSL(.tlsFailure, "TLS write failed") }
            offset += Int(written)
        }
    }

    /// Reads what is available, up to `maximum` bytes; empty at the end of the stream.
    func read(maximum: Int) throws -> Data {
        var buffer = [UInt8](repeating: 0, count: maximum)
        let count = SSL_read(ssl, &buffer, Int32(maximum))
        if count > 0 { return Data(buffer.prefix(Int(count))) }
        if SSL_get_error(ssl, count) == SSL_ERROR_ZERO_RETURN { return Data() }
        throw CryptoError.fromOpenSSL(.tlsFailure, "TLS read failed")
    }

    /// Sends close_notify; errors are ignored (the socket closes next anyway).
    func close() {
        _ = SSL_shutdown(ssl)
        OpenSSLErrorQueue.clear()
    }
}
