import Hummingbird

/// OIDC discovery (OpenID Connect Discovery 1.0 §4) and the JWKS (RFC 7517 §5).
enum DiscoveryRoutes {
    static func add(to router: Router<ProviderRequestContext>, provider: Provider) {
        router.get(".well-known/openid-configuration") { _, _ in try HTTPSupport.json(data: provider.tokens.discovery()) }
        router.get("jwks") { _, _ in HTTPSupport.json(data: try await provider.tokens.jwks()) }
        // Liveness probe; also the benchmark's bare round trip.
        router.get("health") { _, _ in HTTPSupport.json(["status": "ok"]) }
    }
}
