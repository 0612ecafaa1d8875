import Foundation
import Hummingbird
import LatchkeyProtocol

/// The SSH CA (docs/PROTOCOL.md section 12): its public keys for `TrustedUserCAKeys`, its
/// key revocation list for `RevokedKeys`, and user certificates for an access token of
/// scope `ssh`. Behind the public rate limit, the two `GET`s included; 404 when the
/// provider runs no SSH CA.
enum SSHRoutes {
    static func add(to router: RouterGroup<ProviderRequestContext>, provider: Provider) {
        let authority = SSHAuthority(context: provider.context)
        router.get(RouterPath(ProtocolPath.sshAuthority)) { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: try await authority.publicKeyLines()))
            )
        }
        router.get(RouterPath(ProtocolPath.sshRevocations)) { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/octet-stream", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(bytes: try await authority.revocationList()))
            )
        }
        router.post(RouterPath(ProtocolPath.sshCertificates)) { request, _ in
            guard let presentation = HTTPSupport.accessToken(request) else { throw ProviderError.bearerRequired }
            let asked = try await HTTPSupport.decode(
                SSHCertificateExchange.Request.self, from: request, expected: "a JSON object with publicKey and proof {time, nonce, signature}"
            )
            return try TokenRoutes.withNonce(HTTPSupport.json(data: try await provider.ssh.issue(asked, presentation: presentation).encodedJSON, status: .created), provider)
        }
    }
}
