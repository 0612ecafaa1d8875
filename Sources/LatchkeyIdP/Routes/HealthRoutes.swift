import Hummingbird

/// Probes for a supervisor or load balancer (docs/guides/provider.md, "Several instances on PostgreSQL"):
/// `GET /healthz` (and its older name
/// `/health`) says the process serves HTTP, and nothing else, so a restart loop is not
/// triggered by a database outage; `GET /readyz` says whether this instance can serve
/// sign-ins now, its store migrated and reachable (`503 temporarily_unavailable` while
/// not), so a load balancer sends traffic elsewhere meanwhile.
enum HealthRoutes {
    /// Paths answered before the store is prepared (``ReadinessMiddleware``).
    static let livenessPaths: Set<String> = ["/health", "/healthz"]

    static func add(to router: Router<ProviderRequestContext>, provider: Provider) {
        // Liveness; `/health` is also the benchmark's bare round trip.
        router.get("health") { _, _ in HTTPSupport.json(["status": "ok"]) }
        router.get("healthz") { _, _ in HTTPSupport.json(["status": "ok"]) }
        router.get("readyz") { _, _ in
            try await provider.context.database.ping()
            return HTTPSupport.json(["status": "ready"])
        }
    }
}
