#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The `Date` field's value (RFC 9110 §5.6.7, IMF-fixdate: `Sun, 06 Nov 1994 08:49:37
/// GMT`), formatted once a second and shared: every answer carries one (§6.6.1).
/// Day and month names are written out here rather than taken from `strftime`, whose
/// names follow the process's locale.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, text: String)>((-1, ""))
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Now, to the second.
    static var now: String {
        let second = Int(time(nil))
        return cache.withLock { cached in
            if cached.second != second {
                cached = (second, format(second))
            }
            return cached.text
        }
    }

    /// `seconds` since 1970 in IMF-fixdate.
    static func format(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let day = days[Int(parts.tm_wday) % 7], month = months[Int(parts.tm_mon) % 12]
        return "\(day), \(two(parts.tm_mday)) \(month) \(parts.tm_year + 1900) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
