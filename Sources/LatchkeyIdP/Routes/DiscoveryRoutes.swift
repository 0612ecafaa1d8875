import Hummingbird
import LatchkeyProtocol

/// OIDC discovery (OpenID Connect Discovery 1.0 §4), the same metadata where RFC 8414 §3
/// puts it, and the JWKS (RFC 7517 §5).
enum DiscoveryRoutes {
    static func add(to router: RouterGroup<ProviderRequestContext>, provider: Provider) {
        router.get(RouterPath(ProtocolPath.discovery)) { _, _ in try HTTPSupport.json(data: provider.tokens.discovery()) }
        router.get(RouterPath(ProtocolPath.authorizationServerMetadata)) { _, _ in try HTTPSupport.json(data: provider.tokens.discovery()) }
        router.get(RouterPath(ProtocolPath.jwks)) { _, _ in HTTPSupport.json(data: try await provider.tokens.jwks()) }
    }
}
