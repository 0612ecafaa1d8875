import Foundation
@testable import Latchkey

/// Bind and authenticate URL classification and parsing, both forms.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    guard let url = URL(string: text) else { return 0 }
    for kind in [ProviderLink.Kind.bind, .authenticate] {
        if let link = try? ProviderLink.parse(url, as: kind) {
            precondition(ProviderLink.isSafe(link.identifier), "an unsafe identifier was accepted")
            _ = try? link.endpoint
        }
    }
    _ = Embedded.provider(of: url)
    _ = AllowedDomains(["example.com", "127.0.0.1"]).allows(url.host ?? "")
    return 0
}
