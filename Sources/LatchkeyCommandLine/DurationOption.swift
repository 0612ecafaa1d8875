#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif
import ArgumentParser

/// A duration option's value, as `admin events list --since`, `serve --audit-retention`
/// and `serve --ssh-certificate-lifetime` take it.
package enum DurationOption {
    /// `30s`, `15m`, `12h`, `7d` in seconds; at most ten years.
    package static func seconds(_ text: String) throws -> TimeInterval {
        let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last, let scale = units[unit], text.count <= 12, let count = Int(text.dropLast()), count > 0,
              TimeInterval(count) * scale <= 3650 * 86_400
        else { throw ValidationError("a duration is a number and s, m, h or d (30s, 15m, 12h, 7d), at most ten years") }
        return TimeInterval(count) * scale
    }
}
