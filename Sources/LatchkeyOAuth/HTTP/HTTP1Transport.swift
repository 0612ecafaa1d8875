#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import LatchkeyCrypto
import Synchronization

/// ``HTTPTransport`` over HTTP/1.1 (RFC 9112) on a connection of its own per request, TLS
/// through the system's OpenSSL (LatchkeyCrypto's TLS client: the system trust store, the
/// name checked, TLS 1.2 at least), so the client modules link no second HTTP, TLS or
/// crypto library, and a host's `latchkey` carries no libcurl and no Foundation networking
/// (docs/PERFORMANCE.md, "The Debian package").
///
/// It enforces ``TransportPolicy``: https except for loopback, one deadline for the whole
/// exchange (resolving, connecting, the handshake, the request, every byte of the answer),
/// a response-size cap checked as the body arrives, no redirects unless asked (and then
/// only to URLs the policy allows, at most five), and a `User-Agent` naming Latchkey. The
/// response's framing is read strictly (``HTTP1ResponseReader``). Cancelling the calling
/// task, or the deadline, releases the caller at once and interrupts the connection.
///
/// Not supported, on purpose or not yet: proxies (`https_proxy` is not read), HTTP/2,
/// compression, cookies, keeping connections open between requests.
public final class HTTP1Transport: HTTPTransport, Sendable {
    public static let userAgent = "Latchkey/0.4 (+https://github.com/latchkey; Linux)"
    static let maximumRedirects = 5

    public let policy: TransportPolicy
    /// The IPv4 address each connection is made from, asked for each connection; nil for
    /// the kernel's choice. Only the benchmark sets it (``StreamConnection``).
    let sourceAddress: (@Sendable () -> String?)?

    public init(policy: TransportPolicy = TransportPolicy()) {
        self.policy = policy
        sourceAddress = nil
    }

    /// A transport whose connections come from `sourceAddress()`: the benchmark's clients
    /// from many loopback addresses, as a provider's come from many hosts.
    package init(policy: TransportPolicy = TransportPolicy(), sourceAddress: @escaping @Sendable () -> String?) {
        self.policy = policy
        self.sourceAddress = sourceAddress
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try TransportPolicy.check(request.url)
        var request = request
        var redirects = 0
        while true {
            let response = try await exchange(request)
            guard policy.followsRedirects, [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["location"] else {
                return response
            }
            guard redirects < Self.maximumRedirects else {
                throw OAuthError.network(reason: "\(request.url.host ?? "the server") redirected more than \(Self.maximumRedirects) times")
            }
            guard let next = URL(string: location, relativeTo: request.url)?.absoluteURL else {
                throw OAuthError.malformedResponse(reason: "a redirect from \(request.url.host ?? "the server") to an invalid location")
            }
            try TransportPolicy.check(next)
            redirects += 1
            let previous = request.url
            // RFC 9110 §15.4.4: 303 becomes a GET; 301 and 302 after a POST do too, as
            // every client does. 307 and 308 repeat the request as it was.
            if response.status == 303 || ([301, 302].contains(response.status) && request.method == "POST") {
                request = TransportRequest(method: "GET", url: next, headers: request.headers.filter { $0.key.lowercased() != "content-type" })
            } else {
                request.url = next
            }
            // Credentials do not follow a redirect to another origin.
            if !Self.sameOrigin(previous, next) {
                request.headers = request.headers.filter { !["authorization", "dpop", "cookie"].contains($0.key.lowercased()) }
            }
        }
    }

    private static func sameOrigin(_ first: URL, _ second: URL) -> Bool {
        first.scheme?.lowercased() == second.scheme?.lowercased() && first.host?.lowercased() == second.host?.lowercased() && first.port == second.port
    }

    private func exchange(_ request: TransportRequest) async throws -> TransportResponse {
        let exchange = Exchange(request: request, policy: policy, sourceAddress: sourceAddress?())
        try Task.checkCancellation()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                exchange.start(continuation)
            }
        } onCancel: {
            exchange.interrupt(throwing: CancellationError())
        }
    }
}

/// One request on its own connection, run on a thread of its own (the calls block). Whichever
/// comes first resumes the caller, once: the answer, the deadline, or cancellation; the
/// last two also interrupt the connection, and the thread cleans up by itself.
private final class Exchange: Sendable {
    private let request: TransportRequest
    private let policy: TransportPolicy
    private let connection = StreamConnection()
    private let waiting = Mutex<CheckedContinuation<TransportResponse, any Error>?>(nil)
    private let host: String
    private let sourceAddress: String?

    init(request: TransportRequest, policy: TransportPolicy, sourceAddress: String?) {
        self.request = request
        self.policy = policy
        self.sourceAddress = sourceAddress
        host = request.url.host ?? "the server"
    }

    func start(_ continuation: CheckedContinuation<TransportResponse, any Error>) {
        waiting.withLock { $0 = continuation }
        if Task.isCancelled {
            interrupt(throwing: CancellationError())
            return
        }
        let deadline = ContinuousClock.now + .milliseconds(Int(policy.timeout * 1000))
        // The deadline is kept three ways: a Dispatch timer releases the caller (the
        // exchanges block threads of their own, never Dispatch's or the cooperative pool's),
        // the connection bounds each blocking call by it, and the thread checks it.
        let timedOut: @Sendable () -> OAuthError = { [host, policy] in OAuthError.timedOut(reason: "request to \(host) took longer than \(Int(policy.timeout)) s") }
        DispatchQueue.global().asyncAfter(deadline: .now() + policy.timeout) { [weak self] in
            self?.interrupt(throwing: timedOut())
        }
        let started = DetachedThread.start(stackSize: 512 * 1024) { [self] in
            let result = Result { try run(deadline: deadline) }
            connection.close()
            resume(with: result.mapError { error in
                if error is OAuthError { return error }
                if ContinuousClock.now >= deadline - .milliseconds(50) { return timedOut() }
                return OAuthError.network(reason: "request to \(host) failed: \((error as? CryptoError)?.reason ?? "\(error)")", underlying: error)
            })
        }
        if !started {
            connection.close()
            resume(with: .failure(OAuthError.network(reason: "request to \(host) not sent: no thread to run it on")))
        }
    }

    func interrupt(throwing error: any Error) {
        // The caller first: interrupting wakes the thread, whose own error must not win.
        resume(with: .failure(error))
        connection.interrupt()
    }

    private func resume(with result: Result<TransportResponse, any Error>) {
        waiting.withLock { waiting in
            defer { waiting = nil }
            return waiting
        }?.resume(with: result)
    }

    private func run(deadline: ContinuousClock.Instant) throws -> TransportResponse {
        let url = request.url
        let secure = url.scheme?.lowercased() == "https"
        let port = url.port ?? (secure ? 443 : 80)
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let bytes = try HTTP1Message.request(request, userAgent: HTTP1Transport.userAgent)
        try connection.connect(host: bareHost, port: port, tls: secure, publicAddressesOnly: policy.publicAddressesOnly, sourceAddress: sourceAddress, deadline: deadline)
        try connection.write(bytes)
        let connection = connection
        var reader = HTTP1ResponseReader(host: host, maximumBodySize: policy.maximumResponseSize) { try connection.read() }
        return try reader.response(method: request.method)
    }
}
