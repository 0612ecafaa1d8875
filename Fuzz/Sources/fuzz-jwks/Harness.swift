import Foundation
@testable import LatchkeyOAuth

/// JWKS documents (RFC 7517 §5) and discovery documents: parsed or refused, never a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    _ = try? JWKSet(json: Data(bytes: bytes, count: count))
    if let issuer = URL(string: "https://id.example.com") {
        _ = try? ProviderMetadata.parse(Data(bytes: bytes, count: count), issuer: issuer)
    }
    return 0
}
