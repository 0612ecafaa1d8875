#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey

/// `login --device --json`: the first line, the code to show (RFC 8628 §3.2).
struct DeviceCodeOutput: Encodable {
    var event = "code"
    var userCode: String
    var verificationURI: String
    var verificationURIComplete: String?
    var expiresAt: String
    var interval: Int

    init(_ prompt: DeviceCodePrompt) {
        userCode = prompt.userCode
        verificationURI = prompt.verificationURI.absoluteString
        verificationURIComplete = prompt.verificationURIComplete?.absoluteString
        expiresAt = prompt.expiresAt.formatted(.iso8601)
        interval = prompt.interval
    }
}

/// `login --device --json`: the provider asked to poll more slowly (RFC 8628 §3.5).
struct DeviceSlowDownOutput: Encodable {
    var event = "slowDown"
    /// Seconds between polls from now on.
    var interval: Int
}

/// `approve --json` and `deny --json`.
struct DeviceDecisionOutput: Encodable {
    var userCode: String
    /// `approve`, `deny`, or `none` when the person said no at the prompt.
    var decision: String
}
