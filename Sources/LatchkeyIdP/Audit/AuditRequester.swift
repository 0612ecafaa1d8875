import LatchkeyProtocol

/// Who is asking, for the events a request's decisions write: its address (behind a
/// trusted proxy, the forwarded one) and its `User-Agent`, bounded and escaped. Bound to
/// the request's task by `AuditRequesterMiddleware`, so the parts that decide need no
/// HTTP parameter to name it; nil outside a request (housekeeping, the command line).
struct AuditRequester: Sendable {
    private let rawAddress: String
    private let rawUserAgent: String?

    @TaskLocal static var current: AuditRequester?

    init(address: String, userAgent: String?) {
        rawAddress = address
        rawUserAgent = userAgent
    }

    /// The address as an event keeps it (at most 64 scalars, escaped).
    var address: String { rawAddress.logSafe(maximumLength: 64) }

    /// The `User-Agent` as an event keeps it: at most ``AuditEvent/maximumUserAgentLength``
    /// scalars, control, bidi and other scalars a terminal would act on written as
    /// escapes (``Swift/String/logSafe(maximumLength:)``): a forged agent can neither
    /// grow the log nor drive the terminal of the operator who reads it. Escaped when an
    /// event is written, not for every request.
    var userAgent: String? { rawUserAgent.map { $0.logSafe(maximumLength: AuditEvent.maximumUserAgentLength) } }
}
