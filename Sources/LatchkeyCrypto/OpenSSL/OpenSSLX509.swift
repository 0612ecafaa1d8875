import CLatchkeyOpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Owner of one `X509`, freed in `deinit`. Never modified after parsing, so it may be read
/// from several threads at once.
final class X509Pointer: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { X509_free(pointer) }

    /// Parses one DER certificate that fills `der` exactly.
    static func parse(_ der: Data) throws(CryptoError) -> X509Pointer {
        guard !der.isEmpty, der.count <= X509Limits.maximumDERSize else {
            throw CryptoError.invalidEncoding(reason: "a certificate must be 1 to \(X509Limits.maximumDERSize) bytes of DER, not \(der.count)")
        }
        let parsed: OpaquePointer? = der.withUnsafeBytes { raw -> OpaquePointer? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let certificate = d2i_X509(nil, &cursor, raw.count) else { return nil }
            guard let end = cursor, end == base + raw.count else {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
        guard let parsed else {
            throw CryptoError.fromOpenSSL(.invalidEncoding, "not a DER X.509 certificate, or bytes follow it")
        }
        return X509Pointer(taking: parsed)
    }

    /// `version` as written, 1 to 3.
    var version: Int { Int(X509_get_version(pointer)) + 1 }

    var subjectEntryCount: Int { Int(X509_NAME_entry_count(X509_get_subject_name(pointer))) }

    /// The SubjectPublicKeyInfo, DER.
    func subjectPublicKeyInfo() throws(CryptoError) -> Data {
        guard let key = X509_get0_pubkey(pointer) else {
            throw CryptoError.fromOpenSSL(.invalidKey, "the certificate's public key does not parse")
        }
        var out: UnsafeMutablePointer<UInt8>?
        let count = i2d_PUBKEY(key, &out)
        guard count > 0, let out else { throw CryptoError.fromOpenSSL(.invalidKey, "cannot encode the certificate's public key") }
        defer { CRYPTO_free(out, #fileID, #line) }
        return Data(bytes: out, count: Int(count))
    }

    /// Whether basicConstraints is present, and whether it says CA.
    var basicConstraints: (present: Bool, ca: Bool) {
        let flags = X509_get_extension_flags(pointer)
        return (flags & UInt32(EXFLAG_BCONS) != 0, flags & UInt32(EXFLAG_CA) != 0)
    }

    /// The extended key usages' OIDs, dotted, in order; nil when the extension is absent.
    var extendedKeyUsages: [String]? {
        var critical: Int32 = 0
        guard let raw = X509_get_ext_d2i(pointer, NID_ext_key_usage, &critical, nil) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        let usages = OpaquePointer(raw)
        defer { EXTENDED_KEY_USAGE_free(usages) }
        var oids: [String] = []
        // The typed sk_* helpers are C macros; the generic stack calls are what they expand to.
        for index in 0..<OPENSSL_sk_num(usages) {
            oids.append(Self.dotted(OpaquePointer(OPENSSL_sk_value(usages, index))))
        }
        return oids
    }

    /// The subjectAlternativeName: whether it is critical, and the attributes of its
    /// directory names (OID, value), in order; nil when absent.
    var subjectAlternativeName: (critical: Bool, directoryNameAttributes: [(oid: String, value: String)])? {
        var critical: Int32 = 0
        guard let raw = X509_get_ext_d2i(pointer, NID_subject_alt_name, &critical, nil) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        let names = OpaquePointer(raw)
        defer { GENERAL_NAMES_free(names) }
        var attributes: [(oid: String, value: String)] = []
        for index in 0..<OPENSSL_sk_num(names) {
            guard let name = OPENSSL_sk_value(names, index)?.assumingMemoryBound(to: GENERAL_NAME.self), name.pointee.type == GEN_DIRNAME,
                  let directory = name.pointee.d.directoryName else { continue }
            for entryIndex in 0..<X509_NAME_entry_count(directory) {
                guard let entry = X509_NAME_get_entry(directory, entryIndex), let data = X509_NAME_ENTRY_get_data(entry),
                      let bytes = ASN1_STRING_get0_data(data) else { continue }
                let value = String(decoding: UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data))), as: UTF8.self)
                attributes.append((Self.dotted(X509_NAME_ENTRY_get_object(entry)), value))
            }
        }
        return (critical == 1, attributes)
    }

    /// The value (extnValue's contents, DER) of the extension with dotted `oid`; nil when
    /// the certificate has none.
    func extensionValue(_ oid: String) -> Data? {
        guard let object = OBJ_txt2obj(oid, 1) else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(pointer, object, -1)
        guard index >= 0, let found = X509_get_ext(pointer, index) else { return nil }
        return Self.bytes(X509_EXTENSION_get_data(found))
    }

    var authorityKeyIdentifier: Data? { Self.bytes(X509_get0_authority_key_id(pointer)) }
    var subjectKeyIdentifier: Data? { Self.bytes(X509_get0_subject_key_id(pointer)) }

    /// Whether the certificate chains to one of `roots` through `intermediates`, valid at
    /// `time` (RFC 5280 §6, OpenSSL's path validation).
    func chains(to roots: [X509Pointer], through intermediates: [X509Pointer], at time: Date) -> Bool {
        guard let store = X509_STORE_new() else { return false }
        defer { X509_STORE_free(store) }
        for root in roots where X509_STORE_add_cert(store, root.pointer) != 1 {
            OpenSSLErrorQueue.clear()
            return false
        }
        guard let untrusted = OPENSSL_sk_new_null() else { return false }
        defer { OPENSSL_sk_free(untrusted) }
        for certificate in intermediates { _ = OPENSSL_sk_push(untrusted, UnsafeRawPointer(certificate.pointer)) }
        guard let context = X509_STORE_CTX_new() else { return false }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, pointer, untrusted) == 1 else {
            OpenSSLErrorQueue.clear()
            return false
        }
        X509_STORE_CTX_set_time(context, 0, time_t(time.timeIntervalSince1970))
        let verified = X509_verify_cert(context) == 1
        OpenSSLErrorQueue.clear()
        return withExtendedLifetime((roots, intermediates)) { verified }
    }

    private static func dotted(_ object: OpaquePointer?) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let count = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        return count > 0 ? String(nulTerminated: buffer) : ""
    }

    private static func bytes(_ string: UnsafePointer<ASN1_STRING>?) -> Data? {
        guard let string, let bytes = ASN1_STRING_get0_data(string) else { return nil }
        return Data(bytes: bytes, count: Int(ASN1_STRING_length(string)))
    }
}

/// Bounds on certificate input: an AIK or CA certificate is under 2 KiB.
enum X509Limits {
    static let maximumDERSize = 16 * 1024
}
