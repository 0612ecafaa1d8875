/// Names of log metadata fields that the client library and the provider both write, so
/// one search (`cause=…`) finds a failure on either side, spelled in one place.
public enum LogField: String, Sendable, CaseIterable {
    /// What failed, as the error describes itself (never a secret: errors carry none).
    case error
    /// Why something was given up: a short reason.
    case cause
    /// Why a choice was made.
    case reason
}
