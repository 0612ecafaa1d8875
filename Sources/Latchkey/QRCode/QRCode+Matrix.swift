/// The module matrix: function patterns (§6.3), codeword placement (§7.7.3), masking and
/// its penalty (§7.8), format and version information (§7.9, §7.10).
extension QRCode {
    struct Matrix {
        let version: Int
        let size: Int
        var modules: [[Bool]]
        var isFunction: [[Bool]]

        init(version: Int) {
            self.version = version
            size = version * 4 + 17
            modules = Array(repeating: Array(repeating: false, count: size), count: size)
            isFunction = modules
        }

        private mutating func set(_ x: Int, _ y: Int, _ dark: Bool) {
            modules[y][x] = dark
            isFunction[y][x] = true
        }

        /// Alignment pattern centres (Annex E), versions 1-10.
        private var alignmentPositions: [Int] {
            switch version {
            case 1: []
            case 2...6: [6, version * 4 + 10]
            case 7: [6, 22, 38]
            case 8: [6, 24, 42]
            case 9: [6, 26, 46]
            default: [6, 28, 50]
            }
        }

        mutating func drawFunctionPatterns() {
            for index in 0..<size {
                set(6, index, index % 2 == 0)
                set(index, 6, index % 2 == 0)
            }
            for (x, y) in [(3, 3), (size - 4, 3), (3, size - 4)] {
                for dy in -4...4 {
                    for dx in -4...4 where (0..<size).contains(x + dx) && (0..<size).contains(y + dy) {
                        let distance = max(abs(dx), abs(dy))
                        set(x + dx, y + dy, distance != 2 && distance != 4)
                    }
                }
            }
            let positions = alignmentPositions
            for (i, x) in positions.enumerated() {
                for (j, y) in positions.enumerated() {
                    let last = positions.count - 1
                    if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                    for dy in -2...2 {
                        for dx in -2...2 { set(x + dx, y + dy, max(abs(dx), abs(dy)) != 1) }
                    }
                }
            }
            // Reserve the format areas (drawn for real once the mask is chosen).
            drawFormatBits(errorCorrection: .medium, mask: 0)
            drawVersionBits()
        }

        /// Format information: level and mask, BCH(15,5)-protected and XOR-masked, twice.
        mutating func drawFormatBits(errorCorrection: ErrorCorrection, mask: Int) {
            let data = errorCorrection.formatBits << 3 | mask
            var remainder = data
            for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
            let bits = (data << 10 | remainder) ^ 0x5412
            func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
            for index in 0...5 { set(8, index, bit(index)) }
            set(8, 7, bit(6))
            set(8, 8, bit(7))
            set(7, 8, bit(8))
            for index in 9..<15 { set(14 - index, 8, bit(index)) }
            for index in 0..<8 { set(size - 1 - index, 8, bit(index)) }
            for index in 8..<15 { set(8, size - 15 + index, bit(index)) }
            set(8, size - 8, true)
        }

        /// Version information (versions 7 and up): BCH(18,6), twice.
        private mutating func drawVersionBits() {
            guard version >= 7 else { return }
            var remainder = version
            for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
            let bits = version << 12 | remainder
            for index in 0..<18 {
                let dark = (bits >> index) & 1 == 1
                let a = size - 11 + index % 3
                let b = index / 3
                set(a, b, dark)
                set(b, a, dark)
            }
        }

        /// Places the codewords in the two-column zigzag from the bottom right (§7.7.3).
        mutating func drawCodewords(_ codewords: [UInt8]) {
            var bitIndex = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                for vertical in 0..<size {
                    for offset in 0..<2 {
                        let x = right - offset
                        let upward = (right + 1) & 2 == 0
                        let y = upward ? size - 1 - vertical : vertical
                        if !isFunction[y][x], bitIndex < codewords.count * 8 {
                            modules[y][x] = (codewords[bitIndex >> 3] >> (7 - UInt8(bitIndex & 7))) & 1 == 1
                            bitIndex += 1
                        }
                    }
                }
                right -= 2
            }
        }

        /// XORs the data modules with mask pattern `mask` (§7.8.2, Table 10).
        mutating func applyMask(_ mask: Int) {
            for y in 0..<size {
                for x in 0..<size where !isFunction[y][x] {
                    let flip = switch mask {
                    case 0: (x + y) % 2 == 0
                    case 1: y % 2 == 0
                    case 2: x % 3 == 0
                    case 3: (x + y) % 3 == 0
                    case 4: (x / 3 + y / 2) % 2 == 0
                    case 5: x * y % 2 + x * y % 3 == 0
                    case 6: (x * y % 2 + x * y % 3) % 2 == 0
                    default: ((x + y) % 2 + x * y % 3) % 2 == 0
                    }
                    if flip { modules[y][x].toggle() }
                }
            }
        }

        /// The mask penalty (§7.8.3): runs, 2×2 blocks, finder-like patterns, balance.
        func penalty() -> Int {
            var total = 0
            let columns = (0..<size).map { x in modules.map { $0[x] } }
            let finderLike: [Bool] = [true, false, true, true, true, false, true, false, false, false, false]
            let finderLikeReversed = Array(finderLike.reversed())
            for line in modules + columns {
                var run = 1
                for index in 1..<size {
                    if line[index] == line[index - 1] {
                        run += 1
                    } else {
                        if run >= 5 { total += run - 2 }
                        run = 1
                    }
                }
                if run >= 5 { total += run - 2 }
                if size >= finderLike.count {
                    for start in 0...(size - finderLike.count) {
                        let window = Array(line[start..<start + finderLike.count])
                        if window == finderLike || window == finderLikeReversed { total += 40 }
                    }
                }
            }
            for y in 0..<(size - 1) {
                for x in 0..<(size - 1) {
                    let colour = modules[y][x]
                    if colour == modules[y][x + 1], colour == modules[y + 1][x], colour == modules[y + 1][x + 1] { total += 3 }
                }
            }
            let dark = modules.reduce(0) { $0 + $1.filter { $0 }.count }
            let percent = dark * 100 / (size * size)
            total += abs(percent - 50) / 5 * 10
            return total
        }
    }
}
