#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn
import Logging

/// One flow's exchange with one identity provider: JSON requests over the app's
/// ``HTTPTransport``, every reply parsed as hostile, and the generic step engine of
/// docs/PROTOCOL.md section 4.
///
/// Every URL a reply names (`submit`, `authenticateURL`) must be on the provider's own
/// origin, so a hostile or compromised answer cannot redirect an assertion or a code to
/// another host.
struct ProviderConversation: Sendable {
    let flow: FlowContext
    let provider: ProviderAddress
    let transport: any HTTPTransport

    /// Most steps one request may chain before the flow gives up, and most answers one
    /// step may be refused: real policies need a handful; a loop means a broken provider.
    static let maximumSteps = 16
    static let maximumAttempts = 16

    /// A successful (2xx) reply: a JSON object that is either a step (docs/PROTOCOL.md
    /// section 4) or the answer the request waits for, read with ``decode(_:_:)``.
    struct Reply: Sendable {
        var status: Int
        var body: Data
        var step: Step?

        /// The body as the awaited message; `what` names it in the error.
        func decode<T: Decodable>(_ type: T.Type, _ what: String) throws -> T {
            do {
                return try JSONDecoder().decode(type, from: body)
            } catch {
                throw LatchkeyError.malformedResponse(reason: "the provider's \(what) is malformed", underlying: error)
            }
        }
    }

    /// A string a reply names, bounded and not empty.
    static func bounded(_ text: String, _ name: String, maximumLength: Int = ProviderAddress.maximumURLLength) throws -> String {
        guard !text.isEmpty, text.utf8.count <= maximumLength else {
            throw LatchkeyError.malformedResponse(reason: "the provider's answer lacks a usable \"\(name)\"")
        }
        return text
    }

    // MARK: Requests

    func get(_ url: URL) async throws -> Reply {
        try await send(HTTPMethod.get, url, body: nil)
    }

    func post(_ url: URL, _ message: some Encodable) async throws -> Reply {
        let body: Data
        do {
            body = try JSONEncoder().encode(message)
        } catch {
            throw LatchkeyError.invalidArgument(reason: "the request to \(url.path) cannot be encoded", underlying: error)
        }
        return try await send(HTTPMethod.post, url, body: body)
    }

    /// A WebAuthn response, in its own strict L3 JSON form.
    func post(_ url: URL, response: some WebAuthnResponseJSON) async throws -> Reply {
        try await send(HTTPMethod.post, url, body: response.json())
    }

    /// A URL named in a reply, which must be on the provider's origin.
    func url(_ text: String, named name: String) throws -> URL {
        guard text.utf8.count <= ProviderAddress.maximumURLLength, let url = URL(string: text), provider.owns(url) else {
            throw LatchkeyError.malformedResponse(reason: "the provider's \"\(name)\" points outside \(provider.origin); the flow was stopped before anything was sent there"
            )
        }
        return url
    }

    private func send(_ method: String, _ url: URL, body: Data?) async throws -> Reply {
        guard provider.owns(url) else {
            throw LatchkeyError.domainNotAllowed(reason: "\(url.host ?? "a URL") is not the provider \(provider.origin)")
        }
        try Task.checkCancellation()
        var headers = ["Accept": ProtocolPath.jsonMediaType]
        if body != nil { headers["Content-Type"] = ProtocolPath.jsonMediaType }
        let response: TransportResponse
        do {
            response = try await transport.send(TransportRequest(method: method, url: url, headers: headers, body: body))
        } catch let error as OAuthError {
            throw LatchkeyError(error)
        }
        flow.logger.debug("provider answered", metadata: ["method": .string(method), "requestPath": .string(url.path), "httpStatus": .stringConvertible(response.status)])
        guard (200..<300).contains(response.status) else {
            throw Self.providerError(status: response.status, answer: try? JSONDecoder().decode(ErrorResponse.self, from: response.body))
        }
        // Every answer is an object, and any may be a step: a `step` member that does not
        // parse is a malformed answer, not an absent step.
        let envelope: StepReply
        do {
            envelope = try JSONDecoder().decode(StepReply.self, from: response.body)
        } catch let error as DecodingError {
            switch error {
            case .typeMismatch(_, let context) where context.codingPath.isEmpty, .dataCorrupted(let context) where context.codingPath.isEmpty:
                throw LatchkeyError.malformedResponse(reason: "the provider's answer to \(url.path) is not a JSON object", underlying: error)
            default:
                throw LatchkeyError.malformedResponse(reason: "the provider sent a malformed step", underlying: error)
            }
        } catch {
            throw LatchkeyError.malformedResponse(reason: "the provider sent a malformed step", underlying: error)
        }
        return Reply(status: response.status, body: response.body, step: envelope.step)
    }

    /// An error answer (RFC 6749 §5.2 shape) as a ``LatchkeyError``, with a hint for the user.
    static func providerError(status: Int, answer: ErrorResponse?) -> LatchkeyError {
        let code = answer?.error.map { ErrorCode(rawValue: $0.rawValue.displaySafe(maximumLength: 64)) }
        let description = answer?.errorDescription.map { $0.displaySafe(maximumLength: 512) }
        let providerError = code.map { OAuthError.ProviderError(error: $0, description: description) }
        let said = description ?? code?.rawValue ?? "HTTP \(status)"
        switch code {
        case .credentialRevoked?:
            return LatchkeyError.credentialRevoked(reason: "the provider revoked this credential (\(said)); delete it and bind a new one",
                providerError: providerError
            )
        case .invalidGrant?, .notFound?:
            return LatchkeyError.providerError(reason: "the provider refused: \(said); the link or session may have expired or been used, so ask for a new one",
                providerError: providerError
            )
        case .temporarilyUnavailable?, .slowDown?:
            return LatchkeyError.providerError(reason: "the provider is busy (\(said)); try again shortly", providerError: providerError)
        default:
            return LatchkeyError.providerError(reason: "the provider refused: \(said)", providerError: providerError)
        }
    }

    // MARK: Steps

    /// Answers the steps in `reply` until the provider sends what the flow asked for.
    /// Known steps go to the step handler; a wrong answer (`invalid_code`) asks again.
    ///
    /// `known` holds field values the caller already has (a sign-up's profile): a step
    /// whose required fields are all known is answered without asking; otherwise the
    /// handler sees them in ``FlowStep/values`` and supplies the rest.
    func settle(_ reply: Reply, known: [String: String] = [:]) async throws -> Reply {
        var reply = reply
        var rounds = 0
        while let sent = reply.step {
            rounds += 1
            guard rounds <= Self.maximumSteps else {
                throw LatchkeyError.malformedResponse(reason: "the provider asked for more than \(Self.maximumSteps) steps")
            }
            let (step, submit) = try parseStep(sent)
            flow.emit(.stepRequested(step.name))
            guard FlowStep.Name.fromProvider.contains(step.name) else {
                throw LatchkeyError.stepUnsupported(reason: "the provider asks for a step this app does not support: \"\(step.name)\"\(step.message.map { " (\($0))" } ?? ""); update the app or ask the provider's administrator",
                    step: step.name.rawValue
                )
            }
            reply = try await answer(step, submit: submit, known: known)
        }
        return reply
    }

    private func answer(_ step: FlowStep, submit: URL, known: [String: String]) async throws -> Reply {
        var step = step
        let names = Set(step.fields.map(\.name))
        step.values = known.filter { names.contains($0.key) }
        while true {
            let answer: StepAnswer
            if step.attempt == 1, !step.fields.isEmpty, step.fields.allSatisfy({ !$0.required || step.values[$0.name] != nil }) {
                answer = StepAnswer(fields: step.values)
            } else {
                let given = try await flow.ask(step)
                answer = StepAnswer(fields: step.values.merging(given.fields) { $1 })
            }
            var submitted: [String: String] = [:]
            for field in step.fields {
                guard let value = answer.fields[field.name] else {
                    if field.required {
                        throw LatchkeyError.invalidStepAnswer(reason: "the answer to \"\(step.name)\" lacks \(field.name)", step: step.name.rawValue)
                    }
                    continue
                }
                guard value.utf8.count <= 1024 else {
                    throw LatchkeyError.invalidStepAnswer(reason: "the answer to \"\(step.name)\" has an over-long \(field.name)", step: step.name.rawValue)
                }
                submitted[field.name] = value
            }
            flow.emit(.stepAnswered(step.name))
            do {
                return try await post(submit, StepSubmission(submitted))
            } catch let error as LatchkeyError where error.providerError?.error == .invalidCode {
                guard step.attempt < Self.maximumAttempts else { throw error }
                step.attempt += 1
                step.previousError = error.providerError?.errorDescription ?? "the answer was refused"
                flow.logger.debug("step answer refused", metadata: ["step": .string(step.name.rawValue), "attempt": .stringConvertible(step.attempt)])
            }
        }
    }

    /// `{name, submit, message, fields}`, bounded and checked: names are URL-safe words,
    /// texts are made safe to display.
    private func parseStep(_ sent: Step) throws -> (FlowStep, URL) {
        let name = sent.name.rawValue
        guard ProviderLink.isSafe(name), name.utf8.count <= 64 else {
            throw LatchkeyError.malformedResponse(reason: "the provider sent a step without a usable name")
        }
        let message = sent.message.map { $0.displaySafe(maximumLength: 1024) }
        guard sent.fields.count <= 16 else {
            throw LatchkeyError.malformedResponse(reason: "the step \"\(name)\" has too many fields")
        }
        let fields = try sent.fields.map { field -> FlowStep.Field in
            guard ProviderLink.isSafe(field.name.rawValue), field.name.rawValue.utf8.count <= 64 else {
                throw LatchkeyError.malformedResponse(reason: "the step \"\(name)\" has a malformed field")
            }
            return FlowStep.Field(name: field.name.rawValue, required: field.required, kind: field.kind.map { $0.displaySafe(maximumLength: 64) })
        }
        return (FlowStep(name: FlowStep.Name(name), message: message, fields: fields), try url(sent.submit, named: "submit"))
    }
}
