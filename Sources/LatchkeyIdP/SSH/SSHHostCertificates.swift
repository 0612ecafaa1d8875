import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol

/// Host certificates (`latchkey admin ssh-host-certificate`; docs/PROTOCOL.md section 12):
/// the CA signs a host's key for the names clients reach it by, so `ssh` with only an
/// `@cert-authority` line for the CA trusts the host without trusting a key on first use.
/// Only the admin API issues them; each is an audit event with the admin as actor.
struct SSHHostCertificates: Sendable {
    let context: ProviderContext

    static let defaultLifetime = 30 * 86_400
    static let maximumLifetime = 365 * 86_400
    /// The most names one certificate may carry.
    static let maximumHosts = 32

    func issue(_ request: AdminAPI.SSHHostCertificateRequest, now: Date = ProviderClock.now) async throws -> AdminAPI.SSHHostCertificate {
        let authority = try await SSHAuthority(context: context).signingKey().key
        let key = try SSHAuthority.publicKey(request.publicKey, "the host key")
        guard !request.hosts.isEmpty, request.hosts.count <= Self.maximumHosts, request.hosts.allSatisfy(SSHCertificate.isAcceptableHostPrincipal) else {
            throw ProviderError.badRequest(.invalidRequest, "hosts: 1 to \(Self.maximumHosts) names without commas, spaces, control characters or the patterns *, ? and !")
        }
        let lifetime = request.lifetime ?? Self.defaultLifetime
        guard (60...Self.maximumLifetime).contains(lifetime) else {
            throw ProviderError.badRequest(.invalidRequest, "lifetime: 60 to \(Self.maximumLifetime) seconds")
        }
        let serial = UInt64.random(in: 1...UInt64(Int64.max))
        let validAfter = now.addingTimeInterval(-SSHCertificateIssuance.backdating)
        let validBefore = now.addingTimeInterval(TimeInterval(lifetime))
        let certificate = try SSHCertificate.issue(
            for: key, serial: serial, kind: .host, keyID: "latchkey host \(request.hosts[0]) serial=\(serial)", principals: request.hosts,
            validAfter: UInt64(validAfter.timeIntervalSince1970), validBefore: UInt64(validBefore.timeIntervalSince1970), by: authority
        )
        try await context.audit.record(AuditEntry(
            .sshCertificateIssued, actor: .admin, details: AuditEvent.Details(
                serial: String(serial), fingerprint: key.fingerprint, principals: request.hosts, validAfter: AuditEvent.formatTime(validAfter),
                validBefore: AuditEvent.formatTime(validBefore)
            ), now: now
        ), in: context.database)
        context.metrics.sshCertificateIssued()
        return AdminAPI.SSHHostCertificate(
            certificate: certificate.openSSHLine(comment: request.hosts[0]), serial: String(serial), validBefore: AuditEvent.formatTime(validBefore)
        )
    }
}
