import LatchkeyOAuth

/// One line of `demo --json`: a step, whether it worked, what it said and the ids and URLs
/// involved.
struct DemoStepOutput: Encodable {
    var step: Int
    var name: String
    var title: String
    var ok: Bool
    var lines: [String]?
    var details: [String: JSONValue]?
    var error: String?
}
