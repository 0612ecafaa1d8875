import ArgumentParser
import Foundation
import Hummingbird
import LatchkeyCommandLine
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyLogging
import Logging

/// `latchkey serve`'s work: the options (LatchkeyCommandLine) made into a
/// ``ProviderConfiguration``, and the provider run until SIGINT or SIGTERM.
extension LatchkeyCommand.Serve {
    /// The certificates of a PEM file named by `option`.
    static func certificates(_ path: String, option: String) throws -> [X509Certificate] {
        let contents: Data
        do {
            contents = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ValidationError("\(option) \(path) cannot be read: \(error.localizedDescription)")
        }
        do {
            return try X509Certificate.certificates(pem: contents)
        } catch {
            throw ValidationError("\(option) \(path) is not a PEM file of certificates: \(error)")
        }
    }

    /// Runs the provider until SIGINT or SIGTERM (`latchkey-provider`).
    func runProvider() async throws {
        switch logFormat {
        case .json: LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
        case .text: LoggingSystem.bootstrap { TextLogHandler(label: $0) }
        }
        let (token, tokenOrigin, tokenDirectory) = try AdminToken.forServe(
            file: adminTokenFile, dataDirectory: store.database == nil ? store.dataDir.map { URL(fileURLWithPath: $0) } : nil
        )
        // A token made for this run alone goes with it, whether the provider stops on a
        // signal or never starts (a refused option below).
        defer { if let tokenDirectory { try? FileManager.default.removeItem(at: tokenDirectory) } }
        var configuration = ProviderConfiguration(host: host, port: port, issuer: try issuer.map(Self.parseIssuer), adminToken: token)
        try store.configure(&configuration)
        guard rateLimitPerMinute > 0 else { throw ValidationError("--rate-limit-per-minute must be positive") }
        configuration.rateLimitPerMinute = rateLimitPerMinute
        configuration.auditRetention = try DurationOption.seconds(auditRetention)
        guard configuration.auditRetention >= 3600 else { throw ValidationError("--audit-retention must be at least 1h") }
        configuration.auditLog = !noAudit
        if auditSyslog {
            guard !noAudit else { throw ValidationError("--audit-syslog copies the audit log: not with --no-audit") }
            configuration.auditJournalSocket = "/run/systemd/journal/socket"
        }
        configuration.trustedProxies = try trustedProxies.map { text in
            guard let network = IPNetwork(text) else { throw ValidationError("--trusted-proxy \(text) is not an address or CIDR network") }
            return network
        }
        configuration.forwardedHeader = forwardedHeader == .forwarded ? .forwarded : .xForwardedFor
        configuration.adminListener = try adminListen.map(Self.parseListener)
        configuration.mail = try mailSettings()
        configuration.requireEmailCodeForBinding = requireEmailCode
        configuration.requiresDPoP = requireDpop
        configuration.requiresDPoPNonce = requireDpopNonce
        configuration.clientMetadataDocuments.enabled = clientMetadataDocuments == .allow
        for host in clientMetadataHosts where host.isEmpty || host.utf8.count > 253 || host != host.lowercased() || host.contains("/") || host.contains(":") && !host.hasPrefix("[") {
            throw ValidationError("--client-metadata-host \(host): a lower-case host name, without scheme, port or path")
        }
        configuration.clientMetadataDocuments.allowedHosts = clientMetadataHosts
        configuration.clientMetadataDocuments.localNetwork = clientMetadataLocalNetwork
        switch clientRegistration {
        case .off, .open:
            guard clientRegistrationTokenFile == nil else { throw ValidationError("--client-registration-token-file goes with --client-registration token") }
            configuration.clientRegistration.mode = clientRegistration == .open ? .open : .off
        case .token:
            guard let file = clientRegistrationTokenFile else { throw ValidationError("--client-registration token needs --client-registration-token-file") }
            let token = String(decoding: try SecretFile.read(file), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard token.utf8.count >= 32 else { throw ValidationError("the initial access token must be at least 32 characters") }
            configuration.clientRegistration.mode = .initialAccessToken(sha256: try DigestAlgorithm.sha256.hash(Data(token.utf8)))
        }
        if clientMetadataDocuments == .deny, !clientMetadataHosts.isEmpty || clientMetadataLocalNetwork {
            throw ValidationError("--client-metadata-host and --client-metadata-local-network need --client-metadata-documents allow")
        }
        configuration.selfRegistration = allowSignup
        configuration.recovery = !disableRecovery
        for name in reservedUsernames where name.isEmpty || name.utf8.count > 256 || name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw ValidationError("--reserve-username: 1 to 256 bytes without control characters")
        }
        configuration.reservedUsernames = ReservedUsernames(adding: reservedUsernames)
        if let posixUidRange {
            do {
                configuration.posixIDRange = try POSIXIDRange(parsing: posixUidRange)
            } catch {
                throw ValidationError("--posix-uid-range: \(error.reason)")
            }
        }
        let name = displayName.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty, name.count <= 64, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ValidationError("--display-name must be 1 to 64 characters, none of them control characters")
        }
        configuration.displayName = name
        configuration.attestationAuthority = attestationCa
        configuration.sshAuthority = sshCa
        configuration.sshCertificateLifetime = try DurationOption.seconds(sshCertificateLifetime)
        guard (60...ProviderConfiguration.maximumSSHCertificateLifetime).contains(configuration.sshCertificateLifetime) else {
            throw ValidationError("--ssh-certificate-lifetime must be from 1m to 24h")
        }
        // sshd refuses every certificate whose options it cannot read: check them here.
        if let sshForceCommand, sshForceCommand.isEmpty || sshForceCommand.utf8.count > 1024 || sshForceCommand.contains(where: \.isNewline) {
            throw ValidationError("--ssh-force-command: one line of at most 1024 bytes")
        }
        if let sshSourceAddress {
            let networks = sshSourceAddress.split(separator: ",", omittingEmptySubsequences: false)
            guard !networks.isEmpty, networks.count <= 64, networks.allSatisfy({ IPNetwork(String($0)) != nil }) else {
                throw ValidationError("--ssh-source-address: a comma-separated list of addresses or CIDR networks (10.0.0.0/8,fd00::/8)")
            }
        }
        configuration.sshForceCommand = sshForceCommand
        configuration.sshSourceAddress = sshSourceAddress
        if let ekRoots {
            guard attestationCa else { throw ValidationError("--ek-roots is for --attestation-ca") }
            configuration.endorsementRoots = try Self.certificates(ekRoots, option: "--ek-roots")
        }
        if let attestationRoots {
            configuration.attestationRoots = try Self.certificates(attestationRoots, option: "--attestation-roots")
        }
        if let requireAttestation {
            guard let requirement = AttestationRequirement(rawValue: requireAttestation) else {
                throw ValidationError("--require-attestation takes tpm")
            }
            guard attestationCa || !configuration.attestationRoots.isEmpty else {
                throw ValidationError("--require-attestation tpm needs roots to check attestation against: --attestation-ca, or --attestation-roots FILE.pem")
            }
            configuration.requiredAttestation = requirement
        }
        if let sshRequireAttestation {
            guard let requirement = AttestationRequirement(rawValue: sshRequireAttestation) else {
                throw ValidationError("--ssh-require-attestation takes tpm")
            }
            guard sshCa else { throw ValidationError("--ssh-require-attestation is for --ssh-ca") }
            guard attestationCa || !configuration.attestationRoots.isEmpty else {
                throw ValidationError("--ssh-require-attestation tpm needs roots to check attestation against: --attestation-ca, or --attestation-roots FILE.pem")
            }
            configuration.sshRequiredAttestation = requirement
        }
        let ready = ServeReadiness(json: json, adminToken: token, origin: tokenOrigin, expectsAdminListener: configuration.adminListener != nil)
        let app = try await buildApplication(
            configuration: configuration,
            onServerRunning: { issuer in await ready.listening(issuer: issuer) },
            onAdminServerRunning: { admin in await ready.listening(admin: admin) }
        )
        // Stops cleanly on SIGINT and SIGTERM.
        try await app.runService()
    }

    /// The mail transport asked for; secrets from a file, the environment or a
    /// credential, never argv.
    func mailSettings() throws -> ProviderConfiguration.Mail? {
        let choice = mail ?? (smtpURL == nil ? .outbox : .smtp)
        if choice == .outbox {
            guard smtpURL == nil else { throw ValidationError("--smtp-url needs --mail smtp (or no --mail)") }
            return nil
        }
        guard let mailFrom else { throw ValidationError("--mail \(choice.rawValue) needs --mail-from ADDRESS") }
        switch choice {
        case .smtp:
            guard let smtpURL else { throw ValidationError("--mail smtp needs --smtp-url") }
            let password = try SecretFile.password(file: smtpPasswordFile, credential: "latchkey-smtp-password", environment: "LATCHKEY_SMTP_PASSWORD")
            return .init(transport: .smtp(url: smtpURL, password: password, trustedCertificatesFile: smtpCAFile), from: mailFrom)
        default:
            return .init(transport: .sendmail(path: sendmailPath), from: mailFrom)
        }
    }

    /// An issuer is https, or plain http on a loopback host only (RFC 8252 §8.3): codes,
    /// tokens and assertions would otherwise cross the network in clear, and clients
    /// refuse such an issuer anyway.
    static func parseIssuer(_ text: String) throws -> URL {
        let url = try parseURL(text)
        guard url.scheme?.lowercased() == "https" || (url.scheme?.lowercased() == "http" && LoopbackHost.contains(url.host ?? "")) else {
            throw ValidationError("--issuer \(text) must be https (plain http only on a loopback host)")
        }
        return url
    }

    /// `host:port` or `[v6]:port`.
    static func parseListener(_ text: String) throws -> ProviderConfiguration.Listener {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw ValidationError("--admin-listen \(text) is not host:port")
        }
        let host = String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        guard !host.isEmpty else { throw ValidationError("--admin-listen \(text) names no host") }
        return ProviderConfiguration.Listener(host: host, port: port)
    }

    static func parseURL(_ text: String) throws -> URL {
        guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
            throw ValidationError("\(text) is not an absolute URL")
        }
        return url
    }
}
