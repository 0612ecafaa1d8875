#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

/// The metadata of an SSH key's vault record (`latchkey ssh login`; docs/PROTOCOL.md
/// section 12): the provider whose CA certifies it and the certificate it issued last,
/// kept beside the key, so the agent can list both (`ssh-add -L`). One record per issuer
/// for the person, and one per issuer and client for a client's own key.
struct SSHKeyRecord: VaultRecordMetadata, Sendable {
    /// Marks SSH key records among the vault's records.
    static let kind = "ssh-key"

    var kind: String
    var issuer: String
    /// The client whose own key this is (certified with its client credentials tokens);
    /// nil for the person's key.
    var clientID: String?
    /// The certificate, as a `-cert.pub` line; nil before the first one.
    var certificate: String?

    init(issuer: String, clientID: String? = nil, certificate: String? = nil) {
        kind = Self.kind
        self.issuer = issuer
        self.clientID = clientID
        self.certificate = certificate
    }

    /// The certificate when it parses and `date` is inside its window.
    func liveCertificate(at date: Date) -> SSHCertificate? {
        guard let certificate, let parsed = try? SSHCertificate(openSSHLine: certificate), parsed.isValid(at: date) else { return nil }
        return parsed
    }
}
