#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What ``Embedded/registerCredential(from:)`` returns: the new credential and, when the
/// bind job named one, where the app should send the user next.
public struct BoundCredential: Sendable {
    public var credential: Credential
    public var postBindingRedirectURI: URL?
}
