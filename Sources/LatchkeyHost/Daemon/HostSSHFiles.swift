#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import Logging

/// The two files `sshd` needs from the provider (docs/PROTOCOL.md section 12), kept by the
/// daemon at each sync so that a host needs no timer of its own: the CA's public keys
/// (`TrustedUserCAKeys`, from `GET /v1/ssh/ca`) and the key revocation list
/// (`RevokedKeys`, from `GET /v1/ssh/krl`). A certificate whose credential is revoked at
/// the provider then fails on this host at the next sync.
///
/// What the provider answers is checked before it replaces anything: the CA file is lines
/// of OpenSSH public keys, the KRL starts with OpenSSH's magic (`SSHKRL\n\0`,
/// PROTOCOL.krl), each at most 1 MiB (the transport's cap). A file is replaced whole, and
/// only when its bytes change; a provider without an SSH CA (`404`) leaves both alone.
struct HostSSHFiles: Sendable {
    let issuer: URL
    let caFile: String?
    let krlFile: String?
    let logger: Logger

    static let krlMagic = Data("SSHKRL\n\0".utf8)

    func sync(transport: some HTTPTransport) async {
        if let caFile {
            await keep(caFile, from: ProtocolPath.sshAuthority, what: "SSH CA keys", transport: transport) { body in
                let lines = String(decoding: body, as: UTF8.self).split(separator: "\n").filter { !$0.isEmpty }
                return !lines.isEmpty && lines.allSatisfy { (try? SSHPublicKey(openSSHLine: String($0))) != nil }
            }
        }
        if let krlFile {
            await keep(krlFile, from: ProtocolPath.sshRevocations, what: "SSH KRL", transport: transport) { $0.starts(with: Self.krlMagic) }
        }
    }

    private func keep(_ path: String, from endpoint: String, what: String, transport: some HTTPTransport, isValid: (Data) -> Bool) async {
        do {
            let response = try await transport.send(TransportRequest(method: HTTPMethod.get, url: issuer.appendingPathComponent(endpoint)))
            if response.status == 404 { return }
            guard response.status == 200 else { throw HostError(.provider, "HTTP \(response.status)") }
            guard isValid(response.body) else { throw HostError(.provider, "the answer is not an OpenSSH \(what) file") }
            let current = try? HostFiles.read(path, maximumSize: 1 << 20)
            guard current != response.body else { return }
            try HostFiles.replace(URL(fileURLWithPath: path), with: response.body, mode: 0o644)
            logger.info("\(what) updated", metadata: ["file": .string(path), "bytes": .stringConvertible(response.body.count)])
        } catch {
            let reason = (error as? HostError)?.reason ?? String(describing: error)
            logger.warning("cannot update the \(what); the file is left as it was", metadata: ["file": .string(path), "error": .string(reason)])
        }
    }
}
