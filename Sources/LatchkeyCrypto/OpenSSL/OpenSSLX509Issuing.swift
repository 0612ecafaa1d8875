import CLatchkeyOpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Making and signing certificates, for the provider's attestation CA: its self-signed
/// root and the AIK certificates it issues (WebAuthn L3 §8.3.1; RFC 5280 §4).
extension X509Pointer {
    /// An extension to write.
    enum NewExtension {
        /// basicConstraints (RFC 5280 §4.2.1.9), critical for a CA.
        case basicConstraints(ca: Bool)
        /// keyUsage keyCertSign and cRLSign, critical (§4.2.1.3).
        case certificateSigning
        /// extKeyUsage with these OIDs, in order, not critical (§4.2.1.12).
        case extendedKeyUsage([String])
        /// subjectKeyIdentifier: the SHA-1 of the public key (§4.2.1.2, method 1).
        case subjectKeyIdentifier
        /// authorityKeyIdentifier: the issuer's subjectKeyIdentifier (§4.2.1.1).
        case authorityKeyIdentifier
        /// subjectAltName, critical, one directoryName with these attributes (dotted OID,
        /// UTF8String value), in order (§4.2.1.6; TCG EK Credential Profile §3.2.9).
        case directoryNameAlternativeName([(oid: String, value: String)])
    }

    /// A version 3 certificate for `publicKey`, signed by `signingKey` (ECDSA with SHA-256)
    /// as `issuer`, or self-signed when `issuer` is nil. `subjectCommonName` nil leaves the
    /// subject an empty name.
    static func issue(
        serial: Data, subjectCommonName: String?, publicKey: EVPKey, notBefore: Date, notAfter: Date,
        extensions: [NewExtension], issuer: X509Pointer?, signingKey: EVPKey
    ) throws -> X509Pointer {
        guard let certificate = X509_new() else { throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a certificate") }
        let owner = X509Pointer(taking: certificate)
        func require(_ done: Bool, _ what: String) throws {
            guard done else { throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot write the certificate's \(what)") }
        }
        try require(X509_set_version(certificate, 2) == 1, "version")
        try require(serial.count <= 20 && serial.first.map { $0 & 0x80 == 0 } == true, "serial (1 to 20 bytes, positive)")
        guard let number = BN_bin2bn([UInt8](serial), Int32(serial.count), nil) else { throw CryptoError.fromOpenSSL(.openSSLFailure, "no serial") }
        defer { BN_free(number) }
        try require(BN_to_ASN1_INTEGER(number, X509_get_serialNumber(certificate)) != nil, "serial")

        guard let subject = X509_NAME_new() else { throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a name") }
        defer { X509_NAME_free(subject) }
        if let subjectCommonName {
            try require(X509_NAME_add_entry_by_txt(subject, "CN", Int32(MBSTRING_UTF8), subjectCommonName, -1, -1, 0) == 1, "subject")
        }
        try require(X509_set_subject_name(certificate, subject) == 1, "subject")
        try require(X509_set_issuer_name(certificate, issuer.map { X509_get_subject_name($0.pointer) } ?? subject) == 1, "issuer")
        try require(ASN1_TIME_set(X509_getm_notBefore(certificate), time_t(notBefore.timeIntervalSince1970)) != nil, "notBefore")
        try require(ASN1_TIME_set(X509_getm_notAfter(certificate), time_t(notAfter.timeIntervalSince1970)) != nil, "notAfter")
        try require(X509_set_pubkey(certificate, publicKey.pointer) == 1, "public key")

        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.pointer ?? certificate, certificate, nil, nil, 0)
        for newExtension in extensions {
            try add(newExtension, to: certificate, context: &context)
        }
        try require(X509_sign(certificate, signingKey.pointer, EVP_sha256()) > 0, "signature")
        return owner
    }

    private static func add(_ newExtension: NewExtension, to certificate: OpaquePointer, context: inout X509V3_CTX) throws {
        func configured(_ nid: Int32, _ value: String) throws {
            guard let made = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot make the extension \(value)")
            }
            defer { X509_EXTENSION_free(made) }
            guard X509_add_ext(certificate, made, -1) == 1 else { throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot add the extension \(value)") }
        }
        switch newExtension {
        case .basicConstraints(let ca):
            try configured(NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE")
        case .certificateSigning:
            try configured(NID_key_usage, "critical,keyCertSign,cRLSign")
        case .subjectKeyIdentifier:
            try configured(NID_subject_key_identifier, "hash")
        case .authorityKeyIdentifier:
            try configured(NID_authority_key_identifier, "keyid:always")
        case .extendedKeyUsage(let oids):
            guard let usages = OPENSSL_sk_new_null() else { throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a stack") }
            defer { OPENSSL_sk_pop_free(usages) { ASN1_OBJECT_free(OpaquePointer($0)) } }
            for oid in oids {
                guard let object = OBJ_txt2obj(oid, 1) else { throw CryptoError.fromOpenSSL(.invalidParameter, "not an OID: \(oid)") }
                _ = OPENSSL_sk_push(usages, UnsafeRawPointer(object))
            }
            guard X509_add1_ext_i2d(certificate, NID_ext_key_usage, UnsafeMutableRawPointer(usages), 0, UInt(X509V3_ADD_APPEND)) == 1 else {
                throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot add the extended key usages")
            }
        case .directoryNameAlternativeName(let attributes):
            guard let directory = X509_NAME_new() else { throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a name") }
            for (oid, value) in attributes where X509_NAME_add_entry_by_txt(directory, oid, Int32(MBSTRING_UTF8), value, -1, -1, 0) != 1 {
                X509_NAME_free(directory)
                throw CryptoError.fromOpenSSL(.invalidParameter, "cannot write the name attribute \(oid)")
            }
            guard let name = GENERAL_NAME_new() else {
                X509_NAME_free(directory)
                throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a general name")
            }
            GENERAL_NAME_set0_value(name, GEN_DIRNAME, UnsafeMutableRawPointer(directory))
            guard let names = OPENSSL_sk_new_null() else {
                GENERAL_NAME_free(name)
                throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a stack")
            }
            defer { OPENSSL_sk_pop_free(names) { GENERAL_NAME_free($0?.assumingMemoryBound(to: GENERAL_NAME.self)) } }
            _ = OPENSSL_sk_push(names, UnsafeRawPointer(name))
            guard X509_add1_ext_i2d(certificate, NID_subject_alt_name, UnsafeMutableRawPointer(names), 1, UInt(X509V3_ADD_APPEND)) == 1 else {
                throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot add the subjectAltName")
            }
        }
    }

    /// The certificate's DER encoding.
    var derEncoded: Data {
        get throws {
            var out: UnsafeMutablePointer<UInt8>?
            let count = i2d_X509(pointer, &out)
            guard count > 0, let out else { throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot encode the certificate") }
            defer { CRYPTO_free(out, #fileID, #line) }
            return Data(bytes: out, count: Int(count))
        }
    }
}
