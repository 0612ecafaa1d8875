#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

/// Redirect URIs on the loopback interface (RFC 8252 §7.3): a native app listens on a
/// port it learns only when it starts, so its redirect is registered without a port and
/// matches one with any port. Only `http` to a loopback host qualifies (RFC 8252 §8.3).
public enum LoopbackRedirect {
    /// Whether `uri` is an `http` redirect to a loopback host.
    public static func isLoopback(_ uri: URLComponents) -> Bool {
        uri.scheme?.lowercased() == "http" && uri.host.map(LoopbackHost.contains) == true
    }

    /// `uri` without its port when it is a loopback redirect, the form it is registered
    /// in; nil for any other URI, which only matches exactly.
    public static func withoutPort(_ uri: String) -> String? {
        guard var components = URLComponents(string: uri), isLoopback(components) else { return nil }
        components.port = nil
        return components.string
    }
}
