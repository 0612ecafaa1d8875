import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey

/// `--attest [--attestation-ca URL]`, for the commands that create a credential (`bind`,
/// `import`, `signup`, `recover`; docs/SECURITY.md, "Proving keys live in the TPM") and
/// for `ssh login`, whose every request then carries the TPM's certification of the SSH key.
struct AttestationOptions: ParsableArguments {
    @Flag(help: "Prove the new key lives in this host's TPM (WebAuthn tpm attestation; needs --key-protection tpm and a TPM with an endorsement key certificate).")
    var attest = false

    @Option(name: .customLong("attestation-ca"), help: ArgumentHelp(
        "The Latchkey provider whose attestation CA certifies this TPM's attestation key (default: the provider the credential is bound at). Implies --attest.",
        valueName: "url"
    ))
    var attestationCA: String?

    /// The facade's setting, and the host the CA adds to the hosts this run may contact.
    func setting() throws -> (attestation: CredentialAttestation, hosts: [String]) {
        if let attestationCA {
            guard let url = URL(string: attestationCA), url.scheme != nil, let host = url.host, !host.isEmpty else {
                throw ValidationError("--attestation-ca \(attestationCA) is not an absolute URL")
            }
            return (.tpm(authority: url), [host])
        }
        return (attest ? .tpm() : .none, [])
    }
}
