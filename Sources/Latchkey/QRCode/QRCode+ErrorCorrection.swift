/// Reed-Solomon error correction over GF(2^8) with the QR polynomial x^8+x^4+x^3+x^2+1
/// (§7.5.2), and the block structure of versions 1 to 10 (§7.5.1, Table 9).
extension QRCode {
    /// Per version and level: error-correction codewords per block, and the blocks as
    /// (count, data codewords) groups.
    struct BlockLayout {
        let eccPerBlock: Int
        let groups: [(blocks: Int, data: Int)]

        var dataCodewords: Int { groups.reduce(0) { $0 + $1.blocks * $1.data } }
    }

    // Table 9 of ISO/IEC 18004:2015, versions 1-10, in the order L, M, Q, H.
    private static let layouts: [[BlockLayout]] = [
        [.init(eccPerBlock: 7, groups: [(1, 19)]), .init(eccPerBlock: 10, groups: [(1, 16)]), .init(eccPerBlock: 13, groups: [(1, 13)]), .init(eccPerBlock: 17, groups: [(1, 9)])],
        [.init(eccPerBlock: 10, groups: [(1, 34)]), .init(eccPerBlock: 16, groups: [(1, 28)]), .init(eccPerBlock: 22, groups: [(1, 22)]), .init(eccPerBlock: 28, groups: [(1, 16)])],
        [.init(eccPerBlock: 15, groups: [(1, 55)]), .init(eccPerBlock: 26, groups: [(1, 44)]), .init(eccPerBlock: 18, groups: [(2, 17)]), .init(eccPerBlock: 22, groups: [(2, 13)])],
        [.init(eccPerBlock: 20, groups: [(1, 80)]), .init(eccPerBlock: 18, groups: [(2, 32)]), .init(eccPerBlock: 26, groups: [(2, 24)]), .init(eccPerBlock: 16, groups: [(4, 9)])],
        [.init(eccPerBlock: 26, groups: [(1, 108)]), .init(eccPerBlock: 24, groups: [(2, 43)]), .init(eccPerBlock: 18, groups: [(2, 15), (2, 16)]), .init(eccPerBlock: 22, groups: [(2, 11), (2, 12)])],
        [.init(eccPerBlock: 18, groups: [(2, 68)]), .init(eccPerBlock: 16, groups: [(4, 27)]), .init(eccPerBlock: 24, groups: [(4, 19)]), .init(eccPerBlock: 28, groups: [(4, 15)])],
        [.init(eccPerBlock: 20, groups: [(2, 78)]), .init(eccPerBlock: 18, groups: [(4, 31)]), .init(eccPerBlock: 18, groups: [(2, 14), (4, 15)]), .init(eccPerBlock: 26, groups: [(4, 13), (1, 14)])],
        [.init(eccPerBlock: 24, groups: [(2, 97)]), .init(eccPerBlock: 22, groups: [(2, 38), (2, 39)]), .init(eccPerBlock: 22, groups: [(4, 18), (2, 19)]), .init(eccPerBlock: 26, groups: [(4, 14), (2, 15)])],
        [.init(eccPerBlock: 30, groups: [(2, 116)]), .init(eccPerBlock: 22, groups: [(3, 36), (2, 37)]), .init(eccPerBlock: 20, groups: [(4, 16), (4, 17)]), .init(eccPerBlock: 24, groups: [(4, 12), (4, 13)])],
        [.init(eccPerBlock: 18, groups: [(2, 68), (2, 69)]), .init(eccPerBlock: 26, groups: [(4, 43), (1, 44)]), .init(eccPerBlock: 24, groups: [(6, 19), (2, 20)]), .init(eccPerBlock: 28, groups: [(6, 15), (2, 16)])],
    ]

    static func layout(version: Int, _ level: ErrorCorrection) -> BlockLayout {
        let column = switch level {
        case .low: 0
        case .medium: 1
        case .quartile: 2
        case .high: 3
        }
        return layouts[version - 1][column]
    }

    static func dataCodewords(version: Int, _ level: ErrorCorrection) -> Int {
        layout(version: version, level).dataCodewords
    }

    /// Splits the data into blocks, adds each block's error correction, and interleaves
    /// data then error-correction codewords block by block (§7.6).
    static func interleave(_ data: [UInt8], version: Int, _ level: ErrorCorrection) -> [UInt8] {
        let layout = layout(version: version, level)
        let divisor = ReedSolomon.divisor(degree: layout.eccPerBlock)
        var blocks: [(data: [UInt8], ecc: [UInt8])] = []
        var offset = 0
        for group in layout.groups {
            for _ in 0..<group.blocks {
                let block = Array(data[offset..<offset + group.data])
                offset += group.data
                blocks.append((block, ReedSolomon.remainder(block, divisor: divisor)))
            }
        }
        var result: [UInt8] = []
        let longest = blocks.map(\.data.count).max() ?? 0
        for index in 0..<longest {
            for block in blocks where index < block.data.count { result.append(block.data[index]) }
        }
        for index in 0..<layout.eccPerBlock {
            for block in blocks { result.append(block.ecc[index]) }
        }
        return result
    }

    enum ReedSolomon {
        /// The generator polynomial of `degree` (product of x - α^i, i < degree), highest
        /// coefficient implied.
        static func divisor(degree: Int) -> [UInt8] {
            var result = [UInt8](repeating: 0, count: degree)
            result[degree - 1] = 1
            var root: UInt8 = 1
            for _ in 0..<degree {
                for index in 0..<degree {
                    result[index] = multiply(result[index], root)
                    if index + 1 < degree { result[index] ^= result[index + 1] }
                }
                root = multiply(root, 0x02)
            }
            return result
        }

        /// The remainder of data(x)·x^degree divided by the generator: the ECC codewords.
        static func remainder(_ data: [UInt8], divisor: [UInt8]) -> [UInt8] {
            var result = [UInt8](repeating: 0, count: divisor.count)
            for byte in data {
                let factor = byte ^ result.removeFirst()
                result.append(0)
                for index in result.indices { result[index] ^= multiply(divisor[index], factor) }
            }
            return result
        }

        /// Multiplication in GF(2^8) modulo 0x11D.
        static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
            var z: UInt16 = 0
            for bit in stride(from: 7, through: 0, by: -1) {
                z = (z << 1) ^ ((z >> 7) * 0x11D)
                z ^= UInt16((y >> UInt8(bit)) & 1) * UInt16(x)
            }
            return UInt8(truncatingIfNeeded: z)
        }
    }
}
