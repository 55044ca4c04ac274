import Crypto
import Foundation
import NorthwindStore
import ZIPFoundation

/// The bounds an archive from outside must keep before anything in it is read: a ZIP bomb or a path that climbs
/// out of its folder is refused by its table of contents alone.
public struct ArchiveLimits: Sendable {
    public var entries: Int
    public var totalBytes: Int64
    /// Uncompressed size over compressed size, per entry.
    public var compressionRatio: Int64

    public init(entries: Int, totalBytes: Int64, compressionRatio: Int64 = 100) {
        self.entries = entries
        self.totalBytes = totalBytes
        self.compressionRatio = compressionRatio
    }
}

/// A ZIP archive (a backup, a document package) opened for reading, its table of contents already checked:
/// - the first entry is `mimetype`, stored uncompressed, naming the expected type;
/// - every other entry is a regular file with a relative, plain path: no `/` at the start, no `..`, no backslash,
///   no symlink, no folder entry, no name twice;
/// - nothing is encrypted;
/// - the entry count, the total size and each entry's compression ratio are within `limits`.
///
/// Reading an entry checks its CRC, and stops as soon as it exceeds the size its caller expects.
struct SafeArchive {
    let url: URL
    private let archive: Archive
    /// Entries by path, in archive order.
    let paths: [String]
    private let entries: [String: Entry]

    /// The type its `mimetype` entry names: one of those the caller accepts.
    private(set) var mediaType: String

    init(url: URL, mediaType: String, limits: ArchiveLimits, what: String) throws(NorthwindError) {
        try self.init(url: url, mediaTypes: [mediaType], limits: limits, what: what)
    }

    init(url: URL, mediaTypes: [String], limits: ArchiveLimits, what: String) throws(NorthwindError) {
        self.url = url
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw .importFailed("\(url.path) cannot be read: there is no such file, or it is not yours to read.")
        }
        let archive: Archive
        do {
            archive = try Archive(url: url, accessMode: .read)
        } catch {
            throw .importFailed("\(url.lastPathComponent) is not a \(what): it cannot be read as a ZIP archive.")
        }
        self.archive = archive
        if let encrypted = ZipDirectory.encryptedEntries(at: url).first {
            throw .importFailed("\(url.lastPathComponent) is refused: its entry \(encrypted) is encrypted, which a \(what) never is.")
        }
        var paths: [String] = []
        var entries: [String: Entry] = [:]
        var total: Int64 = 0
        for entry in archive {
            let path = entry.path
            guard paths.count < limits.entries else {
                throw .importFailed("\(url.lastPathComponent) is refused: it has more than \(limits.entries) entries.")
            }
            if let problem = Self.problem(with: path) {
                throw .importFailed("\(url.lastPathComponent) is refused: the entry \"\(path)\" \(problem).")
            }
            guard entry.type == .file else {
                let kind = entry.type == .symlink ? "a symbolic link" : "a folder"
                throw .importFailed("\(url.lastPathComponent) is refused: the entry \"\(path)\" is \(kind); only files are allowed.")
            }
            guard entries[path] == nil else {
                throw .importFailed("\(url.lastPathComponent) is refused: the entry \"\(path)\" appears twice.")
            }
            let size = Int64(clamping: entry.uncompressedSize)
            // Compared before adding: a size near Int64.max (a ZIP64 field) must not overflow the sum.
            guard size <= limits.totalBytes - total else {
                throw .importFailed(
                    "\(url.lastPathComponent) is refused: it would unpack to more than \(byteText(limits.totalBytes))."
                )
            }
            total += size
            if entry.isCompressed, size > 1024, size / max(Int64(clamping: entry.compressedSize), 1) > limits.compressionRatio {
                throw .importFailed(
                    "\(url.lastPathComponent) is refused: the entry \"\(path)\" is compressed more than \(limits.compressionRatio) to 1, as a ZIP bomb is."
                )
            }
            paths.append(path)
            entries[path] = entry
        }
        guard paths.first == "mimetype", let mimetype = entries["mimetype"], !mimetype.isCompressed else {
            throw .importFailed("\(url.lastPathComponent) is not a \(what): it does not start with an uncompressed mimetype entry.")
        }
        self.paths = paths
        self.entries = entries
        mediaType = ""
        let declared = String(decoding: try read("mimetype", limit: 200), as: UTF8.self)
        guard mediaTypes.contains(declared) else {
            throw .importFailed("\(url.lastPathComponent) is not a \(what): its type is \(declared), not \(mediaTypes.joined(separator: " or ")).")
        }
        mediaType = declared
    }

    /// Why a path may not be unpacked, or nil when it is plain.
    static func problem(with path: String) -> String? {
        if path.isEmpty { return "has no name" }
        if path.hasPrefix("/") { return "is an absolute path" }
        if path.contains("\\") { return "contains a backslash" }
        if path.unicodeScalars.contains(where: { $0.value < 0x20 }) { return "contains a control character" }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts.contains("..") { return "climbs out of its folder with .." }
        if parts.contains(where: { $0.isEmpty || $0 == "." }) { return "has an empty or \".\" component" }
        return nil
    }

    func contains(_ path: String) -> Bool { entries[path] != nil }

    func size(of path: String) -> Int64 { entries[path].map { Int64(clamping: $0.uncompressedSize) } ?? 0 }

    /// The whole of a small entry.
    func read(_ path: String, limit: Int64) throws(NorthwindError) -> Data {
        var data = Data()
        _ = try stream(path, limit: limit) { data.append($0) }
        return data
    }

    /// An entry's bytes in chunks, and their SHA-256 (lowercase hex). Refused past `limit` bytes or on a bad CRC.
    @discardableResult
    func stream(_ path: String, limit: Int64, _ sink: (Data) throws -> Void) throws(NorthwindError) -> (sha256: String, size: Int64) {
        guard let entry = entries[path] else {
            throw .importFailed("\(url.lastPathComponent) has no entry \(path).")
        }
        var hash = SHA256()
        var size: Int64 = 0
        do {
            _ = try archive.extract(entry) { chunk in
                size += Int64(chunk.count)
                guard size <= limit else { throw EntryTooLarge() }
                hash.update(data: chunk)
                try sink(chunk)
            }
        } catch is EntryTooLarge {
            throw .importFailed("\(url.lastPathComponent) is refused: its entry \(path) is larger than it should be.")
        } catch let error as NorthwindError {
            throw error
        } catch {
            throw .importFailed("\(url.lastPathComponent) is damaged: its entry \(path) cannot be read (\(error)).")
        }
        return (hash.finalize().hex, size)
    }

    /// Unpacks an entry into a new file.
    @discardableResult
    func extract(_ path: String, to file: URL, limit: Int64) throws(NorthwindError) -> (sha256: String, size: Int64) {
        guard FileManager.default.createFile(atPath: file.path, contents: nil), let handle = FileHandle(forWritingAtPath: file.path) else {
            throw .storeUnavailable("Cannot write \(file.path).")
        }
        defer { try? handle.close() }
        return try stream(path, limit: limit) { chunk in try handle.write(contentsOf: chunk) }
    }

    private struct EntryTooLarge: Error {}
}

/// Writes a ZIP archive entry by entry: `mimetype` first and stored, as OpenDocument and EPUB have it, so that a
/// tool can tell the type from the first bytes.
struct ArchiveWriter {
    private let archive: Archive

    init(creating url: URL, mediaType: String) throws(NorthwindError) {
        do {
            archive = try Archive(url: url, accessMode: .create)
        } catch {
            throw .storeUnavailable("Cannot create \(url.path): \(error)")
        }
        try add("mimetype", Data(mediaType.utf8), compress: false)
    }

    func add(_ path: String, _ data: Data, compress: Bool) throws(NorthwindError) {
        do {
            try archive.addEntry(
                with: path,
                type: .file,
                uncompressedSize: Int64(data.count),
                compressionMethod: compress ? .deflate : .none
            ) { position, size in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        } catch {
            throw .storeUnavailable("Cannot write \(path) into the archive: \(error)")
        }
    }

    func add(_ path: String, file: URL, compress: Bool) throws(NorthwindError) {
        do {
            try archive.addEntry(with: path, fileURL: file, compressionMethod: compress ? .deflate : .none)
        } catch {
            throw .storeUnavailable("Cannot write \(path) into the archive: \(error)")
        }
    }
}

/// The one thing ZIPFoundation does not say about an entry: whether it is encrypted (bit 0 of its flags). Read from
/// the central directory, which the end-of-central-directory record (or its ZIP64 form) locates.
enum ZipDirectory {
    static func encryptedEntries(at url: URL) -> [String] {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return [] }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd(), size >= 22 else { return [] }
        let tailLength = min(size, 65_557)
        guard (try? handle.seek(toOffset: size - tailLength)) != nil, let tail = try? handle.read(upToCount: Int(tailLength)) else { return [] }
        let bytes = [UInt8](tail)
        func u16(_ b: [UInt8], _ at: Int) -> UInt64 { UInt64(b[at]) | UInt64(b[at + 1]) << 8 }
        func u32(_ b: [UInt8], _ at: Int) -> UInt64 { u16(b, at) | u16(b, at + 2) << 16 }
        func u64(_ b: [UInt8], _ at: Int) -> UInt64 { u32(b, at) | u32(b, at + 4) << 32 }
        guard let end = stride(from: bytes.count - 22, through: 0, by: -1).first(where: { u32(bytes, $0) == 0x0605_4b50 }) else { return [] }
        var offset = u32(bytes, end + 16)
        var length = u32(bytes, end + 12)
        if offset == 0xFFFF_FFFF || length == 0xFFFF_FFFF, end >= 20, u32(bytes, end - 20) == 0x0706_4b50 {
            // ZIP64: the locator, just before the record, points at the ZIP64 record, which holds the real values.
            let record = u64(bytes, end - 12)
            guard (try? handle.seek(toOffset: record)) != nil, let data = try? handle.read(upToCount: 56), data.count == 56 else { return [] }
            let zip64 = [UInt8](data)
            (length, offset) = (u64(zip64, 40), u64(zip64, 48))
        }
        guard offset < size, length <= size, (try? handle.seek(toOffset: offset)) != nil,
            let data = try? handle.read(upToCount: Int(length))
        else { return [] }
        let directory = [UInt8](data)
        var names: [String] = []
        var at = 0
        while at + 46 <= directory.count, u32(directory, at) == 0x0201_4b50 {
            let flags = u16(directory, at + 8)
            let (nameLength, extraLength, commentLength) = (Int(u16(directory, at + 28)), Int(u16(directory, at + 30)), Int(u16(directory, at + 32)))
            guard at + 46 + nameLength <= directory.count else { break }
            if flags & 1 != 0 { names.append(String(decoding: directory[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)) }
            at += 46 + nameLength + extraLength + commentLength
        }
        return names
    }
}

extension Digest {
    /// Lowercase hex, as `sha256sum` prints it.
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}

/// The SHA-256 of a file, read in chunks.
func sha256(of file: URL) throws(NorthwindError) -> (sha256: String, size: Int64) {
    guard let handle = FileHandle(forReadingAtPath: file.path) else { throw .storeUnavailable("Cannot read \(file.path).") }
    defer { try? handle.close() }
    var hash = SHA256()
    var size: Int64 = 0
    do {
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hash.update(data: chunk)
            size += Int64(chunk.count)
        }
    } catch {
        throw .storeUnavailable("Cannot read \(file.path): \(error.localizedDescription)")
    }
    return (hash.finalize().hex, size)
}
