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

    /// For a part found missing inside a test: under CI, an error that fails the test with
    /// `reason`; elsewhere the test is cancelled, reported with `reason`, and its remaining
    /// checks not run.
    public static func unavailable(_ reason: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Never {
        if isCI { throw TestSupportError("required under CI but missing: \(reason)") }
        try Test.cancel(Comment(rawValue: "skipped: \(reason)"), sourceLocation: sourceLocation)
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test (or suite) when `condition` holds; skips it with `comment` when not,
    /// except under CI, where a missing part fails it with `comment` as the reason.
    public static func requires(_ comment: Comment, _ condition: @escaping @Sendable () async throws -> Bool) -> Self {
        .enabled(comment) {
            if try await condition() { return true }
            if TestEnvironment.isCI { throw TestSupportError("required under CI but missing: \(comment.rawValue)") }
            return false
        }
    }

    /// ``requires(_:_:)`` for a condition known without waiting.
    public static func requires(if condition: @autoclosure @escaping @Sendable () -> Bool, _ comment: Comment) -> Self {
        requires(comment) { condition() }
    }
}
