import Foundation
import ZIPFoundation

/// A 256-pixel preview of a document for lists: a page with a band in the kind's colour and a grey bar for each of
/// its first lines. Drawn here, as no image library is at hand; ZIPFoundation's deflate compresses the pixels.
enum Thumbnail {
    static let size = 256

    static func png(kind: DocumentKind, lines: Int) -> Data {
        let band: (UInt8, UInt8, UInt8) =
            switch kind {
            case .quote: (0x2B, 0x6C, 0xB0)
            case .order: (0x2E, 0x8B, 0x57)
            case .catalog: (0xB8, 0x6B, 0x1F)
            case .purchaseOrder: (0x6A, 0x4C, 0x93)
            case .invoice: (0x8B, 0x1E, 0x3F)
            case .creditNote: (0x5A, 0x5A, 0x5A)
            }
        var pixels = [UInt8]()
        pixels.reserveCapacity((size * 3 + 1) * size)
        for y in 0..<size {
            pixels.append(0)  // filter: none
            for x in 0..<size {
                let onPage = x >= 32 && x < 224 && y >= 8 && y < 248
                let inBand = onPage && y < 48
                let row = (y - 64) / 12
                let onBar = onPage && y >= 64 && (y - 64) % 12 < 6 && row < min(lines, 15) && x >= 48 && x < 208 - (row % 3) * 24
                let color: (UInt8, UInt8, UInt8) =
                    inBand ? band : onBar ? (0xC8, 0xC8, 0xC8) : onPage ? (0xFF, 0xFF, 0xFF) : (0xEE, 0xEE, 0xEE)
                pixels += [color.0, color.1, color.2]
            }
        }
        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        png += chunk("IHDR", bigEndian(UInt32(size)) + bigEndian(UInt32(size)) + Data([8, 2, 0, 0, 0]))
        png += chunk("IDAT", zlib(pixels))
        png += chunk("IEND", Data())
        return png
    }

    private static func bigEndian(_ value: UInt32) -> Data {
        Data([UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }

    private static func chunk(_ type: String, _ body: Data) -> Data {
        let typed = Data(type.utf8) + body
        return bigEndian(UInt32(body.count)) + typed + bigEndian(typed.crc32(checksum: 0))
    }

    /// A zlib stream: its header, the deflated bytes, and their Adler-32. Stored blocks if deflate fails.
    private static func zlib(_ bytes: [UInt8]) -> Data {
        let data = Data(bytes)
        var deflated = Data()
        let compressed =
            (try? Data.compress(
                size: Int64(data.count),
                bufferSize: 1 << 16,
                provider: { position, size in
                    data.subdata(in: Int(position)..<Int(position) + size)
                },
                consumer: { deflated.append($0) }
            )) != nil
        var out = Data([0x78, 0x01])
        if compressed {
            out += deflated
        } else {
            var offset = 0
            repeat {
                let count = min(65_535, bytes.count - offset)
                let final: UInt8 = offset + count == bytes.count ? 1 : 0
                out += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
                out += bytes[offset..<(offset + count)]
                offset += count
            } while offset < bytes.count
        }
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in bytes {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + bigEndian(b << 16 | a)
    }
}
