import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// ``HTTPTransport`` over Foundation's URLSession (FoundationNetworking on Linux, which
/// uses libcurl and the system's OpenSSL: no second TLS or crypto library is linked).
///
/// It enforces ``TransportPolicy``: https except for loopback, a deadline for the whole
/// exchange, a response-size cap checked while the body streams in (the transfer is
/// cancelled past it), no redirects unless asked, and a `User-Agent` naming Latchkey.
///
/// The deadline is kept here, not left to URLSession: FoundationNetworking's
/// `timeoutIntervalForResource` is not enforced on Linux, and its request timeout restarts
/// with every byte, so a provider dripping one byte a second would hold a caller forever.
public final class URLSessionTransport: HTTPTransport, Sendable {
    public static let userAgent = "Latchkey/0.1 (+https://github.com/latchkey; Linux)"

    public let policy: TransportPolicy
    private let delegate: SessionDelegate
    private let madeSession = Mutex<URLSession?>(nil)

    public init(policy: TransportPolicy = TransportPolicy()) {
        self.policy = policy
        delegate = SessionDelegate(policy: policy)
    }

    /// The session holds its delegate until it is invalidated. `finishTasksAndInvalidate()`
    /// does that on the session's own queue; `invalidateAndCancel()` reads the session's
    /// task list from the calling thread while that queue may be removing a finished task,
    /// and FoundationNetworking crashed there once in a CI run (in `Collection.map`, from
    /// this deinit). No caller waits on a task by now: a cancelled one ends at once.
    deinit { madeSession.withLock { $0?.finishTasksAndInvalidate() } }

    /// The session, made at the first request: making one starts libcurl and
    /// FoundationNetworking's machinery (several milliseconds), which a command answered
    /// without the network (`latchkey token` from kept tokens) should not pay.
    private var session: URLSession {
        madeSession.withLock { madeSession in
            if let madeSession { return madeSession }
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = policy.timeout
            configuration.timeoutIntervalForResource = policy.timeout
            configuration.httpCookieAcceptPolicy = .never
            configuration.httpShouldSetCookies = false
            configuration.urlCache = nil
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            let made = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            madeSession = made
            return made
        }
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        try TransportPolicy.check(request.url)
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: policy.timeout)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        urlRequest.setValue(Self.userAgent, forHTTPHeaderField: "User-Agent")
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        try Task.checkCancellation()
        // Cancelling the calling task ends the wait at once with CancellationError and
        // cancels the transfer. The caller is resumed here, not by URLSession: on Linux a
        // task cancelled before it was resumed never reports completion, so a caller
        // relying on that callback would wait forever.
        let task = session.dataTask(with: urlRequest)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.register(task, continuation: continuation)
                // The cancellation flag is set before the handler runs: a handler that ran
                // before `register` found nothing to resume, and this check catches it.
                if Task.isCancelled {
                    delegate.finish(task.taskIdentifier, throwing: CancellationError())
                    return
                }
                task.resume()
                delegate.expire(task, after: policy.timeout)
            }
        } onCancel: {
            delegate.finish(task.taskIdentifier, throwing: CancellationError())
            task.cancel()
        }
    }
}

/// Collects each task's body, enforcing the size cap as data arrives, and refuses
/// redirects unless the policy allows them.
private final class SessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Pending {
        var continuation: CheckedContinuation<TransportResponse, any Error>
        var body = Data()
        var tooLarge = false
    }

    private let policy: TransportPolicy
    private let pending = Mutex<[Int: Pending]>([:])

    init(policy: TransportPolicy) {
        self.policy = policy
    }

    func register(_ task: URLSessionTask, continuation: CheckedContinuation<TransportResponse, any Error>) {
        pending.withLock { $0[task.taskIdentifier] = Pending(continuation: continuation) }
    }

    /// Resumes the caller waiting on task `identifier` with `error`, if it still waits.
    func finish(_ identifier: Int, throwing error: any Error) {
        pending.withLock { $0.removeValue(forKey: identifier) }?.continuation.resume(throwing: error)
    }

    /// Ends `task` with ``OAuthError/Code-swift.struct/timedOut`` unless it completed
    /// within `timeout`; whichever comes first resumes the caller, once.
    func expire(_ task: URLSessionTask, after timeout: TimeInterval) {
        let identifier = task.taskIdentifier
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak self, weak task] in
            guard let self, let entry = self.pending.withLock({ $0.removeValue(forKey: identifier) }) else { return }
            task?.cancel()
            entry.continuation.resume(throwing: OAuthError.timedOut(reason: "request to \(task?.originalRequest?.url?.host ?? "the provider") took longer than \(Int(timeout)) s"
            ))
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overflow = pending.withLock { pending -> Bool in
            guard var entry = pending[dataTask.taskIdentifier] else { return false }
            if entry.body.count + data.count > policy.maximumResponseSize {
                entry.tooLarge = true
                entry.body = Data()
                pending[dataTask.taskIdentifier] = entry
                return true
            }
            entry.body.append(data)
            pending[dataTask.taskIdentifier] = entry
            return false
        }
        if overflow { dataTask.cancel() }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // Without following, the 3xx response itself is delivered to the caller.
        guard policy.followsRedirects, let url = request.url, (try? TransportPolicy.check(url)) != nil else {
            completionHandler(nil)
            return
        }
        completionHandler(request)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if entry.tooLarge {
            entry.continuation.resume(throwing: OAuthError.responseTooLarge(reason: "response from \(task.originalRequest?.url?.host ?? "the provider") exceeds \(policy.maximumResponseSize) bytes"
            ))
            return
        }
        if let error {
            if (error as? URLError)?.code == .cancelled {
                entry.continuation.resume(throwing: CancellationError())
                return
            }
            // URLSession's own idle timeout (the same seconds as the deadline) can fire
            // first when the provider stalls between bytes: it is the same failure.
            if (error as? URLError)?.code == .timedOut {
                entry.continuation.resume(throwing: OAuthError.timedOut(reason: "request to \(task.originalRequest?.url?.host ?? "the provider") took longer than \(Int(policy.timeout)) s",
                    underlying: error
                ))
                return
            }
            entry.continuation.resume(throwing: OAuthError.network(reason: "request to \(task.originalRequest?.url?.host ?? "the provider") failed: \(error.localizedDescription)", underlying: error
            ))
            return
        }
        guard let http = task.response as? HTTPURLResponse else {
            entry.continuation.resume(throwing: OAuthError.network(reason: "no HTTP response"))
            return
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        entry.continuation.resume(returning: TransportResponse(status: http.statusCode, headers: headers, body: entry.body))
    }
}
