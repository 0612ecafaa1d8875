import Hummingbird

/// `GET /metrics` in Prometheus text format (``ProviderMetrics``). On the admin listener
/// (`serve --admin-listen`) it is open, as scrapers expect of a private port; on a shared
/// listener it takes the admin token like the admin API, since sign-in counts and store
/// health are the operator's business.
enum MetricsRoutes {
    static func add(to router: Router<ProviderRequestContext>, provider: Provider, authorization: AdminAuthorization?) {
        router.get("metrics") { request, context in
            if let authorization { try await authorization.check(request, context) }
            var response = Response(status: .ok, body: .init(byteBuffer: .init(string: provider.context.metrics.exposition(store: provider.context.database.statistics))))
            response.headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return response
        }
    }
}
