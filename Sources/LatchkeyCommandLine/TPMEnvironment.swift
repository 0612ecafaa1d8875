#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import LatchkeyCrypto

/// The TPM settings the command gives the TSS when the user gave none. OpenSSL's tpm2
/// provider reads them from the environment only, when it first connects, so they are set
/// here, first thing in `main`, before any other thread exists (a `setenv` racing a thread
/// that reads the environment is undefined behaviour).
enum TPMEnvironment {
    /// `arguments`: the command line, for `pam helper` and `pam test`, whose TPM is the one
    /// their configuration names (``PAMConfiguration/tpmLocation(forArguments:)``): the
    /// module gives the helper an environment of its own, so no caller's
    /// `TPM2OPENSSL_TCTI` reaches it.
    static func setDefaults(arguments: [String] = CommandLine.arguments) {
        if let location = PAMConfiguration.tpmLocation(forArguments: arguments) {
            setenv(TPM.locationVariable, location, 1)
        }
        // The kernel's resource manager, which lets several programs share the TPM
        // (docs/SECURITY.md, "Keys in the TPM"); unset, the TSS would also try a D-Bus
        // resource manager and simulators first.
        setenv("TPM2OPENSSL_TCTI", "device:/dev/tpmrm0", 0)
        // The TSS logs its own failures to stderr; Latchkey reports them as one typed
        // error instead. TSS2_LOG=all+warning brings them back.
        setenv("TSS2_LOG", "all+none", 0)
    }
}
