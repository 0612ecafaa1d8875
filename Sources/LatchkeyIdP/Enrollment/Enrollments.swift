import Foundation
import LatchkeyCrypto
import LatchkeyProtocol

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

    /// A new flow's record and its token, after the start limits.
    private func begin(_ kind: Enrollment.Kind, username: String, clientAddress: String, now: Date, in transaction: any SQLTransaction) async throws -> Verdict<(Enrollment, String)> {
        guard try await AttemptCounters.increment("enrollment-address|" + clientAddress, now: now, in: transaction) <= configuration.maximumEnrollmentStartsPerAddress else {
            return .refused(ProviderError(status: 429, error: "slow_down", description: "too many sign-ups or recoveries from this address; try again later"))
        }
        let live = try await transaction.first("SELECT count(*) FROM enrollments WHERE expires_at > \(now)")?.int(0) ?? 0
        guard live < configuration.maximumTransfers * 10 else {
            return .refused(ProviderError(status: 503, error: "temporarily_unavailable", description: "too many flows in progress"))
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

    /// Checks a code in constant time; wrong codes are counted (and committed) and too
    /// many end the flow. Nil when the code is right.
    private func check(_ enrollment: Enrollment, _ code: String, now: Date, in transaction: any SQLTransaction) async throws -> ProviderError? {
        let maximum = configuration.maximumCodeAttempts
        guard enrollment.failedAttempts < maximum else {
            try await transaction.execute("DELETE FROM enrollments WHERE id = \(enrollment.id)")
            return .badRequest("invalid_grant", "too many wrong codes; start again")
        }
        let expected = enrollment.codeHash ?? Data(repeating: 0, count: 32)
        let matches = ConstantTime.isEqual(try ProviderContext.hash(code.trimmingCharacters(in: .whitespaces)), expected)
        guard matches, enrollment.codeHash != nil, enrollment.codeExpiresAt > now else {
            let left = maximum - enrollment.failedAttempts - 1
            if left <= 0 {
                try await transaction.execute("DELETE FROM enrollments WHERE id = \(enrollment.id)")
            } else {
                try await transaction.execute("UPDATE enrollments SET failed_attempts = failed_attempts + 1 WHERE id = \(enrollment.id)")
            }
            if matches, enrollment.codeHash != nil {
                return .badRequest("invalid_code", "this code has expired; start again")
            }
            return .badRequest("invalid_code", left > 0 ? "wrong code, \(left) attempts left" : "wrong code; start again")
        }
        return nil
    }

    // MARK: Sign-up

    /// Starts a sign-up: the answer is always the `enroll-profile` step.
    func startSignUp(username: String, clientAddress: String, now: Date = Date()) async throws -> (id: String, token: String) {
        guard configuration.selfRegistration else {
            throw ProviderError(status: 403, error: "access_denied", description: "this provider does not allow self-registration")
        }
        let name = try Username.validated(username)
        return try await context.database.transaction { transaction -> Verdict<(String, String)> in
            let started = try await self.begin(.signUp, username: name, clientAddress: clientAddress, now: now, in: transaction)
            guard case .accepted(let pair) = started else { return started.map { _ in ("", "") } }
            var enrollment = pair.0
            let token = pair.1
            enrollment.usernameTaken = try await self.identities.isTaken(name, in: transaction)
            try await enrollment.save(in: transaction)
            return .accepted((enrollment.id, token))
        }.get()
    }

    /// Takes the profile and sends the code; answers the `verify-code` step's message.
    func signUpProfile(_ id: String, token: String, fields: [String: String], now: Date = Date()) async throws -> String {
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
        let (code, hash) = try ProviderContext.newCode()
        let codeLifetime = configuration.enrollmentCodeLifetime
        let given = profile
        try await context.database.transaction { transaction in
            var enrollment = try await self.enrollment(id, token: token, kind: .signUp, now: now, in: transaction)
            guard enrollment.profile == nil else { throw ProviderError.badRequest("invalid_request", "the profile was already given") }
            enrollment.profile = given
            enrollment.codeExpiresAt = now.addingTimeInterval(codeLifetime)
            if enrollment.usernameTaken {
                // Same answer; the mail tells the address's owner, and no code exists.
                try await self.outbox.append(
                    to: email, subject: "Your Latchkey sign-up",
                    body: "Someone tried to sign up as \(enrollment.username), which is taken. If it was you, choose another username.",
                    code: nil, now: now, in: transaction
                )
            } else {
                enrollment.codeHash = hash
                try await self.outbox.append(
                    to: email, subject: "Your Latchkey sign-up code",
                    body: "Enter \(code) to finish signing up as \(enrollment.username).", code: code, now: now, in: transaction
                )
            }
            try await enrollment.save(in: transaction)
        }
        return "Enter the code sent to \(ProviderContext.masked(email))"
    }

    /// The right code creates the identity and answers its bind URL.
    func signUpCode(_ id: String, token: String, code: String, now: Date = Date()) async throws -> URL {
        try await context.database.transaction { transaction -> Verdict<URL> in
            let enrollment = try await self.enrollment(id, token: token, kind: .signUp, now: now, in: transaction)
            guard let profile = enrollment.profile else { return .refused(.badRequest("invalid_request", "give the profile first")) }
            if let refusal = try await self.check(enrollment, code, now: now, in: transaction) { return .refused(refusal) }
            try await transaction.execute("DELETE FROM enrollments WHERE id = \(id)")
            let displayName = [profile[Step.Field.Name.givenName.rawValue], profile[Step.Field.Name.familyName.rawValue]].compactMap { $0 }.joined(separator: " ")
            let identity = try await self.identities.create(
                username: enrollment.username, email: profile[Step.Field.Name.email.rawValue], displayName: displayName.isEmpty ? nil : displayName, now: now, in: transaction
            )
            return .accepted(try await self.bindJobs.create(identityID: identity.id, lifetime: self.configuration.enrollmentCodeLifetime, now: now, in: transaction))
        }.get()
    }

    // MARK: Recovery

    /// Starts a recovery: the same `verify-code` answer whether or not the name exists; a
    /// code goes to the identity's e-mail only if it does.
    func startRecovery(username: String, clientAddress: String, now: Date = Date()) async throws -> (id: String, token: String) {
        guard configuration.recovery else {
            throw ProviderError(status: 403, error: "access_denied", description: "this provider does not offer account recovery")
        }
        let name = try Username.validated(username)
        // The same work either way: a code is made and hashed; only a real identity's is sent.
        let (code, hash) = try ProviderContext.newCode()
        let codeLifetime = configuration.enrollmentCodeLifetime
        let perUsername = configuration.maximumRecoveriesPerUsername
        return try await context.database.transaction { transaction -> Verdict<(String, String)> in
            guard try await AttemptCounters.increment("recovery-username|" + Username.key(name), now: now, in: transaction) <= perUsername else {
                return .refused(ProviderError(status: 429, error: "slow_down", description: "too many recoveries for this username; try again later"))
            }
            let started = try await self.begin(.recovery, username: name, clientAddress: clientAddress, now: now, in: transaction)
            guard case .accepted(let pair) = started else { return started.map { _ in ("", "") } }
            var enrollment = pair.0
            let token = pair.1
            enrollment.codeExpiresAt = now.addingTimeInterval(codeLifetime)
            if let identity = try await self.identities.named(name, in: transaction), let email = identity.email {
                enrollment.identityID = identity.id
                enrollment.codeHash = hash
                try await self.outbox.append(
                    to: email, subject: "Your Latchkey recovery code",
                    body: "Enter \(code) to recover \(identity.username). Your other passkeys will stop working.", code: code, now: now, in: transaction
                )
            }
            try await enrollment.save(in: transaction)
            return .accepted((enrollment.id, token))
        }.get()
    }

    /// The right code answers a recovery bind job: binding through it revokes the
    /// identity's other credentials and their tokens.
    func recoveryCode(_ id: String, token: String, code: String, now: Date = Date()) async throws -> URL {
        try await context.database.transaction { transaction -> Verdict<URL> in
            let enrollment = try await self.enrollment(id, token: token, kind: .recovery, now: now, in: transaction)
            if let refusal = try await self.check(enrollment, code, now: now, in: transaction) { return .refused(refusal) }
            try await transaction.execute("DELETE FROM enrollments WHERE id = \(id)")
            guard let identityID = enrollment.identityID else { return .refused(.badRequest("invalid_code", "wrong code")) }
            return .accepted(try await self.bindJobs.create(identityID: identityID, kind: .recovery, lifetime: self.configuration.enrollmentCodeLifetime, now: now, in: transaction))
        }.get()
    }
}
