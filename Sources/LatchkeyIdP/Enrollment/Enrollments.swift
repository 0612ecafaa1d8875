import Foundation
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyOAuth

/// Self-service sign-up and account recovery, passwordless (docs/PROTOCOL.md section 6):
/// a code to an e-mail address (the outbox), then a bind job. Neither flow tells whether
/// a username exists: a recovery for an unknown name runs as a decoy with the same
/// answers and the same work, and a sign-up with a taken name proceeds alike but its
/// e-mail carries no code. Flows, their wrong codes and the start limits are in the
/// store, shared by every instance.
struct Enrollments: Sendable {
    let context: ProviderContext
    let identities: IdentityDirectory
    let bindJobs: BindJobs
    let outbox: Outbox

    private var configuration: ProviderConfiguration { context.configuration }

    /// A new flow's record and its token, after the per-address start limit. There is no
    /// cap on flows in all, which a crowd of addresses could fill to lock everyone out,
    /// and none per username, which would let anyone lock an owner out of their own
    /// recovery (docs/SECURITY.md, "Limits").
    private func begin(_ kind: Enrollment.Kind, username: String, clientKey: String, now: Date, in transaction: any SQLTransaction) async throws -> Verdict<(Enrollment, String)> {
        guard try await AttemptCounters.increment("enrollment-address|" + clientKey, now: now, in: transaction) <= configuration.maximumEnrollmentStartsPerAddress else {
            return .refused(ProviderError.slowDown("too many sign-ups or recoveries from this address; try again later"))
        }
        let token = try ProviderContext.randomToken()
        let enrollment = Enrollment(
            id: try ProviderContext.randomToken(), kind: kind, tokenHash: try ProviderContext.hash(token), username: username,
            expiresAt: now.addingTimeInterval(configuration.enrollmentCodeLifetime * 2)
        )
        return .accepted((enrollment, token))
    }

    private func enrollment(_ id: String, token: String, kind: Enrollment.Kind, now: Date, in transaction: any SQLTransaction) async throws -> Enrollment {
        guard let enrollment = try await transaction.first("SELECT \(raw: Enrollment.columns) FROM enrollments WHERE id = \(id) AND expires_at > \(now)").map(Enrollment.init(row:)),
              enrollment.kind == kind, ConstantTime.isEqual(enrollment.tokenHash, try ProviderContext.hash(token))
        else {
            throw ProviderError.notFound("unknown or expired \(kind == .signUp ? "sign-up" : "recovery")")
        }
        return enrollment
    }

    /// Checks a typed code against the flow's target (``MailedCode``), in constant time.
    /// Nil when it is right; then the code is spent. A wrong code counts against the flow
    /// (``ProviderConfiguration/maximumCodeAttempts`` end it), the client address, and the
    /// target, and is committed with the refusal. A target past its short-code allowance
    /// takes only the long form, so guessers lock out only themselves.
    private func check(_ enrollment: Enrollment, _ typed: String, clientKey: String, now: Date, in transaction: any SQLTransaction) async throws -> ProviderError? {
        let addressKey = "code-address|" + clientKey
        guard try await AttemptCounters.count(addressKey, now: now, in: transaction) < configuration.maximumCodeFailuresPerAddress else {
            return ProviderError.slowDown("too many wrong codes from this address; try again later")
        }
        let target = enrollment.codeTarget ?? ""
        let form = MailedCode.form(of: typed)
        let shortKey = "code-target|" + target
        let dailyKey = "code-target-day|" + target
        if case .short = form {
            let recent = try await AttemptCounters.count(shortKey, now: now, in: transaction)
            let today = try await AttemptCounters.count(dailyKey, window: AttemptCounters.day, now: now, in: transaction)
            guard recent < configuration.maximumCodeFailuresPerAccount, today < configuration.maximumCodeFailuresPerAccountPerDay else {
                return ProviderError.slowDown("too many wrong codes were tried for this account; enter the long code from the e-mail instead")
            }
        }
        let matches = try await MailedCode.matches(form, target: target, now: now, in: transaction)
        if matches, enrollment.codeTarget != nil, !enrollment.usernameTaken {
            try await MailedCode.spend(target: target, in: transaction)
            return nil
        }
        try await AttemptCounters.increment(addressKey, now: now, in: transaction)
        if case .short = form {
            try await AttemptCounters.increment(shortKey, now: now, in: transaction)
            try await AttemptCounters.increment(dailyKey, window: AttemptCounters.day, now: now, in: transaction)
        }
        let left = configuration.maximumCodeAttempts - enrollment.failedAttempts - 1
        if left <= 0 {
            try await transaction.execute("DELETE FROM enrollments WHERE id = \(enrollment.id)")
            return .badRequest(.invalidCode, "wrong code; too many wrong codes, so start again")
        }
        try await transaction.execute("UPDATE enrollments SET failed_attempts = failed_attempts + 1 WHERE id = \(enrollment.id)")
        return .badRequest(.invalidCode, "wrong code (or an expired one), \(left) attempts left")
    }

    /// The mail that carries `code`: both forms, and what each is for.
    private func body(_ purpose: String, _ code: MailedCode) -> String {
        """
        Enter \(code.short) to \(purpose). The code works for \(Int(configuration.enrollmentCodeLifetime / 60)) minutes, or until a newer one is sent.

        If the app says too many wrong codes were tried, enter this longer code instead:
        \(code.displayedLong)
        """
    }

    // MARK: Sign-up

    /// Starts a sign-up: the answer is always the `enroll-profile` step.
    func startSignUp(username: String, clientKey: String, now: Date = ProviderClock.now) async throws -> (id: String, token: String) {
        guard configuration.selfRegistration else {
            throw ProviderError.accessDenied("this provider does not allow self-registration")
        }
        let name = try Username.validated(username)
        try identities.reserved.check(username)
        return try await context.database.transaction { transaction -> Verdict<(String, String)> in
            let started = try await self.begin(.signUp, username: name, clientKey: clientKey, now: now, in: transaction)
            guard case .accepted(let pair) = started else { return started.map { _ in ("", "") } }
            var enrollment = pair.0
            let token = pair.1
            enrollment.usernameTaken = try await self.identities.isTaken(username, in: transaction)
            try await enrollment.save(in: transaction)
            return .accepted((enrollment.id, token))
        }.get()
    }

    /// Takes the profile and sends the code; answers the `verify-code` step's message.
    func signUpProfile(_ id: String, token: String, fields: [String: String], now: Date = ProviderClock.now) async throws -> String {
        var profile: [String: String] = [:]
        for field in Step.Field.profile {
            let value: String
            do {
                value = try FreeformText.validated(fields[field.name.rawValue] ?? "", field: field.name.rawValue, maximumScalars: 256)
            } catch {
                throw ProviderError.badRequest(.invalidProfile, error.description)
            }
            if field.required, value.isEmpty { throw ProviderError.badRequest(.invalidProfile, "\(field.name) is required") }
            if !value.isEmpty { profile[field.name.rawValue] = value }
        }
        guard let email = profile[Step.Field.Name.email.rawValue], email.utf8.count <= 254, let at = email.firstIndex(of: "@"), at > email.startIndex,
              email[email.index(after: at)...].contains("."), !email.contains(" ")
        else {
            throw ProviderError.badRequest(.invalidProfile, "email is not an e-mail address")
        }
        let code = try MailedCode.generate()
        let (lifetime, resend) = (configuration.enrollmentCodeLifetime, configuration.enrollmentCodeResendInterval)
        let given = profile
        try await context.database.transaction { transaction in
            var enrollment = try await self.enrollment(id, token: token, kind: .signUp, now: now, in: transaction)
            guard enrollment.profile == nil else { throw ProviderError.badRequest(.invalidRequest, "the profile was already given") }
            enrollment.profile = given
            try await enrollment.save(in: transaction)
            let target = enrollment.codeTarget ?? ""
            if enrollment.usernameTaken {
                // Same answer; the mail tells the address's owner, and no code exists.
                // At most three such notes an address in ten minutes.
                guard try await AttemptCounters.increment("signup-notice|" + target, now: now, in: transaction) <= 3 else { return }
                try await self.outbox.append(
                    to: email, subject: "Your Latchkey sign-up",
                    body: "Someone tried to sign up as \(enrollment.username), which is taken. If it was you, choose another username.",
                    code: nil, now: now, in: transaction
                )
            } else if try await code.store(for: target, lifetime: lifetime, resendAfter: resend, now: now, in: transaction) {
                try await self.outbox.append(
                    to: email, subject: "Your Latchkey sign-up code",
                    body: self.body("confirm this address and finish signing up", code), code: code.short, now: now, in: transaction
                )
            }
        }
        return "Enter the code sent to \(ProviderContext.masked(email))"
    }

    /// The right code creates the identity and answers its bind URL.
    func signUpCode(_ id: String, token: String, code: String, clientKey: String, now: Date = ProviderClock.now) async throws -> URL {
        try await context.database.transaction { transaction -> Verdict<URL> in
            let enrollment = try await self.enrollment(id, token: token, kind: .signUp, now: now, in: transaction)
            guard let profile = enrollment.profile else { return .refused(.badRequest(.invalidRequest, "give the profile first")) }
            if let refusal = try await self.check(enrollment, code, clientKey: clientKey, now: now, in: transaction) { return .refused(refusal) }
            try await transaction.execute("DELETE FROM enrollments WHERE id = \(id)")
            let displayName = [profile[Step.Field.Name.givenName.rawValue], profile[Step.Field.Name.familyName.rawValue]].compactMap { $0 }.joined(separator: " ")
            let identity = try await self.identities.create(
                username: enrollment.username, email: profile[Step.Field.Name.email.rawValue], displayName: displayName.isEmpty ? nil : displayName, now: now, in: transaction
            )
            try await self.context.audit.record(AuditEntry(
                .signUpCompleted, actor: .identity(identity.id), subject: identity.id, details: AuditEvent.Details(username: identity.username), now: now
            ), in: transaction)
            return .accepted(try await self.bindJobs.create(identityID: identity.id, lifetime: self.configuration.enrollmentCodeLifetime, now: now, in: transaction))
        }.get()
    }

    // MARK: Recovery

    /// Starts a recovery: the same `verify-code` answer, and the same work, whether or not
    /// the name exists; a code goes to the identity's e-mail only if it does, and only if
    /// none was sent in the last ``ProviderConfiguration/enrollmentCodeResendInterval``: flows share their
    /// account's code, so starting recoveries for someone else's name neither floods their
    /// mailbox nor takes anything from them.
    func startRecovery(username: String, clientKey: String, now: Date = ProviderClock.now) async throws -> (id: String, token: String) {
        guard configuration.recovery else {
            throw ProviderError.accessDenied("this provider does not offer account recovery")
        }
        let name = try Username.validated(username)
        // A reserved name is refused by name alone, whether or not an identity holds it
        // (one from before the name was reserved): its recovery is an admin's to make.
        try identities.reserved.check(username)
        let code = try MailedCode.generate()
        let (lifetime, resend) = (configuration.enrollmentCodeLifetime, configuration.enrollmentCodeResendInterval)
        return try await context.database.transaction { transaction -> Verdict<(String, String)> in
            let started = try await self.begin(.recovery, username: name, clientKey: clientKey, now: now, in: transaction)
            guard case .accepted(let pair) = started else { return started.map { _ in ("", "") } }
            var enrollment = pair.0
            let token = pair.1
            // The same statements for a decoy (an unknown name, or an account without an
            // e-mail address) as for a real account, so the answer's timing tells nothing
            // (docs/PROTOCOL.md section 6): its code is stored under its own target (no
            // flow can redeem it: the flow has no identity) and its outbox row is written
            // as already delivered, with no recipient, body or code (``Outbox``).
            let identity = try await self.identities.named(name, in: transaction)
            let email = identity?.email.flatMap { $0.isEmpty ? nil : $0 }
            if let identity, email != nil { enrollment.identityID = identity.id }
            if try await code.store(for: enrollment.codeTarget ?? "", lifetime: lifetime, resendAfter: resend, now: now, in: transaction) {
                let body = self.body("recover \(identity?.username ?? name); your other passkeys will stop working", code)
                try await self.outbox.append(
                    to: email, subject: "Your Latchkey recovery code", body: body, code: code.short, now: now, in: transaction
                )
            }
            try await enrollment.save(in: transaction)
            return .accepted((enrollment.id, token))
        }.get()
    }

    /// The right code answers a recovery bind job: binding through it revokes the
    /// identity's other credentials and their tokens.
    func recoveryCode(_ id: String, token: String, code: String, clientKey: String, now: Date = ProviderClock.now) async throws -> URL {
        try await context.database.transaction { transaction -> Verdict<URL> in
            let enrollment = try await self.enrollment(id, token: token, kind: .recovery, now: now, in: transaction)
            if let refusal = try await self.check(enrollment, code, clientKey: clientKey, now: now, in: transaction) { return .refused(refusal) }
            try await transaction.execute("DELETE FROM enrollments WHERE id = \(id)")
            guard let identityID = enrollment.identityID else { return .refused(.badRequest(.invalidCode, "wrong code")) }
            return .accepted(try await self.bindJobs.create(identityID: identityID, kind: .recovery, lifetime: self.configuration.enrollmentCodeLifetime, now: now, in: transaction))
        }.get()
    }
}
