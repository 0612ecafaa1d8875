import Foundation
public import Testing

/// What a run may assume of the machine. A test that needs a part the machine may lack (a
/// browser, a TPM, PostgreSQL, an SMTP server, a Python peer, a second user) is skipped,
/// saying so, on a developer's machine without it; under CI (`CI=true`, as `.ci/run` runs)
/// it must run, so a missing part fails it with the reason instead (README, "Two
/// commands"; issue 49).
public enum TestEnvironment {
    /// Whether this is a CI run: `CI` is `true` (or `1`).
    public static let isCI: Bool = {
        let value = ProcessInfo.processInfo.environment["CI"]?.lowercased() ?? ""
        return value == "true" || value == "1"
    }()

    /// Raises this process's soft limit on open files to its hard limit, once. Swift
    /// Testing starts the suite's tests together; unbounded, the start of a full run held
    /// about 1,980 descriptors (in-process providers' listeners, both ends of their HTTP
    /// connections, PostgreSQL connections, pipes to child processes), past the 1,024 a
    /// fresh Linux login's soft limit allows, and accept, pipe and open failed in whichever
    /// tests came last (issue 49). ``ProviderSlots`` now keeps it near 600; the raise is the
    /// margin. The hard limit is the process's own to take, as Go's runtime takes it for
    /// every program; child processes inherit the raised limit.
    public static let openFileLimit: UInt64 = {
        var limit = rlimit()
        guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(RLIMIT_NOFILE_VALUE, &raised) == 0 { limit = raised }
        }
        if limit.rlim_cur < 1024 {
            print("the open-file limit is \(limit.rlim_cur) (hard limit \(limit.rlim_max)); a full run holds about 600 descriptors at its start: raise it (ulimit -n) if tests fail with EMFILE")
        }
        return UInt64(limit.rlim_cur)
    }()

    /// The failure of a test whose part is missing under CI.
    static func missingUnderCI(_ reason: String) -> TestSupportError {
        TestSupportError("required under CI but missing: \(reason)")
    }

    /// `RLIMIT_NOFILE`, whose type differs between C libraries.
    private static var RLIMIT_NOFILE_VALUE: __rlimit_resource_t { __rlimit_resource_t(RLIMIT_NOFILE.rawValue) }

    /// For a part found missing inside a test: under CI, an error that fails the test with
    /// `reason`; elsewhere the test is cancelled, reported with `reason`, and its remaining
    /// checks not run.
    public static func unavailable(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Never {
        if isCI { throw missingUnderCI(reason) }
        try Test.cancel(Comment(rawValue: "skipped: \(reason)"), sourceLocation: sourceLocation)
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test (or suite) when `condition` holds; skips it with `comment` when not,
    /// except under CI, where a missing part fails it with `comment` as the reason.
    public static func requires(_ comment: Comment, _ condition: @escaping @Sendable () async throws -> Bool) -> Self {
        .enabled(comment) {
            if try await condition() { return true }
            if TestEnvironment.isCI { throw TestEnvironment.missingUnderCI(comment.rawValue) }
            return false
        }
    }

    /// ``requires(_:_:)`` for a condition known without waiting.
    public static func requires(if condition: @autoclosure @escaping @Sendable () -> Bool, _ comment: Comment) -> Self {
        requires(comment) { condition() }
    }
}
