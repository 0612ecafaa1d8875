import Foundation

/// A value in a statement or a row: the four types the store uses, in both engines.
enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
    case blob(Data)

    /// What the value is, for error reasons (never the value itself: it may be a secret).
    var kind: String {
        switch self {
        case .null: "null"
        case .integer: "an integer"
        case .text: "text"
        case .blob: "bytes"
        }
    }
}
