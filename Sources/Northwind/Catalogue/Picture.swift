import NorthwindStore

/// Picture bytes as stored and served: the one place that knows image formats, for the classic import and the CLI.
public enum Picture {

    /// Unwraps an OLE object as MS Access stored pictures (the T-SQL script's Picture/Photo hex literals carry an
    /// OLE header before the real image) and returns the real image bytes with a content type sniffed from its
    /// magic bytes ("image/bmp", "image/jpeg", "image/png", "image/gif"); returns nil for empty input.
    /// Non-wrapped images are returned as they are; unrecognised data comes back whole as
    /// "application/octet-stream".
    public static func unwrap(_ bytes: [UInt8]) -> (bytes: [UInt8], contentType: String)? {
        guard !bytes.isEmpty else { return nil }
        if let type = imageType(at: 0, in: bytes) { return (bytes, type) }
        // The OLE header's length varies with the class and topic names, so search for the image itself;
        // a BMP is accepted only with a consistent header, as "BM" is just two letters.
        for start in 1..<bytes.count {
            guard let type = imageType(at: start, in: bytes) else { continue }
            if type == "image/bmp" {
                guard let size = plausibleBMPSize(at: start, in: bytes) else { continue }
                return (Array(bytes[start..<(start + size)]), type)
            }
            return (Array(bytes[start..<imageEnd(type: type, start: start, in: bytes)]), type)
        }
        return (bytes, "application/octet-stream")
    }

    private static func imageType(at index: Int, in bytes: [UInt8]) -> String? {
        func matches(_ magic: [UInt8]) -> Bool {
            index + magic.count <= bytes.count && bytes[index..<(index + magic.count)].elementsEqual(magic)
        }
        switch bytes[index] {
        case 0x42 where matches([0x42, 0x4D]):
            return index == 0 || plausibleBMPSize(at: index, in: bytes) != nil ? "image/bmp" : nil
        case 0xFF where matches([0xFF, 0xD8, 0xFF]):
            return "image/jpeg"
        case 0x89 where matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]):
            return "image/png"
        case 0x47 where matches(Array("GIF87a".utf8)) || matches(Array("GIF89a".utf8)):
            return "image/gif"
        default:
            return nil
        }
    }

    /// The file size from a BMP header whose fields agree with each other and fit in the buffer.
    private static func plausibleBMPSize(at start: Int, in bytes: [UInt8]) -> Int? {
        guard start + 18 <= bytes.count else { return nil }
        func u32(_ offset: Int) -> Int {
            let i = start + offset
            return Int(bytes[i]) | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2]) << 16 | Int(bytes[i + 3]) << 24
        }
        let size = u32(2)
        let dataOffset = u32(10)
        let dibSize = u32(14)
        guard [12, 40, 52, 56, 64, 108, 124].contains(dibSize),
            dataOffset >= 14 + dibSize, dataOffset <= size, start + size <= bytes.count
        else { return nil }
        return size
    }

    /// Where a wrapped JPEG or PNG ends, so the OLE trailer is not served as part of the image.
    private static func imageEnd(type: String, start: Int, in bytes: [UInt8]) -> Int {
        switch type {
        case "image/jpeg":
            var index = bytes.count - 2
            while index > start + 2 {
                if bytes[index] == 0xFF, bytes[index + 1] == 0xD9 { return index + 2 }
                index -= 1
            }
        case "image/png":
            var chunk = start + 8
            while chunk + 12 <= bytes.count {
                let length =
                    Int(bytes[chunk]) << 24 | Int(bytes[chunk + 1]) << 16 | Int(bytes[chunk + 2]) << 8
                    | Int(bytes[chunk + 3])
                let next = chunk + 12 + length
                if bytes[(chunk + 4)..<(chunk + 8)].elementsEqual(Array("IEND".utf8)) {
                    return min(next, bytes.count)
                }
                chunk = next
            }
        default:
            break
        }
        return bytes.count
    }
}
