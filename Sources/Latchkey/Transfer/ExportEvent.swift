#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What an export reports, in order, on the stream ``Embedded/exportCredential(id:)``
/// returns.
public enum ExportEvent: Sendable {
    /// The first code, to show the user (and the importing device's user).
    case codeIssued(TransferCode, expiresAt: Date)
    /// The previous code expired unused; show this one instead.
    case codeRotated(TransferCode, expiresAt: Date)
    /// A device redeemed the code and is creating its key.
    case codeRedeemed
    /// A device asks for the credential; the step handler's `confirm-import` answer
    /// decides.
    case importRequested(ImportRequest)
    /// Approved: the provider bound the importer's new credential to the same identity.
    case completed(ImportRequest)
    /// Declined: nothing was bound.
    case declined(ImportRequest)
    /// The transfer was cancelled (by this side) or expired before anyone imported.
    case cancelled
    case expired
}
