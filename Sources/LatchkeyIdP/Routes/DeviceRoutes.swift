import Foundation
import Hummingbird
import LatchkeyOAuth
import LatchkeyProtocol
import Logging

/// The device authorization grant (RFC 8628): the device authorization endpoint (§3.1),
/// and the approval exchange a person's passkey answers (docs/PROTOCOL.md section 7).
/// `GET /device` (the `verification_uri`) is the approval page in a browser (section 9)
/// and, to anything else, says in words how to approve from the command line.
enum DeviceRoutes {
    static func add(to router: RouterGroup<ProviderRequestContext>, provider: Provider) {
        router.post(RouterPath(ProtocolPath.deviceAuthorization)) { request, context in
            let form = try await HTTPSupport.form(request)
            // RFC 8628 §3.1: a client that can authenticate does, as at the token endpoint.
            let client = try await provider.clientAuthenticator.authenticate(
                ClientAuthenticationParameters(form: form), endpoint: provider.context.url(ProtocolPath.deviceAuthorization)
            )
            let answer = try await provider.devices.start(
                DeviceAuthorizationRequest(form: form), client: client, requester: context.clientAddress, requesterKey: context.limitKey
            )
            context.logger.info("device authorization started", metadata: ["client": .string(client.id)])
            return HTTPSupport.json(answer)
        }
        router.get(RouterPath(ProtocolPath.deviceVerification)) { request, context in
            if PageRoutes.wantsPage(request) {
                return await ErrorPage.rendering(provider.context, logger: context.logger) {
                    try DeviceApprovalPage.page(userCode: try HTTPSupport.query(request)[DeviceAuthorizationResponse.userCodeParameter], context: provider.context)
                }
            }
            return HTTPSupport.json(data: Data(#"{"message":"Approve this sign-in with: latchkey approve USER_CODE --issuer ISSUER"}"#.utf8))
        }
        router.post(RouterPath(ProtocolPath.deviceApproval)) { request, context in
            try PageTicket.check(request, .device, binding: "", context: provider.context)
            let lookup = try await HTTPSupport.decode(DeviceApprovalExchange.Lookup.self, from: request, expected: "{\"userCode\": …}")
            return HTTPSupport.json(try await provider.devices.lookup(userCode: lookup.userCode, requesterKey: context.limitKey))
        }
        router.post(RouterPath("\(ProtocolPath.deviceApproval)/:session")) { request, context in
            let session = try context.parameters.require("session")
            try PageTicket.check(request, .device, binding: "", context: provider.context)
            let decision = try await HTTPSupport.decode(DeviceApprovalExchange.Decision.self, from: request, expected: "a DeviceApprovalExchange.Decision")
            try await provider.devices.decide(session: session, decision)
            context.logger.info("device sign-in decided", metadata: ["decision": .string(decision.decision.rawValue)])
            return HTTPSupport.json(DeviceApprovalExchange.Decided(decision: decision.decision))
        }
    }
}
