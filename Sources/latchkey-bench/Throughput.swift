import Foundation

/// Runs `operation` repeatedly for about `seconds` and returns operations per second.
/// The clock is read every 64 operations so reading it costs nothing measurable.
func measureThroughput(seconds: Double, _ operation: () throws -> Void) rethrows -> Double {
    // Warm up: first-use fetches and caches are not what is being measured.
    for _ in 0..<64 { try operation() }
    let clock = ContinuousClock()
    let start = clock.now
    let budget = Duration.milliseconds(Int64(seconds * 1000))
    var count = 0
    var elapsed = Duration.zero
    repeat {
        for _ in 0..<64 { try operation() }
        count += 64
        elapsed = clock.now - start
    } while elapsed < budget
    let (wholeSeconds, attoseconds) = elapsed.components
    return Double(count) / (Double(wholeSeconds) + Double(attoseconds) / 1e18)
}

/// The median of `values` (the mean of the middle two for an even count).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// A target a figure must meet, either against its reference (a ratio) or on its own.
enum Target {
    case ratioAtLeast(Double)
    case ratioAtMost(Double)
    case atLeast(Double)
    case atMost(Double)

    var description: String {
        switch self {
        case .ratioAtLeast(let value): ">= \(value)x"
        case .ratioAtMost(let value): "<= \(value)x"
        case .atLeast(let value): ">= \(value.formatted)"
        case .atMost(let value): "<= \(value.formatted)"
        }
    }

    /// Whether `line` meets the target; nil when its reference is missing.
    func isMet(by line: ReportLine) -> Bool? {
        switch self {
        case .ratioAtLeast(let value): line.ratio.map { $0 >= value }
        case .ratioAtMost(let value): line.ratio.map { $0 <= value }
        case .atLeast(let value): line.latchkey >= value
        case .atMost(let value): line.latchkey <= value
        }
    }
}

/// One line of the report: Latchkey's figure, the reference's, and the target.
struct ReportLine {
    var name: String
    var latchkey: Double
    var reference: Double?
    var referenceName: String
    var target: Target?
    /// The ratio when it is not simply latchkey / reference (the median of paired ratios).
    var pairedRatio: Double?

    init(name: String, latchkey: Double, reference: Double?, referenceName: String, target: Target? = nil, pairedRatio: Double? = nil) {
        self.name = name
        self.latchkey = latchkey
        self.reference = reference
        self.referenceName = referenceName
        self.target = target
        self.pairedRatio = pairedRatio
    }

    var ratio: Double? {
        pairedRatio ?? reference.flatMap { $0 > 0 ? latchkey / $0 : nil }
    }

    /// "yes", "no", or "-" without a target (or without its reference).
    var met: String {
        guard let target, let met = target.isMet(by: self) else { return "-" }
        return met ? "yes" : "no"
    }
}

/// The benchmark's output table, as plain text or as Markdown.
struct Report {
    var title: String
    var notes: [String] = []
    var lines: [ReportLine] = []

    func print(markdown: Bool) {
        if markdown {
            Swift.print("### \(title)\n")
            for note in notes { Swift.print("- \(note)") }
            if !notes.isEmpty { Swift.print("") }
            Swift.print("| operation | latchkey | reference | ratio | reference is | target | met |")
            Swift.print("|---|---:|---:|---:|---|---|---|")
            for line in lines {
                let cells = [line.name, line.latchkey.formatted, line.reference?.formatted ?? "-", line.ratio.map { String(format: "%.3f", $0) } ?? "-",
                             line.referenceName, line.target?.description ?? "-", line.met]
                Swift.print("| " + cells.joined(separator: " | ") + " |")
            }
            Swift.print("")
            return
        }
        Swift.print("== \(title)")
        for note in notes { Swift.print("   \(note)") }
        Swift.print("operation".padding(toLength: 28, withPad: " ", startingAt: 0)
            + "latchkey".leftPadded(11) + "reference".leftPadded(11) + "ratio".leftPadded(8) + "  met  reference; target")
        for line in lines {
            Swift.print(
                line.name.padding(toLength: 28, withPad: " ", startingAt: 0)
                    + line.latchkey.formatted.leftPadded(11)
                    + (line.reference?.formatted ?? "-").leftPadded(11)
                    + (line.ratio.map { String(format: "%.3f", $0) } ?? "-").leftPadded(8)
                    + "  " + line.met.padding(toLength: 5, withPad: " ", startingAt: 0)
                    + "\(line.referenceName); \(line.target?.description ?? "-")"
            )
        }
    }

    /// Every line with a target, across reports: the summary a reader looks at first.
    static func targets(of reports: [Report]) -> Report {
        var summary = Report(title: "Targets")
        summary.lines = reports.flatMap { report in report.lines.filter { $0.target != nil } }
        return summary
    }
}

extension Double {
    /// Whole numbers for rates; one decimal for small figures such as milliseconds; three
    /// below 2, where a ratio sits near 1.
    var formatted: String {
        guard self != rounded() else { return String(format: "%.0f", self) }
        return String(format: self < 2 ? "%.3f" : self < 100 ? "%.1f" : "%.0f", self)
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
