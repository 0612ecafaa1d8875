import Foundation
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyWebAuthn
import Synchronization

/// The provider as a relying party that checks attestation (docs/SECURITY.md, "Proving
/// keys live in the TPM"): every registration path (bind and recovery links, sign-up,
/// imports, the browser page) verifies through ``verifyRegistration(_:challenge:for:)``.
extension ProviderContext {
    /// The attestation CA, loaded (or made) on first use; 404 when the provider runs none.
    func attestationAuthority() async throws -> AttestationAuthority {
        guard configuration.attestationAuthority else {
            throw ProviderError.notFound("this provider runs no attestation CA (serve --attestation-ca)")
        }
        if let authority = loadedAttestationAuthority.withLock({ $0 }) { return authority }
        let authority = try await AttestationAuthority.load(database: database, sealing: sealing, displayName: configuration.displayName)
        loadedAttestationAuthority.withLock { $0 = authority }
        return authority
    }

    /// The roots a `tpm` statement's AIK certificate may chain to: `--attestation-roots`,
    /// and this provider's own CA root when it runs the CA.
    func attestationRoots() async throws -> [X509Certificate] {
        configuration.attestationRoots + (configuration.attestationAuthority ? [try await attestationAuthority().root] : [])
    }

    /// The attestation `identity`'s registrations must carry: the identity's own demand,
    /// else the provider's policy.
    func requiredAttestation(for identity: Identity?) -> AttestationRequirement? {
        identity?.requiredAttestation ?? configuration.requiredAttestation
    }

    /// WebAuthn §7.1 for a registration of `identity`'s, then the attestation policy: one
    /// without the demanded attestation is refused with `attestation_required`, naming
    /// what is missing.
    func verifyRegistration(_ response: RegistrationResponseJSON, challenge: Data, for identity: Identity?) async throws -> RelyingParty.RegisteredCredential {
        var relyingParty = relyingParty
        relyingParty.attestationRoots = try await attestationRoots()
        let required = requiredAttestation(for: identity)
        let record: RelyingParty.RegisteredCredential
        do {
            record = try relyingParty.verifyRegistration(response, challenge: challenge)
        } catch let error as WebAuthnError {
            // An attestation this provider cannot check (a security key's `packed` chain)
            // is, under the policy, a missing one: say what is wanted.
            if required != nil, error.code == .unsupportedAttestationFormat {
                throw Self.attestationRequired(because: error.reason, underlying: error)
            }
            throw ProviderError.badRequest(.invalidRegistration, error.reason, underlying: error)
        }
        if required == .tpm, record.attestationFormat != AttestationStatementFormat.tpm.rawValue {
            throw Self.attestationRequired(because: "this registration carries \"\(record.attestationFormat)\"")
        }
        return record
    }

    private static func attestationRequired(because reason: String, underlying: (any Error)? = nil) -> ProviderError {
        ProviderError.badRequest(.attestationRequired, """
            this provider requires TPM attestation (WebAuthn "tpm"), and \(reason): \
            register a key made in a TPM with its attestation (latchkey bind --key-protection tpm --attest)
            """, underlying: underlying)
    }
}
