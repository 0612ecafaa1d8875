#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The host's TPM 2.0, reached through OpenSSL's `tpm2` provider (Debian `tpm2-openssl`)
/// in a library context of its own (docs/SECURITY.md, "Keys in the TPM"), and for
/// attestation through tpm2-tss's ESAPI, which has the TPM to itself meanwhile: the
/// provider disconnects and is loaded again on its next use (docs/ARCHITECTURE.md,
/// "TPM attestation").
///
/// Keys made with ``TPMSigningKey/generate(in:)`` never leave the TPM: what Latchkey keeps
/// is the TPM-wrapped blob, which only this TPM (with the same storage seed) can load.
///
/// The TPM is the one `TPM2OPENSSL_TCTI` names (the provider's own setting, read from the
/// environment when ``system()`` first connects): `device:/dev/tpmrm0` (the kernel's
/// resource manager, the usual choice), `device:/dev/tpm0`, or
/// `swtpm:host=127.0.0.1,port=2321` for a software TPM. Unset, the TSS's loader searches,
/// `/dev/tpmrm0` first. Calls into one TPM are serialised, across every `TPM` value that
/// names it (``TPMConnection``): it takes one command at a time.
public final class TPM: Sendable {
    /// The process's connection to this location: OpenSSL's provider, made on first use and
    /// dropped while ESAPI has the TPM (``withESAPI(_:)``), and the lock for every call.
    private let connection: TPMConnection
    /// Where this TPM was reached, for messages: ``configuredLocation`` when it connected.
    public let location: String

    /// False for a TPM reached through ESAPI only (``init(attestationOnlyAt:)``).
    private let usesProvider: Bool

    /// Connects OpenSSL's provider now (unless this process is connected already), so
    /// that a missing or busy TPM fails here.
    init(location: String) throws {
        connection = TPMConnection.to(location)
        try connection.provider.withLock { current in
            if current == nil { current = try OpenSSLTPMContext(location: location) }
        }
        self.location = location
        usesProvider = true
    }

    /// A TPM at `location` for the ESAPI commands only (attestation: ``createAttestationKey()``,
    /// ``activateCredential(_:challenge:)``, ``endorsementCertificate()``): OpenSSL's
    /// provider finds its TPM through the environment alone, so a second TPM in one process
    /// cannot make or use keys through it. For tests that need two TPMs at once.
    init(attestationOnlyAt location: String) {
        connection = TPMConnection.to(location)
        self.location = location
        usesProvider = false
    }

    /// The name of the environment variable that says where the TPM is.
    public static let locationVariable = "TPM2OPENSSL_TCTI"

    /// `$TPM2OPENSSL_TCTI`, or `device:/dev/tpmrm0` (the device the TSS tries first) when
    /// it is unset.
    public static var configuredLocation: String {
        let value = ProcessInfo.processInfo.environment[locationVariable] ?? ""
        return value.isEmpty ? "device:/dev/tpmrm0" : value
    }

    private static let shared = Mutex<TPM?>(nil)

    /// The TPM of this host, connected on first use and kept. Throws
    /// ``CryptoError/Code/tpmUnavailable`` (naming the device and `TPM2OPENSSL_TCTI`) when
    /// none answers, the TPM is busy, or the provider is not installed; a later call tries
    /// again.
    public static func system() throws -> TPM {
        try shared.withLock { current in
            if let current { return current }
            let tpm = try TPM(location: configuredLocation)
            current = tpm
            return tpm
        }
    }

    /// Runs a TPM operation through OpenSSL's provider (connecting it again if ESAPI had
    /// the TPM meanwhile); when the TPM has stopped answering, the provider's connection
    /// and the shared `TPM` are dropped so that the next use connects afresh (a restarted
    /// resource manager or swtpm answers again without restarting the program).
    func run<T: Sendable>(_ body: (OpenSSLTPMContext) throws -> T) throws -> T {
        guard usesProvider else {
            throw CryptoError.tpmUnavailable(reason: "the TPM at \(location) is reached for attestation commands only")
        }
        return try reportingUnavailable {
            try connection.provider.withLock { current in
                let context = try current ?? OpenSSLTPMContext(location: location)
                current = context
                do {
                    return try body(context)
                } catch let error as CryptoError where error.code == .tpmUnavailable {
                    current = nil
                    throw error
                }
            }
        }
    }

    /// Runs TPM commands through tpm2-tss's ESAPI (``ESAPIContext``): attestation, which
    /// tpm2-openssl does not offer. OpenSSL's provider disconnects first and reconnects
    /// on its next use: swtpm serves one connection at a time, and a TPM without a
    /// resource manager has room for only a few objects of both.
    func withESAPI<T: Sendable>(_ body: (ESAPIContext) throws -> T) throws -> T {
        try reportingUnavailable {
            try connection.provider.withLock { current in
                current = nil
                return try body(try ESAPIContext(location: location))
            }
        }
    }

    private func reportingUnavailable<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as CryptoError where error.code == .tpmUnavailable {
            Self.shared.withLock { current in
                if current === self { current = nil }
            }
            throw CryptoError.tpmUnavailable(reason: error.reason + " (TPM at \(location), from \(Self.locationVariable))",
                openSSLErrors: error.openSSLErrors, file: error.file, line: error.line
            )
        }
    }

    /// A P-256 key pair generated in the TPM, usable for ECDSA and ECDH: its public key and
    /// its wrapped blob.
    func generateP256() throws -> (publicKey: VerifyingKey, wrappedKey: Data) {
        let (point, blob) = try run { try $0.generateP256() }
        return (try VerifyingKey(p256X: point.dropFirst().prefix(32), y: point.suffix(32)), blob)
    }

    /// The ECDH shared secret of the wrapped key `blob` with `peer`, computed in the TPM.
    func sharedSecret(wrappedKey blob: Data, peer: VerifyingKey) throws -> Data {
        try run { context in try context.withKey(blob) { try context.sharedSecret($0, peer: peer) } }
    }
}
