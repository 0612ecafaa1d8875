import Foundation
import Glibc
import LatchkeyCommandLine
import LatchkeyIdP

extension AdminToken {
    /// The token `serve` runs with: a supplied one (checked for strength), else the one
    /// kept in `dataDirectory`, else a new one, kept in a 0600 file there or, without a
    /// data directory, shown when stdout is a terminal and kept in a private temporary
    /// directory when it is not. That directory is returned too: the token opens only this
    /// process's in-memory provider, so `serve` removes it when it ends rather than leave
    /// a secret in /tmp that outlives what it opens.
    static func forServe(file: String?, dataDirectory: URL?) throws -> (token: String, origin: Origin, temporaryDirectory: URL?) {
        if let supplied = try supplied(file: file) {
            try checkStrength(supplied.token)
            return (supplied.token, supplied.origin, nil)
        }
        if let dataDirectory {
            let kept = try AdminTokenFile.loadOrCreate(in: dataDirectory, make: generate)
            try checkStrength(kept.token)
            return (kept.token, .kept(path: kept.path, created: kept.created), nil)
        }
        if isatty(STDOUT_FILENO) == 1 { return (try generate(), .shown, nil) }
        var template = Array((NSTemporaryDirectory() + "/latchkey-serve-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CommandFailure("cannot make a private directory for the admin token: \(String(cString: strerror(errno)))")
        }
        let directory = URL(fileURLWithPath: String(cString: made))
        do {
            let kept = try AdminTokenFile.loadOrCreate(in: directory, make: generate)
            return (kept.token, .kept(path: kept.path, created: true), directory)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }
}
