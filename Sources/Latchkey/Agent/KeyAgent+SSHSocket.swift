#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Glibc
import LatchkeyCrypto
import LatchkeyProtocol
import Logging
import Synchronization

/// The agent as an ssh-agent (RFC 9987; docs/PROTOCOL.md section 12): on a second socket,
/// for `SSH_AUTH_SOCK`, it lists the vault's SSH keys, each with its live certificate, and
/// signs with them; the private keys stay in the vault or the TPM. Keys cannot be added or
/// removed through it. The same rules as the agent's own socket hold: only this user's
/// processes are answered (`SO_PEERCRED`), a locked agent lists nothing and signs nothing,
/// and `--confirm` asks before each signature.
extension KeyAgent {
    /// `$XDG_RUNTIME_DIR/latchkey/ssh-agent.sock`, else `/tmp/latchkey-<uid>/ssh-agent.sock`.
    public static func defaultSSHSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        PathText.parent(of: defaultSocketPath(environment: environment)) + "/ssh-agent.sock"
    }

    /// Listens for ssh-agent clients at `path` (default ``defaultSSHSocketPath(environment:)``);
    /// ``serve()`` then answers both sockets. Returns the path for `SSH_AUTH_SOCK`.
    public func listenSSH(at path: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        let chosen = path ?? Self.defaultSSHSocketPath(environment: environment)
        do {
            try Self.prepareDirectory(of: chosen, isDefault: path == nil)
            let listener = try UnixSocketListener.bind(path: chosen)
            sshListening.withLock { $0 = listener }
            return listener.path
        } catch let error as UnixSocketError {
            throw LatchkeyError.agent(reason: error.reason, underlying: error)
        }
    }

    /// Answers ssh-agent requests on one connection until the peer closes it or sends a
    /// malformed message (answered with `SSH_AGENT_FAILURE`, then closed).
    func converseSSH(with connection: UnixSocket, peer: PeerCredentials) {
        var reader = SSHAgentFrameReader()
        while true {
            let body: Data
            do {
                guard let frame = try connection.readFrame(&reader, deadline: nil) else { return }
                body = frame
            } catch {
                configuration.logger.info("ssh-agent closed a connection", metadata: [LogField.cause.rawValue: .string(String(describing: type(of: error))), "pid": .stringConvertible(peer.pid)])
                return
            }
            let request: SSHAgentMessage.Request
            do {
                request = try SSHAgentMessage.parse(body)
            } catch {
                _ = try? connection.write(SSHAgentMessage.frame(SSHAgentMessage.failure), deadline: .now + .seconds(5))
                return
            }
            do {
                try connection.write(sshAnswer(request, peer: peer), deadline: .now + .seconds(30))
            } catch {
                return
            }
        }
    }

    private func sshAnswer(_ request: SSHAgentMessage.Request, peer: PeerCredentials) -> Data {
        let failure = SSHAgentMessage.frame(SSHAgentMessage.failure)
        switch request {
        case .requestIdentities:
            guard let vault = try? openVault() else { return SSHAgentMessage.identities([]) }
            return SSHAgentMessage.identities(sshIdentities(in: vault).flatMap { identity in
                (identity.certificate.map { [(blob: $0.wireBlob, comment: "latchkey certificate \(identity.comment)")] } ?? [])
                    + [(blob: identity.key.wireBlob, comment: "latchkey \(identity.comment)")]
            })
        case .sign(let blob, let data, let flags):
            guard flags & ~SSHAgentMessage.knownSignFlags == 0, let vault = try? openVault(),
                  let identity = sshIdentities(in: vault).first(where: { $0.key.wireBlob == blob || $0.certificate?.wireBlob == blob })
            else { return failure }
            do {
                try confirm(signatureBy: identity.handle, in: vault, peer: peer)
                let signature = try SSHSignature(algorithm: identity.key.algorithm, signature: try vault.sign(data, with: identity.handle))
                return SSHAgentMessage.frame(SSHAgentMessage.signResponse) { $0.string(signature.wireBlob) }
            } catch {
                configuration.logger.notice("ssh-agent signature refused", metadata: ["pid": .stringConvertible(peer.pid), LogField.cause.rawValue: .string(String(describing: type(of: error)))])
                return failure
            }
        case .lock:
            lock("ssh-add -x")
            return SSHAgentMessage.frame(SSHAgentMessage.success)
        case .unlock(let passphrase):
            // `ssh-add -X` always sends what was typed; a vault that reopens by itself
            // needs none.
            let typed = configuration.reopenSource == nil ? String(data: passphrase, encoding: .utf8) ?? "" : nil
            do {
                try unlock(passphrase: typed)
                return SSHAgentMessage.frame(SSHAgentMessage.success)
            } catch {
                return failure
            }
        case .unsupported:
            return failure
        }
    }

    /// The vault's SSH keys: each key, its live certificate, and what the listing says of it.
    private func sshIdentities(in vault: KeyVault) -> [(handle: KeyHandle, key: SSHPublicKey, certificate: SSHCertificate?, comment: String)] {
        guard let scan = try? vault.scan() else { return [] }
        let now = Date()
        return scan.entries.compactMap { entry in
            guard let record = SSHKeyRecord.decode(entry.metadata), let key = try? SSHPublicKey(entry.publicKey) else { return nil }
            let certificate = record.liveCertificate(at: now).flatMap { $0.publicKey == key ? $0 : nil }
            return (entry.handle, key, certificate, URL(string: record.issuer)?.host ?? "ssh key")
        }
    }
}
