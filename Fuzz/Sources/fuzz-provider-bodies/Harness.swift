import Foundation
@testable import LatchkeyIdP

/// The reference provider's request-body parsers: forms (RFC 6749 §4.1.3) and the JSON
/// bodies of the bind, transfer, sign-up and recovery endpoints.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    _ = try? HTTPSupport.form(parsing: String(decoding: data, as: UTF8.self))
    _ = try? TransferRoutes.jsonObject(data)
    _ = try? EnrollmentRoutes.username(data)
    _ = try? EnrollmentRoutes.code(data)
    return 0
}
