#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto
import LatchkeyWebAuthn

/// The redirect flow's three answers, written directly (``JSONObjectWriter``) as
/// `JSONEncoder` with sorted keys writes them: the provider sends each on every sign-in,
/// and encoding them through `JSONEncoder` was 2% of a sign-in's profile
/// (docs/PERFORMANCE.md, "Less per request").
extension SignInExchange.Started {
    public var encodedJSON: Data {
        var writer = JSONObjectWriter(capacity: 32 + authenticateURL.utf8.count)
        writer.string("authenticateURL", authenticateURL)
        return writer.finished()
    }
}

extension SignInExchange.Challenge {
    public var encodedJSON: Data {
        let options = publicKey.encodedJSON
        var writer = JSONObjectWriter(capacity: 64 + options.count + submit.utf8.count + (application?.utf8.count ?? 0))
        writer.string("application", ifPresent: application)
        writer.json("publicKey", options)
        writer.string("submit", submit)
        return writer.finished()
    }
}

extension SignInExchange.Completed {
    public var encodedJSON: Data {
        var writer = JSONObjectWriter(capacity: 32 + redirectURL.utf8.count)
        writer.string("redirectURL", redirectURL)
        return writer.finished()
    }
}
