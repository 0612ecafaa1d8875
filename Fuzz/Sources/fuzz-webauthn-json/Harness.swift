import Foundation
import LatchkeyWebAuthn

/// The Level 3 JSON forms: creation and request options, registration and authentication
/// responses, and client data.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    _ = try? PublicKeyCredentialCreationOptionsJSON(json: data)
    _ = try? PublicKeyCredentialRequestOptionsJSON(json: data)
    if let registration = try? RegistrationResponseJSON(json: data) {
        _ = try? registration.json()
    }
    if let assertion = try? AuthenticationResponseJSON(json: data) {
        _ = try? assertion.json()
    }
    _ = try? CollectedClientData(json: data)
    return 0
}
