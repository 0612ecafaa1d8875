import CLatchkeyOpenSSL

/// Keeps secrets held in this process's memory (vault keys, passphrases, private keys)
/// out of core files and away from other processes: it sets `RLIMIT_CORE` to 0 and makes
/// the process non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`, prctl(2)). A non-dumpable
/// process writes no core file, and processes of other users cannot ptrace it or read its
/// `/proc/<pid>/mem`. Lives beside the OpenSSL calls because prctl, being variadic, is
/// reached through the package's one C header (docs/SECURITY.md, "The vault").
///
/// The `latchkey` command calls this at start; a library user opts in with
/// `Embedded.Configuration.disablesCoreDumps` or calls it directly.
public enum ProcessProtection {
    /// Disables core dumps for the rest of the process's life. Idempotent.
    public static func disableCoreDumps() throws {
        let failure = CLatchkey_disable_core_dumps()
        guard failure == 0 else {
            throw CryptoError.processProtection(reason: "could not disable core dumps (errno \(failure))")
        }
    }
}
