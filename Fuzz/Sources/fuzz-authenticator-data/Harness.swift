import Foundation
import LatchkeyWebAuthn

/// authenticatorData and attestationObject parsing (WebAuthn §6.1, §6.5).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    for parse in [{ _ = try AuthenticatorData(bytes: data) }, { _ = try AttestationObject(encoded: data) }, { _ = try COSEKey(encoded: data) }] {
        do {
            try parse()
        } catch is WebAuthnError {
        } catch {
            preconditionFailure("untyped error \(error)")
        }
    }
    return 0
}
