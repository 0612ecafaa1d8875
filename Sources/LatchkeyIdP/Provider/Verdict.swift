/// A transaction's verdict when a refusal must still be committed (a replayed code
/// revokes its grant family, a wrong code is counted): the body returns it, the
/// transaction commits, and the caller throws afterwards.
enum Verdict<Value: Sendable>: Sendable {
    case accepted(Value)
    case refused(ProviderError)

    func get() throws(ProviderError) -> Value {
        switch self {
        case .accepted(let value): return value
        case .refused(let error): throw error
        }
    }
}

extension Verdict {
    func map<Other: Sendable>(_ transform: (Value) -> Other) -> Verdict<Other> {
        switch self {
        case .accepted(let value): .accepted(transform(value))
        case .refused(let error): .refused(error)
        }
    }
}
