import LatchkeyOAuth
import LatchkeyProtocol

/// The provider's refusals of what ``POSIXName`` does not take, each `invalid_posix_name`
/// (HTTP 400) with a reason an admin can act on. An identity whose username is not a
/// POSIX name gets no POSIX account; the error says why.
extension POSIXName {
    /// Refuses a name a POSIX host cannot take; `what` says whose name it is ("username",
    /// "group name").
    static func check(_ name: String, _ what: String) throws(ProviderError) {
        guard isValid(name) else {
            throw ProviderError.badRequest(
                .invalidPOSIXName,
                "\(what) is not a POSIX name: 1 to \(maximumBytes) bytes of lower-case letters, digits, _ and -, starting with a letter"
            )
        }
    }

    /// Refuses a `home` or `shell` that ``isValidPath(_:)`` does not take.
    static func checkPath(_ path: String, _ what: String) throws(ProviderError) {
        guard isValidPath(path) else {
            throw ProviderError.badRequest(
                .invalidPOSIXName, "\(what) must be an absolute path of at most 256 printable ASCII bytes, without :, spaces, empty, . or .. segments"
            )
        }
    }

    /// Refuses a GECOS an admin gave that ``isValidGECOS(_:)`` does not take.
    static func checkGECOS(_ text: String) throws(ProviderError) {
        guard isValidGECOS(text) else {
            throw ProviderError.badRequest(.invalidPOSIXName, "gecos must be at most 256 bytes without :, control, format or line-separating characters")
        }
    }
}
