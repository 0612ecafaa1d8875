import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyWebAuthn

/// Device linking by code (docs/PROTOCOL.md section 5). The exporter's and the importer's
/// calls carry their own random token (`?token=`), which the provider keeps hashed.
enum TransferRoutes {
    static func add(to router: Router<ProviderRequestContext>, provider: Provider) {
        // Exporter: start, proving possession of a credential.
        router.post("v1/transfers") { request, _ in
            let object = try jsonObject(await HTTPSupport.body(request))
            guard let text = object["credential"] as? String, let credentialID = try? Base64URL.decode(text) else {
                throw ProviderError.badRequest("invalid_request", "a JSON body with the exporting credential's id is required")
            }
            let (id, options) = try await provider.transfers.begin(credentialID: credentialID)
            let submit = provider.context.url("v1/transfers/\(id)/open").absoluteString
            return try HTTPSupport.json(encodable: options, wrapping: "publicKey", extra: ["transfer": id, "submit": submit])
        }
        router.post("v1/transfers/:transfer/open") { request, context in
            let id = try context.parameters.require("transfer")
            let response = try await assertion(request)
            let (token, code, expiresAt) = try await provider.transfers.open(id, response: response)
            return HTTPSupport.json([
                "transfer": id, "code": code, "codeExpiresAt": Int(expiresAt.timeIntervalSince1970),
                "status": provider.context.url("v1/transfers/\(id)", token: token),
                "cancel": provider.context.url("v1/transfers/\(id)/cancel", token: token),
            ], status: .created)
        }
        router.get("v1/transfers/:transfer") { request, context in
            let id = try context.parameters.require("transfer")
            let token = try token(request)
            switch try await provider.transfers.exporterStatus(id, token: token) {
            case .waiting(let code, let expiresAt):
                return HTTPSupport.json(["state": "waiting", "code": code, "codeExpiresAt": Int(expiresAt.timeIntervalSince1970)])
            case .redeemed:
                return HTTPSupport.json(["state": "redeemed"])
            case .importRequested(let pending, let options):
                return try HTTPSupport.json(encodable: options, wrapping: "publicKey", extra: [
                    "state": "import-requested",
                    "importer": [
                        "deviceName": pending.deviceName, "credentialID": Base64URL.encode(pending.record.id),
                        "publicKey": pending.jwk, "thumbprint": pending.thumbprint, "nonce": Base64URL.encode(pending.nonce),
                    ] as [String: Any],
                    "approve": provider.context.url("v1/transfers/\(id)/approve", token: token),
                    "decline": provider.context.url("v1/transfers/\(id)/decline", token: token),
                ])
            case .ended(let final):
                return HTTPSupport.json(["state": final.rawValue])
            }
        }
        router.post("v1/transfers/:transfer/approve") { request, context in
            let id = try context.parameters.require("transfer")
            let bound = try await provider.transfers.approve(id, token: try token(request), response: try await assertion(request))
            context.logger.info("transfer approved", metadata: ["credential": .string(String(Base64URL.encode(bound).prefix(8)))])
            return HTTPSupport.json(["state": "completed", "credential": ["id": Base64URL.encode(bound)]])
        }
        router.post("v1/transfers/:transfer/decline") { request, context in
            try await provider.transfers.end(try context.parameters.require("transfer"), token: try token(request), as: .declined)
            return HTTPSupport.json(["state": "declined"])
        }
        router.post("v1/transfers/:transfer/cancel") { request, context in
            try await provider.transfers.end(try context.parameters.require("transfer"), token: try token(request), as: .cancelled)
            return HTTPSupport.json(["state": "cancelled"])
        }

        // Importer: redeem the code, register, wait.
        router.post("v1/transfers/redeem") { request, context in
            let object = try jsonObject(await HTTPSupport.body(request))
            guard let code = object["code"] as? String else {
                throw ProviderError.badRequest("invalid_request", "a JSON body with the code is required")
            }
            let (id, token, options) = try await provider.transfers.redeem(code: code, clientAddress: context.clientAddress)
            return try HTTPSupport.json(encodable: options, wrapping: "publicKey", extra: [
                "transfer": id, "submit": provider.context.url("v1/transfers/\(id)/import", token: token),
            ])
        }
        router.post("v1/transfers/:transfer/import") { request, context in
            let id = try context.parameters.require("transfer")
            let token = try token(request)
            let object = try jsonObject(await HTTPSupport.body(request))
            guard let deviceName = object["deviceName"] as? String, let registrationObject = object["registration"] as? [String: Any],
                  let registration = try? RegistrationResponseJSON(json: JSONSerialization.data(withJSONObject: registrationObject))
            else {
                throw ProviderError.badRequest("invalid_request", "a JSON body with registration (a RegistrationResponseJSON) and deviceName is required")
            }
            try await provider.transfers.submitImport(id, token: token, registration: registration, deviceName: deviceName)
            return HTTPSupport.json(["state": "import-requested", "status": provider.context.url("v1/transfers/\(id)/import", token: token)], status: .accepted)
        }
        router.get("v1/transfers/:transfer/import") { request, context in
            let (final, bound) = try await provider.transfers.importerStatus(try context.parameters.require("transfer"), token: try token(request))
            var answer: [String: Any] = ["state": final.rawValue]
            if let bound { answer["credential"] = ["id": Base64URL.encode(bound)] }
            return HTTPSupport.json(answer)
        }
    }

    static func jsonObject(_ body: Data) throws -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else {
            throw ProviderError.badRequest("invalid_request", "the body is not a JSON object")
        }
        return object
    }

    static func assertion(_ request: Request) async throws -> AuthenticationResponseJSON {
        do {
            return try AuthenticationResponseJSON(json: try await HTTPSupport.body(request))
        } catch let error as ProviderError {
            throw error
        } catch {
            throw ProviderError.badRequest("invalid_request", "body is not an AuthenticationResponseJSON")
        }
    }

    static func token(_ request: Request) throws -> String {
        guard let token = try HTTPSupport.query(request)["token"], !token.isEmpty, token.utf8.count <= 256 else {
            throw ProviderError.badRequest("invalid_request", "token missing")
        }
        return token
    }
}
