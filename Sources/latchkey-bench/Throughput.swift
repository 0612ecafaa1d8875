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

/// One line of the report: Latchkey's figure, the reference's, and the target.
struct ReportLine {
    var name: String
    var latchkey: Double
    var reference: Double?
    var referenceName: String
    var target: String
}

/// The benchmark's output table.
struct Report {
    var title: String
    var notes: [String] = []
    var lines: [ReportLine] = []

    func print() {
        Swift.print("== \(title)")
        for note in notes { Swift.print("   \(note)") }
        let header = "operation".padding(toLength: 26, withPad: " ", startingAt: 0)
            + "latchkey/s".leftPadded(13) + "reference/s".leftPadded(13) + "ratio".leftPadded(8) + "  reference; target"
        Swift.print(header)
        /// Whole numbers for rates; one decimal for small figures such as milliseconds.
        func format(_ value: Double) -> String {
            String(format: value < 100 ? "%.1f" : "%.0f", value)
        }
        for line in lines {
            let reference = line.reference.map(format) ?? "-"
            let ratio = line.reference.map { String(format: "%.3f", line.latchkey / $0) } ?? "-"
            Swift.print(
                line.name.padding(toLength: 26, withPad: " ", startingAt: 0)
                    + format(line.latchkey).leftPadded(13)
                    + reference.leftPadded(13) + ratio.leftPadded(8)
                    + "  \(line.referenceName); \(line.target)"
            )
        }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
