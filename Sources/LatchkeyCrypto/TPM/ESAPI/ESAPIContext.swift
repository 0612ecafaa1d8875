import CLatchkeyTSS
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One connection to the TPM through tpm2-tss's ESAPI, for the commands tpm2-openssl does
/// not expose: the attestation key, TPM2_Certify, the endorsement key and its
/// certificate, TPM2_ActivateCredential (docs/ARCHITECTURE.md, "TPM attestation"). Owns
/// the ESAPI context and its TCTI, closed in `deinit`.
///
/// Opened for one operation and closed after it. Only ``TPM`` makes one, with its
/// OpenSSL provider's connection closed meanwhile: swtpm answers one client at a time,
/// and a TPM without a resource manager would see both clients' objects.
final class ESAPIContext {
    private let pointer: OpaquePointer
    let location: String

    init(location: String) throws {
        var opened: OpaquePointer?
        let code = CLatchkey_tpm_open(location, &opened)
        guard code == 0, let opened else {
            throw CryptoError.tpmUnavailable(reason: "no TPM answers at \(location) through tpm2-tss (\(Self.describe(code)))")
        }
        pointer = opened
        self.location = location
    }

    deinit {
        CLatchkey_tpm_close(pointer)
    }

    static func describe(_ code: UInt32) -> String {
        "0x\(HexadecimalText.padded(code, digits: 8)): " + (CLatchkey_tpm_error(code).map { String(cString: $0) } ?? "unknown")
    }

    /// Sorts a response code: the transport (TCTI layer) failing means the TPM stopped
    /// answering; an integrity failure while loading a key blob means a blob of another
    /// TPM; any other is the TPM refusing this command (an integrity failure in
    /// TPM2_ActivateCredential means a credential made for another key or TPM).
    private func check(_ code: UInt32, _ doing: String) throws {
        guard code != 0 else { return }
        let layer = code >> 16
        let said = "\(doing): \(Self.describe(code))"
        if layer == 0x0A {
            throw CryptoError.tpmUnavailable(reason: "the TPM at \(location) stopped answering while \(said)")
        }
        // TPM_RC_INTEGRITY (format one, 0x09F, with a parameter or handle number in 0xF00).
        if layer == 0, code & 0x80 != 0, code & 0xBF == 0x9F, CLatchkey_tpm_failed_loading(pointer) != 0 {
            throw CryptoError.tpmKeyUnusable(reason: "this TPM cannot load the key: it was made by another TPM, or before this TPM was cleared (\(said))")
        }
        throw CryptoError.tpmCommandRefused(reason: "the TPM refused \(said)")
    }

    /// Runs `call` with an output buffer of `capacity` bytes; returns what it wrote.
    private func output(capacity: Int, _ call: (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<Int>) -> UInt32, _ doing: String) throws -> Data {
        var buffer = [UInt8](repeating: 0, count: capacity)
        var length = capacity
        let code = buffer.withUnsafeMutableBufferPointer { call($0.baseAddress!, &length) }
        defer { buffer.withUnsafeMutableBytes { secureZero($0) } }
        try check(code, doing)
        return Data(buffer.prefix(length))
    }

    /// A TPM property (TPM2_GetCapability, TPM_CAP_TPM_PROPERTIES).
    func property(_ property: UInt32) throws -> UInt32 {
        var value: UInt32 = 0
        try check(CLatchkey_tpm_property(pointer, property, &value), "reading property 0x\(String(property, radix: 16))")
        return value
    }

    /// A new attestation key under the storage primary: its marshalled areas.
    func createAttestationKey() throws -> TSS2KeyBlob {
        var publicArea = [UInt8](repeating: 0, count: 1024)
        var privateArea = [UInt8](repeating: 0, count: 1024)
        var publicLength = publicArea.count
        var privateLength = privateArea.count
        try check(CLatchkey_tpm_create_attestation_key(pointer, &publicArea, &publicLength, &privateArea, &privateLength), "creating an attestation key")
        return TSS2KeyBlob(publicArea: Data(publicArea.prefix(publicLength)), privateArea: Data(privateArea.prefix(privateLength)))
    }

    /// TPM2_Certify of `key` by `attestationKey`: the TPMS_ATTEST and the signature's r, s.
    func certify(_ key: TSS2KeyBlob, by attestationKey: TSS2KeyBlob, qualifyingData: Data) throws -> (attest: Data, r: Data, s: Data) {
        var attest = [UInt8](repeating: 0, count: 2048)
        var r = [UInt8](repeating: 0, count: 66)
        var s = [UInt8](repeating: 0, count: 66)
        var attestLength = attest.count, rLength = r.count, sLength = s.count
        let code = key.publicArea.withUnsafeBytes { keyPublic in
            key.privateArea.withUnsafeBytes { keyPrivate in
                attestationKey.publicArea.withUnsafeBytes { akPublic in
                    attestationKey.privateArea.withUnsafeBytes { akPrivate in
                        qualifyingData.withUnsafeBytes { qualifying in
                            CLatchkey_tpm_certify(
                                pointer,
                                keyPublic.bindMemory(to: UInt8.self).baseAddress, keyPublic.count,
                                keyPrivate.bindMemory(to: UInt8.self).baseAddress, keyPrivate.count,
                                akPublic.bindMemory(to: UInt8.self).baseAddress, akPublic.count,
                                akPrivate.bindMemory(to: UInt8.self).baseAddress, akPrivate.count,
                                qualifying.bindMemory(to: UInt8.self).baseAddress, qualifying.count,
                                &attest, &attestLength, &r, &rLength, &s, &sLength
                            )
                        }
                    }
                }
            }
        }
        try check(code, "certifying a key with the attestation key (TPM2_Certify)")
        return (Data(attest.prefix(attestLength)), Data(r.prefix(rLength)), Data(s.prefix(sLength)))
    }

    /// The contents of an NV index (at most `maximumSize` bytes).
    func readNV(_ index: UInt32, maximumSize: Int) throws -> Data {
        try output(capacity: maximumSize, { CLatchkey_tpm_nv_read(pointer, index, $0, $1) }, "reading NV index 0x\(HexadecimalText.padded(index, digits: 8))")
    }

    /// The RSA 2048 endorsement key's modulus (template L-1).
    func endorsementKeyModulus() throws -> Data {
        try output(capacity: 512, { CLatchkey_tpm_endorsement_key_rsa(pointer, $0, $1) }, "making the RSA endorsement key (template L-1)")
    }

    /// TPM2_ActivateCredential with the RSA EK: the credential, if the blob was made for
    /// this TPM's EK and `attestationKey`'s name.
    func activateCredential(_ attestationKey: TSS2KeyBlob, credentialBlob: Data, secret: Data) throws -> Data {
        try output(capacity: 128, { recovered, length in
            attestationKey.publicArea.withUnsafeBytes { akPublic in
                attestationKey.privateArea.withUnsafeBytes { akPrivate in
                    credentialBlob.withUnsafeBytes { credential in
                        secret.withUnsafeBytes { encrypted in
                            CLatchkey_tpm_activate_credential(
                                pointer,
                                akPublic.bindMemory(to: UInt8.self).baseAddress, akPublic.count,
                                akPrivate.bindMemory(to: UInt8.self).baseAddress, akPrivate.count,
                                credential.bindMemory(to: UInt8.self).baseAddress, credential.count,
                                encrypted.bindMemory(to: UInt8.self).baseAddress, encrypted.count,
                                recovered, length
                            )
                        }
                    }
                }
            }
        }, "activating a credential (TPM2_ActivateCredential)")
    }
}
