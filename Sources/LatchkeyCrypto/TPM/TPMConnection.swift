#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// This process's one connection to the TPM at a location, shared by every ``TPM`` value
/// that names it, and the lock that serialises all their commands.
///
/// A TPM reached without a resource manager (swtpm, `/dev/tpm0`) sees one client's objects
/// next to another's in its few transient slots, and two ESYS contexts in one process are
/// two such clients: a load made while the other context holds a primary and a key fails
/// with "out of memory for object contexts", or, when OpenSSL's decoder swallows that, as
/// if the key were another TPM's. So the lock belongs to the location, not to one ``TPM``:
/// a ``TPM`` made again after its TPM stopped answering, or one made for attestation only,
/// still waits for the other's commands (docs/SECURITY.md, "Keys in the TPM").
final class TPMConnection: Sendable {
    /// OpenSSL's provider with its connection to the TPM, made on first use and dropped
    /// while ESAPI has the TPM or after the TPM stopped answering. Its lock serialises every
    /// command sent to this location from this process.
    let provider = Mutex<OpenSSLTPMContext?>(nil)
    let location: String

    private init(location: String) {
        self.location = location
    }

    /// The connections made so far, by location: a handful per process (the configured TPM,
    /// and in tests a second one), never dropped.
    private static let all = Mutex<[String: TPMConnection]>([:])

    /// The connection to `location`, made on first use.
    static func to(_ location: String) -> TPMConnection {
        all.withLock { connections in
            if let connection = connections[location] { return connection }
            let connection = TPMConnection(location: location)
            connections[location] = connection
            return connection
        }
    }
}
