import Foundation
import LatchkeyCrypto

/// Self-service sign-up and account recovery, passwordless: a code to an e-mail address
/// (the outbox), then a bind job. Neither flow tells whether a username exists: a
/// recovery for an unknown name runs as a decoy with the same answers and the same work,
/// and a sign-up with a taken name proceeds alike but its e-mail carries no code.
extension ProviderState {
    /// The fields the sign-up's `enroll-profile` step asks for.
    static let profileFields: [(name: String, required: Bool, kind: String)] = [
        ("givenName", true, "given-name"),
        ("familyName", false, "family-name"),
        ("email", true, "email"),
    ]

    /// Counts a start against `key`; false when over `limit` in ten minutes.
    private func allowStart(_ key: String, limit: Int, now: Date) -> Bool {
        if enrollmentStarts.count > 50_000 { enrollmentStarts.removeAll() }
        let recent = (enrollmentStarts[key] ?? []).filter { now.timeIntervalSince($0) < 600 }
        guard recent.count < limit else {
            enrollmentStarts[key] = recent
            return false
        }
        enrollmentStarts[key] = recent + [now]
        return true
    }

    private func pruneEnrollments(now: Date = Date()) {
        enrollments = enrollments.filter { $0.value.expiresAt > now }
    }

    /// A fresh six-digit code's hash, and the code.
    private static func newCode() throws -> (code: String, hash: Data) {
        let code = String(format: "%06u", try SecureRandom.uniform(below: 1_000_000))
        return (code, try hash(code))
    }

    private func begin(_ kind: Enrollment.Kind, username: String, clientAddress: String) throws -> (Enrollment, token: String) {
        pruneEnrollments()
        let now = Date()
        guard allowStart("address|" + clientAddress, limit: configuration.maximumEnrollmentStartsPerAddress, now: now) else {
            throw ProviderError(status: 429, error: "slow_down", description: "too many sign-ups or recoveries from this address; try again later")
        }
        guard enrollments.count < configuration.maximumTransfers * 10 else {
            throw ProviderError(status: 503, error: "temporarily_unavailable", description: "too many flows in progress")
        }
        let token = try Self.randomToken()
        let enrollment = Enrollment(
            id: try Self.randomToken(), kind: kind, tokenHash: try Self.hash(token), username: username,
            expiresAt: now.addingTimeInterval(configuration.enrollmentCodeLifetime * 2)
        )
        return (enrollment, token)
    }

    private func enrollment(_ id: String, token: String, kind: Enrollment.Kind) throws -> Enrollment {
        pruneEnrollments()
        guard let enrollment = enrollments[id], enrollment.kind == kind, ConstantTime.isEqual(enrollment.tokenHash, try Self.hash(token)) else {
            throw ProviderError.notFound("unknown or expired \(kind == .signUp ? "sign-up" : "recovery")")
        }
        return enrollment
    }

    /// Checks a code in constant time; wrong codes are counted and too many end the flow.
    private func checkCode(_ enrollment: inout Enrollment, _ code: String) throws {
        guard enrollment.failedAttempts < configuration.maximumCodeAttempts else {
            enrollments[enrollment.id] = nil
            throw ProviderError.badRequest("invalid_grant", "too many wrong codes; start again")
        }
        let expected = enrollment.codeHash ?? Data(repeating: 0, count: 32)
        let matches = ConstantTime.isEqual(try Self.hash(code.trimmingCharacters(in: .whitespaces)), expected)
        guard matches, enrollment.codeHash != nil, enrollment.codeExpiresAt > Date() else {
            enrollment.failedAttempts += 1
            let left = configuration.maximumCodeAttempts - enrollment.failedAttempts
            if left <= 0 { enrollments[enrollment.id] = nil } else { enrollments[enrollment.id] = enrollment }
            if matches, enrollment.codeHash != nil {
                throw ProviderError.badRequest("invalid_code", "this code has expired; start again")
            }
            throw ProviderError.badRequest("invalid_code", left > 0 ? "wrong code, \(left) attempts left" : "wrong code; start again")
        }
    }

    // MARK: Sign-up

    /// Starts a sign-up: the answer is always the `enroll-profile` step.
    func startSignUp(username: String, clientAddress: String) throws -> (id: String, token: String) {
        guard configuration.selfRegistration else {
            throw ProviderError(status: 403, error: "access_denied", description: "this provider does not allow self-registration")
        }
        let name = try Username.validated(username)
        var (enrollment, token) = try begin(.signUp, username: name, clientAddress: clientAddress)
        enrollment.usernameTaken = isTaken(name)
        enrollments[enrollment.id] = enrollment
        return (enrollment.id, token)
    }

    /// Takes the profile and sends the code; answers the `verify-code` step's message.
    func signUpProfile(_ id: String, token: String, fields: [String: String]) throws -> String {
        var enrollment = try enrollment(id, token: token, kind: .signUp)
        guard enrollment.profile == nil else { throw ProviderError.badRequest("invalid_request", "the profile was already given") }
        var profile: [String: String] = [:]
        for field in Self.profileFields {
            let value = (fields[field.name] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard value.isEmpty || (value.count <= 256 && !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })) else {
                throw ProviderError.badRequest("invalid_profile", "\(field.name) must be at most 256 printable characters")
            }
            if field.required, value.isEmpty { throw ProviderError.badRequest("invalid_profile", "\(field.name) is required") }
            if !value.isEmpty { profile[field.name] = value }
        }
        guard let email = profile["email"], email.utf8.count <= 254, let at = email.firstIndex(of: "@"), at > email.startIndex,
              email[email.index(after: at)...].contains("."), !email.contains(" ")
        else {
            throw ProviderError.badRequest("invalid_profile", "email is not an e-mail address")
        }
        let (code, hash) = try Self.newCode()
        enrollment.profile = profile
        enrollment.codeExpiresAt = Date().addingTimeInterval(configuration.enrollmentCodeLifetime)
        if enrollment.usernameTaken {
            // Same answer; the mail tells the address's owner, and no code exists.
            outbox.append(OutboxMessage(
                to: email, subject: "Your Latchkey sign-up",
                body: "Someone tried to sign up as \(enrollment.username), which is taken. If it was you, choose another username.",
                code: nil, createdAt: Date()
            ))
        } else {
            enrollment.codeHash = hash
            outbox.append(OutboxMessage(
                to: email, subject: "Your Latchkey sign-up code",
                body: "Enter \(code) to finish signing up as \(enrollment.username).", code: code, createdAt: Date()
            ))
        }
        enrollments[id] = enrollment
        return "Enter the code sent to \(Self.masked(email))"
    }

    /// The right code creates the identity and answers its bind URL.
    func signUpCode(_ id: String, token: String, code: String) throws -> URL {
        var enrollment = try enrollment(id, token: token, kind: .signUp)
        guard let profile = enrollment.profile else { throw ProviderError.badRequest("invalid_request", "give the profile first") }
        try checkCode(&enrollment, code)
        enrollments[id] = nil
        let displayName = [profile["givenName"], profile["familyName"]].compactMap { $0 }.joined(separator: " ")
        let identity = try createIdentity(username: enrollment.username, email: profile["email"], displayName: displayName.isEmpty ? nil : displayName)
        return try createBindJob(identityID: identity.id, lifetime: configuration.enrollmentCodeLifetime)
    }

    // MARK: Recovery

    /// Starts a recovery: the same `verify-code` answer whether or not the name exists; a
    /// code goes to the identity's e-mail only if it does.
    func startRecovery(username: String, clientAddress: String) throws -> (id: String, token: String) {
        guard configuration.recovery else {
            throw ProviderError(status: 403, error: "access_denied", description: "this provider does not offer account recovery")
        }
        let name = try Username.validated(username)
        guard allowStart("username|" + Username.key(name), limit: configuration.maximumRecoveriesPerUsername, now: Date()) else {
            throw ProviderError(status: 429, error: "slow_down", description: "too many recoveries for this username; try again later")
        }
        var (enrollment, token) = try begin(.recovery, username: name, clientAddress: clientAddress)
        let identity = identity(named: name)
        // The same work either way: a code is made and hashed; only a real identity's is sent.
        let (code, hash) = try Self.newCode()
        enrollment.codeExpiresAt = Date().addingTimeInterval(configuration.enrollmentCodeLifetime)
        if let identity, let email = identity.email {
            enrollment.identityID = identity.id
            enrollment.codeHash = hash
            outbox.append(OutboxMessage(
                to: email, subject: "Your Latchkey recovery code",
                body: "Enter \(code) to recover \(identity.username). Your other passkeys will stop working.", code: code, createdAt: Date()
            ))
        }
        enrollments[enrollment.id] = enrollment
        return (enrollment.id, token)
    }

    /// The right code answers a recovery bind job: binding through it revokes the
    /// identity's other credentials.
    func recoveryCode(_ id: String, token: String, code: String) throws -> URL {
        var enrollment = try enrollment(id, token: token, kind: .recovery)
        try checkCode(&enrollment, code)
        enrollments[id] = nil
        guard let identityID = enrollment.identityID else {
            throw ProviderError.badRequest("invalid_code", "wrong code")
        }
        return try createBindJob(identityID: identityID, kind: .recovery, lifetime: configuration.enrollmentCodeLifetime)
    }
}
