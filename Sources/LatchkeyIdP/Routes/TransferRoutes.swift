import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyWebAuthn
import Logging
import LatchkeyOAuth

/// Device linking by code (docs/PROTOCOL.md section 5). The exporter's and the importer's
/// calls carry their own random token (`?token=`), which the provider keeps hashed.
struct TransferRoutes: Sendable {
    let provider: Provider

    func add(to router: RouterGroup<ProviderRequestContext>) {
        // Exporter: start, prove possession of a credential, see the code and the importer,
        // approve or decline, cancel.
        router.post(RouterPath(ProtocolPath.transfers), use: begin)
        router.post("v1/transfers/:transfer/open", use: open)
        router.get("v1/transfers/:transfer", use: exporterStatus)
        router.post("v1/transfers/:transfer/approve", use: approve)
        router.post("v1/transfers/:transfer/decline", use: decline)
        router.post("v1/transfers/:transfer/cancel", use: cancel)
        // Importer: redeem the code, register, wait.
        router.post(RouterPath(ProtocolPath.transferRedemption), use: redeem)
        router.post("v1/transfers/:transfer/import", use: submitImport)
        router.get("v1/transfers/:transfer/import", use: importerStatus)
    }

    @Sendable func begin(_ request: Request, context: ProviderRequestContext) async throws -> Response {
        let begin = try await HTTPSupport.decode(ExportExchange.Begin.self, from: request, expected: "a JSON object with the exporting credential's id")
        guard let credentialID = try? Base64URL.decode(begin.credential) else {
            throw ProviderError.badRequest(.invalidRequest, "a JSON body with the exporting credential's id is required")
        }
        let (id, ticket, options) = try await provider.transfers.begin(credentialID: credentialID)
        let submit = provider.context.url("\(ProtocolPath.transfers)/\(id)/open", token: ticket)
        return HTTPSupport.json(ExportExchange.Challenge(transfer: id, publicKey: options, submit: submit), status: .created)
    }

    @Sendable func open(_ request: Request, context: ProviderRequestContext) async throws -> Response {
        let id = try context.parameters.require("transfer")
        let ticket = try HTTPSupport.capabilityToken(request, maximumLength: TicketSealer.maximumLength)
        let response = try await Self.assertion(request)
        let (token, code, expiresAt) = try await provider.transfers.open(id, ticket: ticket, response: response)
        return HTTPSupport.json(ExportExchange.Opened(
            transfer: id, code: code, codeExpiresAt: Int(expiresAt.timeIntervalSince1970),
            status: provider.context.url("\(ProtocolPath.transfers)/\(id)", token: token),
            cancel: provider.context.url("\(ProtocolPath.transfers)/\(id)/cancel", token: token)
        ), status: .created)
    }

    @Sendable func exporterStatus(_ request: Request, context: ProviderRequestContext) async throws -> Response {
        let id = try context.parameters.require("transfer")
        let token = try HTTPSupport.capabilityToken(request)
        switch try await provider.transfers.exporterStatus(id, token: token) {
        case .waiting(let code, let expiresAt):
            return HTTPSupport.json(ExportExchange.Status(state: .waiting, code: code, codeExpiresAt: Int(expiresAt.timeIntervalSince1970)))
        case .redeemed:
            return HTTPSupport.json(ExportExchange.Status(state: .redeemed))
        case .importRequested(let pending, let options):
            return HTTPSupport.json(ExportExchange.Status(
                state: .importRequested,
                importer: ExportExchange.Importer(
                    deviceName: pending.deviceName, credentialID: Base64URL.encode(pending.record.id),
                    publicKey: pending.jwk, thumbprint: pending.thumbprint, nonce: Base64URL.encode(pending.nonce)
                ),
                publicKey: options,
                approve: provider.context.url("\(ProtocolPath.transfers)/\(id)/approve", token: token),
                decline: provider.context.url("\(ProtocolPath.transfers)/\(id)/decline", token: token)
            ))
        case .ended(let final):
            return HTTPSupport.json(ExportExchange.Status(state: final.protocolState))
        }
    }

    @Sendable func approve(_ request: Request, context: ProviderRequestContext) async throws -> Response {
        let id = try context.parameters.require("transfer")
        let bound = try await provider.transfers.approve(id, token: try HTTPSupport.capabilityToken(request), response: try await Self.assertion(request))
        context.logger.info("transfer approved", metadata: ["credential": .string(String(Base64URL.encode(bound).prefix(8)))])
        return HTTPSupport.json(TransferOutcome(state: .completed, credential: CredentialReference(id: Base64URL.encode(bound))))
    }

    @Sendable func decline(_ request: Request, context: ProviderRequestContext) async throws -> Response {
        try await provider.transfers.end(try context.parameters.require("transfer"), token: try HTTPSupport.capabilityToken(request), as: .declined)
        return HTTPSupport.json(TransferOutcome(state: .declined))
    }

    @Sendable func cancel(_ request: Request, context: ProviderRequestContext) async throws -> Response {
        try await provider.transfers.end(try context.parameters.require("transfer"), token: try HTTPSupport.capabilityToken(request), as: .cancelled)
        return HTTPSupport.json(TransferOutcome(state: .cancelled))
    }

    @Sendable func redeem(_ request: Request, context: ProviderRequestContext) async throws -> Response {
        let redeem = try await HTTPSupport.decode(ImportExchange.Redeem.self, from: request, expected: "a JSON object with the code")
        let (id, token, options) = try await provider.transfers.redeem(code: redeem.code, clientKey: context.limitKey)
        return HTTPSupport.json(ImportExchange.Challenge(
            transfer: id, publicKey: options, submit: provider.context.url("\(ProtocolPath.transfers)/\(id)/import", token: token)
        ))
    }

    @Sendable func submitImport(_ request: Request, context: ProviderRequestContext) async throws -> Response {
        let id = try context.parameters.require("transfer")
        let token = try HTTPSupport.capabilityToken(request)
        let submission = try await HTTPSupport.decode(
            ImportExchange.Submission.self, from: request,
            expected: "a JSON object with registration (a RegistrationResponseJSON) and deviceName"
        )
        try await provider.transfers.submitImport(id, token: token, registration: submission.registration, deviceName: submission.deviceName)
        return HTTPSupport.json(
            ImportExchange.Accepted(state: .importRequested, status: provider.context.url("\(ProtocolPath.transfers)/\(id)/import", token: token)),
            status: .accepted
        )
    }

    @Sendable func importerStatus(_ request: Request, context: ProviderRequestContext) async throws -> Response {
        let (final, bound) = try await provider.transfers.importerStatus(try context.parameters.require("transfer"), token: try HTTPSupport.capabilityToken(request))
        return HTTPSupport.json(TransferOutcome(state: final.protocolState, credential: bound.map { CredentialReference(id: Base64URL.encode($0)) }))
    }

    static func assertion(_ request: Request) async throws -> AuthenticationResponseJSON {
        do {
            return try AuthenticationResponseJSON(json: try await HTTPSupport.body(request))
        } catch let error as ProviderError {
            throw error
        } catch {
            throw ProviderError.badRequest(.invalidRequest, "body is not an AuthenticationResponseJSON", underlying: error)
        }
    }
}
