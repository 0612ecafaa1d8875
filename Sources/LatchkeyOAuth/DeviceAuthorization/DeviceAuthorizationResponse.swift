#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The device authorization response (RFC 8628 §3.2): what the device shows the person
/// (`user_code`, `verification_uri`, optionally `verification_uri_complete`) and what it
/// polls the token endpoint with (`device_code`, at `interval` seconds, for `expires_in`
/// seconds). One type for the client that reads it and the provider that sends it.
public struct DeviceAuthorizationResponse: Codable, Hashable, Sendable {
    public var deviceCode: String
    public var userCode: String
    public var verificationURI: URL
    public var verificationURIComplete: URL?
    public var expiresIn: Int
    /// Seconds between polls; absent means 5 (RFC 8628 §3.2).
    public var interval: Int?

    enum CodingKeys: String, CodingKey {
        case deviceCode = "device_code"
        case userCode = "user_code"
        case verificationURI = "verification_uri"
        case verificationURIComplete = "verification_uri_complete"
        case expiresIn = "expires_in"
        case interval
    }

    /// The query parameter of `verification_uri_complete` that carries the user code
    /// (RFC 8628 §3.3.1 names it as the member is named).
    public static let userCodeParameter = CodingKeys.userCode.rawValue

    /// RFC 8628 §3.2's default polling interval.
    public static let defaultInterval = 5

    public init(deviceCode: String, userCode: String, verificationURI: URL, verificationURIComplete: URL?, expiresIn: Int, interval: Int?) {
        self.deviceCode = deviceCode
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.expiresIn = expiresIn
        self.interval = interval
    }

    /// Parses a provider's answer and checks what the device will act on: codes of sane
    /// length (a device code goes back to the provider, a user code to the screen, as
    /// printable ASCII only, so a hostile provider cannot drive the terminal through it),
    /// https (or loopback http) verification URIs, a lifetime of 1 s to 1 day and an
    /// interval of 1 s to 10 min.
    static func parse(_ data: Data) throws -> DeviceAuthorizationResponse {
        guard data.count <= 64 * 1024 else { throw OAuthError.responseTooLarge(reason: "device authorization response over 64 KiB") }
        let response: DeviceAuthorizationResponse
        do {
            response = try JSONDecoder().decode(DeviceAuthorizationResponse.self, from: data)
        } catch {
            throw OAuthError.malformedResponse(reason: "the device authorization response lacks a member RFC 8628 §3.2 requires or is not JSON", underlying: error)
        }
        func printable(_ text: String, upTo limit: Int) -> Bool {
            (1...limit).contains(text.utf8.count) && text.utf8.allSatisfy { (0x21...0x7E).contains($0) || $0 == 0x20 }
        }
        guard printable(response.deviceCode, upTo: 1024), printable(response.userCode, upTo: 64) else {
            throw OAuthError.malformedResponse(reason: "the device or user code is empty, too long or not printable ASCII")
        }
        for uri in [response.verificationURI, response.verificationURIComplete].compactMap({ $0 }) {
            guard uri.absoluteString.utf8.count <= 2048 else { throw OAuthError.malformedResponse(reason: "a verification URI is over 2 KiB") }
            do {
                try TransportPolicy.check(uri)
            } catch {
                throw OAuthError.malformedResponse(reason: "a verification URI is not https (or http to a loopback host)", underlying: error)
            }
        }
        guard (1...86_400).contains(response.expiresIn), (1...600).contains(response.interval ?? defaultInterval) else {
            throw OAuthError.malformedResponse(reason: "expires_in or interval is out of range")
        }
        return response
    }
}
