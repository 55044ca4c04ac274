import Foundation
import NorthwindStore
import Testing
import ZIPFoundation

@testable import Northwind
@testable import NorthwindTestSupport

/// A malicious or broken archive, made for the test, and what the refusal must say.
struct CraftedArchive: Sendable, CustomTestStringConvertible {
    var name: String
    var refusal: String
    var limits = ArchiveLimits(entries: 10, totalBytes: 1 << 20, compressionRatio: 100)
    var build: @Sendable (Archive) throws -> Void

    var testDescription: String { name }

    static let type = "application/vnd.northwind.test+zip"

    static func file(_ archive: Archive, _ path: String, _ data: Data, compress: Bool = false, type: Entry.EntryType = .file) throws {
        try archive.addEntry(with: path, type: type, uncompressedSize: Int64(data.count), compressionMethod: compress ? .deflate : .none) {
            data.subdata(in: Int($0)..<Int($0) + $1)
        }
    }

    static func mimetype(_ archive: Archive) throws { try file(archive, "mimetype", Data(type.utf8)) }

    static let all: [CraftedArchive] = [
        CraftedArchive(name: "an absolute path", refusal: "the entry \"/etc/cron.d/evil\" is an absolute path") {
            try mimetype($0)
            try file($0, "/etc/cron.d/evil", Data("x".utf8))
        },
        CraftedArchive(name: "a path that climbs out", refusal: "climbs out of its folder with ..") {
            try mimetype($0)
            try file($0, "media/../../evil", Data("x".utf8))
        },
        CraftedArchive(name: "a backslash", refusal: "contains a backslash") {
            try mimetype($0)
            try file($0, "media\\..\\evil", Data("x".utf8))
        },
        CraftedArchive(name: "a symbolic link", refusal: "is a symbolic link; only files are allowed") {
            try mimetype($0)
            try file($0, "media/link", Data("/etc/passwd".utf8), type: .symlink)
        },
        CraftedArchive(name: "a name twice", refusal: "the entry \"content.json\" appears twice") {
            try mimetype($0)
            try file($0, "content.json", Data("{}".utf8))
            try file($0, "content.json", Data("{\"evil\":1}".utf8))
        },
        CraftedArchive(name: "too many entries", refusal: "it has more than 10 entries") {
            try mimetype($0)
            for index in 0..<12 { try file($0, "media/\(index)", Data("x".utf8)) }
        },
        CraftedArchive(name: "too many bytes", refusal: "it would unpack to more than 1.0 MiB") {
            try mimetype($0)
            try file($0, "big", Data(count: 600_000))
            try file($0, "big2", Data(count: 600_000))
        },
        CraftedArchive(name: "a zip bomb", refusal: "is compressed more than 100 to 1, as a ZIP bomb is") {
            try mimetype($0)
            try file($0, "zeros", Data(count: 900_000), compress: true)
        },
        CraftedArchive(name: "no mimetype first", refusal: "does not start with an uncompressed mimetype entry") {
            try file($0, "content.json", Data("{}".utf8))
            try mimetype($0)
        },
        CraftedArchive(name: "a compressed mimetype", refusal: "does not start with an uncompressed mimetype entry") {
            try file($0, "mimetype", Data(type.utf8), compress: true)
        },
        CraftedArchive(name: "another type", refusal: "its type is application/zip, not \(type)") {
            try file($0, "mimetype", Data("application/zip".utf8))
        },
    ]
}

@Suite("Archives from outside")
struct ArchiveSafetyTests {
    func place() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-archives-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test(arguments: CraftedArchive.all)
    func aMaliciousArchiveIsRefusedBeforeAnythingIsUnpacked(_ crafted: CraftedArchive) throws {
        // Given an archive crafted to attack or overwhelm the reader
        let folder = try place()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("crafted.zip")
        try crafted.build(try Archive(url: url, accessMode: .create))
        // When it is opened
        let error = #expect(throws: NorthwindError.self) {
            _ = try SafeArchive(url: url, mediaType: CraftedArchive.type, limits: crafted.limits, what: "test package")
        }
        // Then it is refused, saying why, and nothing was written beside it
        #expect(error?.description.contains(crafted.refusal) == true, "\(error?.description ?? "")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["crafted.zip"])
    }

    @Test func anEncryptedEntryIsRefused() throws {
        // Given an archive whose second entry has the "encrypted" flag set in the central directory
        let folder = try place()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("encrypted.zip")
        let archive = try Archive(url: url, accessMode: .create)
        try CraftedArchive.mimetype(archive)
        try CraftedArchive.file(archive, "secret.json", Data("{}".utf8))
        var bytes = [UInt8](try Data(contentsOf: url))
        let signature: [UInt8] = [0x50, 0x4B, 0x01, 0x02]
        let records = (0..<(bytes.count - 4)).filter { Array(bytes[$0..<($0 + 4)]) == signature }
        let second = try #require(records.dropFirst().first)
        bytes[second + 8] |= 1
        try Data(bytes).write(to: url)
        // When it is opened
        let error = #expect(throws: NorthwindError.self) {
            _ = try SafeArchive(
                url: url,
                mediaType: CraftedArchive.type,
                limits: ArchiveLimits(entries: 10, totalBytes: 1 << 20),
                what: "test package"
            )
        }
        // Then it is refused for the encryption
        #expect(error?.description.contains("its entry secret.json is encrypted") == true, "\(error?.description ?? "")")
    }

    @Test func somethingThatIsNotAZipArchiveIsRefused() throws {
        // Given a text file named like a backup
        let folder = try place()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("notes.nwbackup")
        try Data("not an archive".utf8).write(to: url)
        // When it is verified as a backup
        let error = #expect(throws: NorthwindError.self) { _ = try BackupReader(file: url) }
        // Then it is refused as unreadable
        #expect(error?.description == "notes.nwbackup is not a Northwind backup: it cannot be read as a ZIP archive.")
    }

    @Test func aBackupInANewerFormatIsRefusedWithTheVersionItNeeds() async throws {
        // Given a backup whose manifest says it needs a newer reader
        let place = BackupPlace()
        let source = try TemporaryStore()
        let made = try await source.backoffice.backups.create(in: place.folder, kind: .manual)
        let reader = try BackupReader(file: made.file)
        var manifest = reader.manifest
        manifest.minReaderVersion = 2
        manifest.formatVersion = 2
        manifest.app.version = "9.0.0"
        let copy = place.directory.appendingPathComponent("newer.nwbackup")
        let writer = try ArchiveWriter(creating: copy, mediaType: BackupManifest.mediaType)
        try writer.add("manifest.json", try BackupWriter.encode(manifest), compress: true)
        for path in reader.archive.paths where !["mimetype", "manifest.json"].contains(path) {
            try writer.add(path, try reader.archive.read(path, limit: 1 << 30), compress: false)
        }
        // When it is opened
        let error = #expect(throws: NorthwindError.self) { _ = try BackupReader(file: copy) }
        // Then it says which Northwind made it and to upgrade
        #expect(error?.description.contains("made by Northwind 9.0.0 in backup format 2") == true, "\(error?.description ?? "")")
        #expect(error?.description.contains("upgrade Northwind") == true)
    }

    @Test func anEntryTheManifestDoesNotListFailsVerification() async throws {
        // Given a backup with one more file slipped in
        let place = BackupPlace()
        let source = try TemporaryStore()
        let made = try await source.backoffice.backups.create(in: place.folder, kind: .manual)
        let reader = try BackupReader(file: made.file)
        let copy = place.directory.appendingPathComponent("extra.nwbackup")
        let writer = try ArchiveWriter(creating: copy, mediaType: BackupManifest.mediaType)
        for path in reader.archive.paths where path != "mimetype" {
            try writer.add(path, try reader.archive.read(path, limit: 1 << 30), compress: false)
        }
        try writer.add("pictures/extra", Data("x".utf8), compress: false)
        // When it is verified
        let result = try await BackupFolder.verify(copy)
        // Then the extra file is named
        #expect(result.problems == ["the archive holds pictures/extra, which its manifest does not list"])
    }
}
