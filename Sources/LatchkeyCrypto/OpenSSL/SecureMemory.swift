import CLatchkeyOpenSSL
import Glibc
import Synchronization

/// Keeps the secrets a long-lived process holds (a key agent's vault keys and unsealed
/// private keys) out of swap, where they would outlive the process on disk: mlock(2) for
/// the vault's keys (``SymmetricKey``), and OpenSSL's secure heap (CRYPTO_secure_malloc(3):
/// a locked arena where OpenSSL keeps private key numbers). Both are best effort: a
/// process whose `RLIMIT_MEMLOCK` is too small keeps working, unlocked, and says so.
/// Wiping does not depend on it: every secret is cleansed when freed either way.
public enum SecureMemory {
    /// The size of OpenSSL's secure arena: room for hundreds of P-256 and Ed25519 keys.
    static let secureHeapSize = 256 * 1024

    /// Turns locking on for the secrets made from now on. Call it once, before the vault is
    /// opened. Returns whether both kinds of memory are locked, and if not, why.
    public static func lockSecrets() -> (locked: Bool, note: String) {
        SecureBytes.locksPages.store(true, ordering: .relaxed)
        // A page locked and freed again tells whether the limit allows it.
        let pagesLocked = SecureBytes(copying: [0]).isPinned
        let heap = CRYPTO_secure_malloc_initialized() == 1 ? 1 : CRYPTO_secure_malloc_init(secureHeapSize, 32)
        switch (pagesLocked, heap) {
        case (true, 1):
            return (true, "vault keys and OpenSSL's secure heap are locked in memory")
        case (_, 0):
            return (false, "OpenSSL's secure heap could not be made; private keys live in ordinary memory")
        default:
            return (false, "mlock was refused (RLIMIT_MEMLOCK, see ulimit -l): secrets are wiped after use but may be swapped out meanwhile")
        }
    }
}
