#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A varlink call (varlink.org, "Protocol"): `method` as `interface.Method`, its
/// `parameters` (an object, decoded by the method), `more` when the caller takes several
/// replies, `oneway` when it takes none.
struct VarlinkCall: Sendable {
    var method: String
    var more: Bool
    var oneway: Bool
    /// The whole message, for the method to decode its parameters from.
    var message: Data

    private struct Header: Decodable {
        var method: String
        var more: Bool?
        var oneway: Bool?
    }

    private struct Envelope<Parameters: Decodable>: Decodable {
        var parameters: Parameters?
    }

    init(_ message: Data) throws {
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: message)
        } catch {
            throw HostError(.varlink, "a varlink call that is not a JSON object with a method", underlying: error)
        }
        guard header.method.utf8.count <= 256 else { throw HostError(.varlink, "a varlink method name over 256 bytes") }
        method = header.method
        more = header.more ?? false
        oneway = header.oneway ?? false
        self.message = message
    }

    /// The call's parameters as `type`; nil when it has none. Malformed ones throw.
    func parameters<Parameters: Decodable>(_ type: Parameters.Type) throws -> Parameters? {
        try JSONDecoder().decode(Envelope<Parameters>.self, from: message).parameters
    }
}

/// A varlink reply: parameters (with `continues` when more follow), or an error by its
/// fully qualified name with parameters of its own.
enum VarlinkReply: Sendable {
    case parameters(Data, continues: Bool)
    case error(String, parameters: Data)

    static func reply(_ parameters: some Encodable, continues: Bool = false, encoder: JSONEncoder = JSONEncoder()) throws -> VarlinkReply {
        .parameters(try encoder.encode(parameters), continues: continues)
    }

    static func failure(_ name: String, _ parameters: [String: String] = [:]) -> VarlinkReply {
        .error(name, parameters: (try? JSONEncoder().encode(parameters)) ?? Data("{}".utf8))
    }

    /// The message on the wire, its NUL included.
    var encoded: Data {
        var out = Data()
        switch self {
        case .parameters(let parameters, let continues):
            out += Data("{\"parameters\":".utf8) + parameters + Data((continues ? ",\"continues\":true}" : "}").utf8)
        case .error(let name, let parameters):
            let quoted = (try? JSONEncoder().encode(name)) ?? Data("\"\"".utf8)
            out += Data("{\"error\":".utf8) + quoted + Data(",\"parameters\":".utf8) + parameters + Data("}".utf8)
        }
        out.append(0)
        return out
    }

    /// The standard errors of `org.varlink.service`.
    static let methodNotFound = "org.varlink.service.MethodNotFound"
    static let invalidParameter = "org.varlink.service.InvalidParameter"
    static let permissionDenied = "org.varlink.service.PermissionDenied"
    static let expectedMore = "org.varlink.service.ExpectedMore"
}
