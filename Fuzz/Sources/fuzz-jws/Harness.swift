import Foundation
import LatchkeyCrypto
import LatchkeyOAuth

/// JWS compact parsing and verification, and ID-token validation, with a fresh key per
/// input: nothing may verify (the harness never signs), crash or hang. (The key is not a
/// global: Swift's tagged pointers in long-lived globals look like leaks to
/// LeakSanitizer.)
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    guard let key = try? SigningKey.generate(.es256) else { return 0 }
    if let jws = try? JWS(compact: text) {
        precondition((try? jws.verify(with: key.publicKey)) == nil, "an unsigned input verified")
    }
    let validator = IDTokenValidator(issuer: "https://id.example.com", clientID: "client")
    let keys = JWKSet(keys: [JWKSet.Key(keyID: nil, algorithm: "ES256", verifyingKey: key.publicKey)])
    let expectations = IDTokenValidator.Expectations(nonce: nil)
    precondition((try? validator.validate(text, expectations: expectations, keys: keys)) == nil, "an unsigned ID token validated")
    return 0
}
