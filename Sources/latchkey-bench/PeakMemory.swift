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
}
