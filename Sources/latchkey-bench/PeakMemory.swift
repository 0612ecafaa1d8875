import Foundation

/// The process's peak resident memory so far (`getrusage`'s `ru_maxrss`, in KiB on Linux).
struct PeakMemory {
    var kibibytes: Int

    var mebibytes: Double { Double(kibibytes) / 1024 }

    static func current() -> PeakMemory {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return PeakMemory(kibibytes: 0) }
        return PeakMemory(kibibytes: usage.ru_maxrss)
    }

    /// The process's resident memory now (`/proc/self/statm`), which, unlike the peak,
    /// can show memory given back.
    static func resident() -> PeakMemory {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
              let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return PeakMemory(kibibytes: 0) }
        return PeakMemory(kibibytes: pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024)
    }
}
