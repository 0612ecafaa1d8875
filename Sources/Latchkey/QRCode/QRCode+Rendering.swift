extension QRCode {
    /// The code as text for a terminal: two module rows per line with Unicode half blocks
    /// (`▀`, `▄`, `█`), inside a quiet zone (§6.3.8 asks for 4 modules; 2 usually scan).
    ///
    /// - Parameters:
    ///   - quietZone: light modules around the symbol.
    ///   - lightOnDark: true for the usual dark terminal background: light modules (and
    ///     the quiet zone) are drawn as blocks, dark modules left blank, so the printed
    ///     symbol has dark modules on light as readers expect.
    public func rendered(quietZone: Int = 2, lightOnDark: Bool = true) -> String {
        let padded = size + 2 * quietZone
        func lit(_ row: Int, _ column: Int) -> Bool {
            let y = row - quietZone
            let x = column - quietZone
            let dark = (0..<size).contains(y) && (0..<size).contains(x) && modules[y][x]
            return lightOnDark ? !dark : dark
        }
        var lines: [String] = []
        for top in stride(from: 0, to: padded, by: 2) {
            var line = ""
            for column in 0..<padded {
                let upper = lit(top, column)
                let lower = top + 1 < padded ? lit(top + 1, column) : false
                line.append(upper ? (lower ? "█" : "▀") : (lower ? "▄" : " "))
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
