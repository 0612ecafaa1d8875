import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyProtocol

/// The attestation CA (docs/PROTOCOL.md section 10): its root, and AIK certificates after
/// credential activation. Behind the public rate limit; 404 when the provider runs no CA.
enum AttestationRoutes {
    static func add(to router: RouterGroup<ProviderRequestContext>, provider: Provider) {
        router.get(RouterPath(ProtocolPath.attestationRoots)) { _, _ in
            let authority = try await provider.context.attestationAuthority()
            return Response(
                status: .ok,
                headers: [.contentType: "application/pem-certificate-chain"],
                body: .init(byteBuffer: ByteBuffer(string: authority.root.pemEncoded))
            )
        }
        router.post(RouterPath(ProtocolPath.attestationActivations)) { request, _ in
            let asked = try await HTTPSupport.decode(
                AttestationExchange.ActivationRequest.self, from: request, expected: "a JSON object with endorsement_certificate, attestation_key and tpm"
            )
            return HTTPSupport.json(try await provider.attestation.begin(asked), status: .created)
        }
        router.post(RouterPath(ProtocolPath.attestationCertificates)) { request, _ in
            let asked = try await HTTPSupport.decode(
                AttestationExchange.CertificateRequest.self, from: request, expected: "a JSON object with activation and credential"
            )
            return HTTPSupport.json(try await provider.attestation.finish(asked), status: .created)
        }
    }
}
