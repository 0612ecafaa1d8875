import Foundation
@testable import LatchkeyIdP

/// The reference provider's request-body parsers: forms and query strings (RFC 6749
/// §4.1.1, §4.1.3), the JSON bodies of the bind, transfer, sign-up and recovery
/// endpoints, and the username rules (normalisation, scripts, look-alike skeletons).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    let text = String(decoding: data, as: UTF8.self)
    _ = try? HTTPSupport.form(parsing: text)
    if let name = try? Username.validated(text) {
        _ = Username.skeleton(name)
    }
    _ = try? TransferRoutes.jsonObject(data)
    _ = try? EnrollmentRoutes.username(data)
    _ = try? EnrollmentRoutes.code(data)
    return 0
}
