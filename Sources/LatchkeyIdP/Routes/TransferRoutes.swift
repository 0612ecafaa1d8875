import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyWebAuthn
import Logging
import LatchkeyOAuth

/// Device linking by code (docs/PROTOCOL.md section 5). The exporter's and the importer's
/// calls carry their own random token (`?token=`), which the provider keeps hashed.
enum TransferRoutes {
    static func add(to router: RouterGroup<ProviderRequestContext>, provider: Provider) {
        // Exporter: start, proving possession of a credential.
        router.post(RouterPath(ProtocolPath.transfers)) { request, _ in
            let begin = try await HTTPSupport.decode(ExportExchange.Begin.self, from: request, expected: "a JSON object with the exporting credential's id")
            guard let credentialID = try? Base64URL.decode(begin.credential) else {
                throw ProviderError.badRequest(.invalidRequest, "a JSON body with the exporting credential's id is required")
            }
            let (id, ticket, options) = try await provider.transfers.begin(credentialID: credentialID)
            let submit = provider.context.url("\(ProtocolPath.transfers)/\(id)/open", token: ticket)
            return HTTPSupport.json(ExportExchange.Challenge(transfer: id, publicKey: options, submit: submit), status: .created)
        }
        router.post("v1/transfers/:transfer/open") { request, context in
            let id = try context.parameters.require("transfer")
            let ticket = try HTTPSupport.capabilityToken(request, maximumLength: TicketSealer.maximumLength)
            let response = try await assertion(request)
            let (token, code, expiresAt) = try await provider.transfers.open(id, ticket: ticket, response: response)
            return HTTPSupport.json(ExportExchange.Opened(
                transfer: id, code: code, codeExpiresAt: Int(expiresAt.timeIntervalSince1970),
                status: provider.context.url("\(ProtocolPath.transfers)/\(id)", token: token),
                cancel: provider.context.url("\(ProtocolPath.transfers)/\(id)/cancel", token: token)
            ), status: .created)
        }
        router.get("v1/transfers/:transfer") { request, context in
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
        router.post("v1/transfers/:transfer/approve") { request, context in
            let id = try context.parameters.require("transfer")
            let bound = try await provider.transfers.approve(id, token: try HTTPSupport.capabilityToken(request), response: try await assertion(request))
            context.logger.info("transfer approved", metadata: ["credential": .string(String(Base64URL.encode(bound).prefix(8)))])
            return HTTPSupport.json(TransferOutcome(state: .completed, credential: CredentialReference(id: Base64URL.encode(bound))))
        }
        router.post("v1/transfers/:transfer/decline") { request, context in
            try await provider.transfers.end(try context.parameters.require("transfer"), token: try HTTPSupport.capabilityToken(request), as: .declined)
            return HTTPSupport.json(TransferOutcome(state: .declined))
        }
        router.post("v1/transfers/:transfer/cancel") { request, context in
            try await provider.transfers.end(try context.parameters.require("transfer"), token: try HTTPSupport.capabilityToken(request), as: .cancelled)
            return HTTPSupport.json(TransferOutcome(state: .cancelled))
        }

        // Importer: redeem the code, register, wait.
        router.post(RouterPath(ProtocolPath.transferRedemption)) { request, context in
            let redeem = try await HTTPSupport.decode(ImportExchange.Redeem.self, from: request, expected: "a JSON object with the code")
            let (id, token, options) = try await provider.transfers.redeem(code: redeem.code, clientKey: context.limitKey)
            return HTTPSupport.json(ImportExchange.Challenge(
                transfer: id, publicKey: options, submit: provider.context.url("\(ProtocolPath.transfers)/\(id)/import", token: token)
            ))
        }
        router.post("v1/transfers/:transfer/import") { request, context in
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
        router.get("v1/transfers/:transfer/import") { request, context in
            let (final, bound) = try await provider.transfers.importerStatus(try context.parameters.require("transfer"), token: try HTTPSupport.capabilityToken(request))
            return HTTPSupport.json(TransferOutcome(state: final.protocolState, credential: bound.map { CredentialReference(id: Base64URL.encode($0)) }))
        }
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
