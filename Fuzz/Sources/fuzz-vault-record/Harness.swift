import Foundation
@testable import LatchkeyCrypto

/// Vault record and header decoding: a damaged file is a KeyVaultError naming the handle,
/// never a crash (and, with no valid MAC, never a record). The keys are made per input:
/// Swift's tagged pointers in long-lived globals look like leaks to LeakSanitizer.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    if let keys = try? VaultKeys(root: SymmetricKey(data: Data(repeating: 7, count: 32))),
       let handle = KeyHandle(rawValue: String(repeating: "a", count: 32)) {
        do {
            _ = try VaultRecord.open(data, expectedHandle: handle, keys: keys)
            preconditionFailure("a record without a valid MAC opened")
        } catch is KeyVaultError {
        } catch {
            preconditionFailure("untyped error \(error)")
        }
    }
    _ = try? VaultHeader.decode(data, path: "fuzz")
    _ = try? FlatJSONObject(parsing: data)
    return 0
}
