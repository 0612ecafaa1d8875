import Foundation
import LatchkeyWebAuthn

/// The CBOR decoder: any bytes decode or throw WebAuthnError; what decodes re-encodes
/// canonically, and the canonical form is a fixed point (decoding it and encoding again
/// gives the same bytes).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    do {
        let canonical = try CBOR.decode(data).encoded()
        let again = try CBOR.decode(canonical).encoded()
        precondition(again == canonical, "the canonical encoding is not a fixed point")
    } catch is WebAuthnError {
    } catch {
        preconditionFailure("untyped error \(error)")
    }
    _ = try? CBOR.decodePrefix(data)
    return 0
}
