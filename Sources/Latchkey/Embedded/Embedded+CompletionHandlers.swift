#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyOAuth

/// The completion-handler forms, for callers not written with async/await. Each handler is
/// called exactly once, on an arbitrary thread, with the result or the ``LatchkeyError``
/// (``LatchkeyError/Code/cancelled`` after ``EmbeddedTask/cancel()``).
extension Embedded {
    public typealias Completion<Success: Sendable> = @Sendable (Result<Success, LatchkeyError>) -> Void

    func complete<Success: Sendable>(
        _ completion: @escaping Completion<Success>,
        _ operation: @escaping @Sendable () async throws -> Success
    ) -> EmbeddedTask {
        EmbeddedTask(Task {
            let result: Result<Success, LatchkeyError>
            do {
                result = .success(try await operation())
            } catch {
                result = .failure(LatchkeyError.wrapping(error))
            }
            completion(result)
        })
    }

    @discardableResult
    public func credentials(completion: @escaping Completion<[Credential]>) -> EmbeddedTask {
        complete(completion) { try await self.credentials() }
    }

    @discardableResult
    public func registerCredential(from url: URL, completion: @escaping Completion<BoundCredential>) -> EmbeddedTask {
        complete(completion) { try await self.registerCredential(from: url) }
    }

    @discardableResult
    public func authorize(
        issuer: URL,
        clientID: String,
        redirectURI: URL,
        scopes: [String] = [OAuthScope.openID],
        credential: String? = nil,
        completion: @escaping Completion<AuthorizationResult>
    ) -> EmbeddedTask {
        complete(completion) {
            try await self.authorize(issuer: issuer, clientID: clientID, redirectURI: redirectURI, scopes: scopes, credential: credential)
        }
    }

    @discardableResult
    public func authenticate(
        issuer: URL,
        clientID: String,
        redirectURI: URL,
        scopes: [String] = [OAuthScope.openID],
        credential: String? = nil,
        proofOfPossession: ProofOfPossession? = nil,
        completion: @escaping Completion<Tokens>
    ) -> EmbeddedTask {
        complete(completion) {
            try await self.authenticate(
                issuer: issuer, clientID: clientID, redirectURI: redirectURI, scopes: scopes, credential: credential, proofOfPossession: proofOfPossession
            )
        }
    }

    @discardableResult
    public func validTokens(
        issuer: URL,
        clientID: String,
        redirectURI: URL,
        scopes: [String] = [OAuthScope.openID],
        credential: String? = nil,
        proofOfPossession: ProofOfPossession? = nil,
        minimumValidity: TimeInterval = 30,
        rejected: Tokens? = nil,
        completion: @escaping Completion<Tokens>
    ) -> EmbeddedTask {
        complete(completion) {
            try await self.validTokens(
                issuer: issuer, clientID: clientID, redirectURI: redirectURI, scopes: scopes, credential: credential,
                proofOfPossession: proofOfPossession, minimumValidity: minimumValidity, rejected: rejected
            )
        }
    }

    @discardableResult
    public func logout(issuer: URL, clientID: String? = nil, credential: String? = nil, completion: @escaping Completion<Logout>) -> EmbeddedTask {
        complete(completion) { try await self.logout(issuer: issuer, clientID: clientID, credential: credential) }
    }

    @discardableResult
    public func authenticate(url: URL, credential: String? = nil, completion: @escaping Completion<URL>) -> EmbeddedTask {
        complete(completion) { try await self.authenticate(url: url, credential: credential) }
    }

    @discardableResult
    public func refresh(_ tokens: Tokens, scopes: [String]? = nil, completion: @escaping Completion<Tokens>) -> EmbeddedTask {
        complete(completion) { try await self.refresh(tokens, scopes: scopes) }
    }

    @discardableResult
    public func revoke(_ tokens: Tokens, completion: @escaping Completion<Void>) -> EmbeddedTask {
        complete(completion) { try await self.revoke(tokens) }
    }

    @discardableResult
    public func deleteCredential(id: String, completion: @escaping Completion<Bool>) -> EmbeddedTask {
        complete(completion) { try await self.deleteCredential(id: id) }
    }
}

extension Embedded {
    /// ``exportCredential(id:)`` with callbacks: `onEvent` for each ``ExportEvent`` in
    /// order, then `completion` once. Cancelling the returned task cancels the transfer.
    @discardableResult
    public func exportCredential(
        id: String,
        onEvent: @escaping @Sendable (ExportEvent) -> Void,
        completion: @escaping Completion<Void>
    ) -> EmbeddedTask {
        complete(completion) {
            for try await event in self.exportCredential(id: id) { onEvent(event) }
            // A cancelled iteration just ends; report it as the cancellation it is.
            try Task.checkCancellation()
        }
    }

    @discardableResult
    public func importCredential(code: String, deviceName: String, issuer: URL, completion: @escaping Completion<[Credential]>) -> EmbeddedTask {
        complete(completion) { try await self.importCredential(code: code, deviceName: deviceName, issuer: issuer) }
    }
}

extension Embedded {
    @discardableResult
    public func signUp(issuer: URL, username: String, profile: [ProfileField: String] = [:], completion: @escaping Completion<Credential>) -> EmbeddedTask {
        complete(completion) { try await self.signUp(issuer: issuer, username: username, profile: profile) }
    }

    @discardableResult
    public func recover(issuer: URL, username: String, completion: @escaping Completion<Credential>) -> EmbeddedTask {
        complete(completion) { try await self.recover(issuer: issuer, username: username) }
    }
}
