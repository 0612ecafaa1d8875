import Foundation
import LatchkeyProtocol
import Prometheus
import Synchronization

/// What the provider counts for its operator (docs/ARCHITECTURE.md, "Operations"), served
/// in Prometheus text format at `GET /metrics` (swift-prometheus). Each provider has its
/// own registry, so two in one process (tests, the demo) never mix their counts. Labels
/// take only values the provider chose (route templates, its own error codes, rate-limit
/// buckets), never anything a client sent, so a client cannot grow the registry.
final class ProviderMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()

    /// Latency buckets from 1 ms to 10 s: a sign-in's steps take milliseconds, a slow
    /// store or a trickling client seconds.
    private static let latencyBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(10),
    ]

    private let signIns: Counter
    private let sshCertificates: Counter
    private let mailSent: Counter
    private let mailFailed: Counter
    private let transactionsInFlight: Gauge
    private let mailFailing: Gauge
    private let storeStatements: Counter
    private let storeTransactions: Counter
    private struct RouteStatus: Hashable {
        var endpoint: String
        var status: Int
    }

    private let routeMetrics = Mutex<[RouteStatus: (latency: DurationHistogram, responses: Counter)]>([:])
    /// The store's counts (``StoreStatistics``) as last reported, so a scrape adds the rest.
    private let reportedStore = Mutex((statements: 0, transactions: 0))

    /// `latchkey_<name>_<unit>`.
    private static func name(_ name: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "latchkey", metricName: name, unitName: unit, helpText: help)
    }

    private static var signInFailures: MetricNameDescriptor { name("sign_in_failures", "total", "Sign-ins refused, by error code.") }
    private static var latency: MetricNameDescriptor { name("http_request_duration", "seconds", "Time to answer a request, by route.") }
    private static var responses: MetricNameDescriptor { name("http_responses", "total", "Responses, by route and status.") }
    private static var limited: MetricNameDescriptor { name("rate_limited", "total", "Requests refused by a limit (429), by route.") }
    private static var storeErrors: MetricNameDescriptor { name("store_errors", "total", "Store operations that failed, by error code.") }

    init() {
        signIns = registry.makeCounter(descriptor: Self.name("sign_ins", "total", "Sign-ins completed with a valid assertion."))
        sshCertificates = registry.makeCounter(descriptor: Self.name("ssh_certificates_issued", "total", "SSH certificates the CA signed."))
        mailSent = registry.makeCounter(descriptor: Self.name("mail_sent", "total", "Messages the mail transport accepted."))
        mailFailed = registry.makeCounter(descriptor: Self.name("mail_failed", "total", "Messages given up on after every retry."))
        mailFailing = registry.makeGauge(descriptor: Self.name("mail_transport_failing", "", "1 while the last deliveries in a row could not be handed to the mail transport; codes wait in the outbox."))
        transactionsInFlight = registry.makeGauge(descriptor: Self.name("store_transactions_in_flight", "", "Store transactions running now (pool use)."))
        storeStatements = registry.makeCounter(descriptor: Self.name("store_statements", "total", "SQL statements the provider ran on its store (BEGIN and COMMIT not counted)."))
        storeTransactions = registry.makeCounter(descriptor: Self.name("store_transactions", "total", "Store transactions and lookups run."))
    }

    func signedIn() {
        signIns.increment()
    }

    /// A sign-in refused, by the error code the client got.
    func signInFailed(_ error: String) {
        registry.makeCounter(descriptor: Self.signInFailures, labels: [("error", error)]).increment()
    }

    /// A request answered: its latency per route and its status.
    ///
    /// The registry checks a metric's name and labels each time one is asked for, which
    /// cost more than the rest of a bare request; the metrics of each route and status
    /// are kept here after the first answer (routes and statuses are the provider's own,
    /// so the table stays small).
    func answered(endpoint: String, status: Int, after duration: Duration) {
        let key = RouteStatus(endpoint: endpoint, status: status)
        let known = routeMetrics.withLock { $0[key] }
        let metrics = known ?? {
            let made = (
                latency: registry.makeDurationHistogram(descriptor: Self.latency, labels: [("endpoint", endpoint)], buckets: Self.latencyBuckets),
                responses: registry.makeCounter(descriptor: Self.responses, labels: [("endpoint", endpoint), ("status", String(status))])
            )
            routeMetrics.withLock { $0[key] = made }
            return made
        }()
        metrics.latency.record(duration)
        metrics.responses.increment()
    }

    /// A request refused by a rate limit or an attempt counter.
    /// Audit events sealed, by type; a type the provider does not write (a row put in the
    /// database by hand) counts as `other`, so no row can add a label.
    func auditEvents(_ type: AuditEventType, count: Int) {
        let label = AuditEventType.known.contains(type) ? type.rawValue : "other"
        registry.makeCounter(descriptor: Self.auditEvents, labels: [("type", label)]).increment(by: Int64(count))
    }

    private static var auditEvents: MetricNameDescriptor { name("audit_events", "total", "Audit events sealed into the chain, by type.") }

    /// SSH certificates the CA signed.
    func sshCertificateIssued() {
        sshCertificates.increment()
    }

    func rateLimited(_ endpoint: String) {
        registry.makeCounter(descriptor: Self.limited, labels: [("endpoint", endpoint)]).increment()
    }

    func mailDelivered() {
        mailSent.increment()
    }

    func mailGaveUp() {
        mailFailed.increment()
    }

    /// Whether the mail transport is failing now (``MailHealth``).
    func mailTransportFailing(_ failing: Bool) {
        mailFailing.set(to: failing ? 1.0 : 0.0)
    }

    /// A store operation failed, by its ``StoreError/Code``.
    func storeFailed(_ code: String) {
        registry.makeCounter(descriptor: Self.storeErrors, labels: [("code", code)]).increment()
    }

    func transactionStarted() {
        transactionsInFlight.increment()
    }

    func transactionEnded() {
        transactionsInFlight.decrement()
    }

    /// The exposition (Prometheus text format 0.0.4), with the store's counts brought up
    /// to date: the engine counts them itself, without touching the registry per statement.
    func exposition(store: StoreStatistics) -> String {
        let statements = store.statements
        let transactions = store.transactions
        let added = reportedStore.withLock { reported -> (Int, Int) in
            let added = (max(0, statements - reported.statements), max(0, transactions - reported.transactions))
            reported = (max(statements, reported.statements), max(transactions, reported.transactions))
            return added
        }
        if added.0 > 0 { storeStatements.increment(by: Int64(added.0)) }
        if added.1 > 0 { storeTransactions.increment(by: Int64(added.1)) }
        return registry.emitToString()
    }
}
