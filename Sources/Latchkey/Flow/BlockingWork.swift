#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Glibc

/// Work that blocks its thread, run on a thread of its own: TPM commands take tens of
/// milliseconds to seconds on a hardware TPM (an RSA endorsement key is derived anew for
/// each credential activation), and wait while another caller has the TPM. On one of the
/// few threads of Swift's cooperative pool (two on a two-core host), that wait would
/// stall every other task of the application meanwhile.
enum BlockingWork {
    static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let started = DetachedThread.start { continuation.resume(with: Result { try work() }) }
            if !started { continuation.resume(throwing: LatchkeyError.tpmUnavailable(reason: "no thread to wait for the TPM on")) }
        }
    }
}
