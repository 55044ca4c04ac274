import Foundation
import GRDB

/// Core Data's "allows external storage" for binary attributes.
///
/// A value up to `threshold` bytes lives in the row; a larger one goes in a file named by a UUID in `directory`, and
/// the row keeps only the name. Callers read and write through `load` and `save` and never see the difference.
/// File removals wait for the commit, and a new file is removed on rollback; a crash between writing a file and
/// committing leaves an orphan that `sweepOrphans` removes when the store next opens.
public struct ExternalStorage: Sendable {
    public let directory: URL
    public let threshold: Int

    /// The bytes and type of `attribute` (e.g. "picture") of row `id` in `table`, wherever they are kept.
    public func load(_ db: Database, table: String, attribute: String, id: Int64) throws(NorthwindError) -> BinaryContent? {
        do {
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: "SELECT \(attribute), \(attribute)File, \(attribute)Type FROM \(table) WHERE id = ?",
                    arguments: [id]
                )
            else { return nil }
            let type: String = row[2] ?? "application/octet-stream"
            if let file: String = row[1] {
                return BinaryContent(bytes: try Data(contentsOf: directory.appendingPathComponent(file)), contentType: type)
            }
            if let bytes: Data = row[0] { return BinaryContent(bytes: bytes, contentType: type) }
            return nil
        } catch {
            throw .storeUnavailable("Cannot read the \(attribute) of \(table) row \(id): \(error)")
        }
    }

    // guide: begin external-save
    /// Replaces (or with nil, removes) the value, inside the caller's transaction.
    public func save(_ db: Database, _ content: BinaryContent?, table: String, attribute: String, id: Int64) throws {
        let oldFile = try String.fetchOne(db, sql: "SELECT \(attribute)File FROM \(table) WHERE id = ?", arguments: [id])
        let sql = "UPDATE \(table) SET \(attribute) = ?, \(attribute)File = ?, \(attribute)Type = ? WHERE id = ?"
        if let content, content.bytes.count > threshold {
            let name = UUID().uuidString.lowercased()
            let url = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try content.bytes.write(to: url, options: .atomic)
            db.afterNextTransaction(onCommit: { _ in }, onRollback: { _ in try? FileManager.default.removeItem(at: url) })
            try db.execute(sql: sql, arguments: [nil, name, content.contentType, id])
        } else {
            try db.execute(sql: sql, arguments: [content?.bytes, nil, content?.contentType, id])
        }
        if let oldFile { removeAfterCommit(db, file: oldFile) }
    }
    // guide: end external-save

    /// Call before deleting a row whose binary attribute may live in a file.
    public func prepareDelete(_ db: Database, table: String, attribute: String, id: Int64) throws {
        if let file = try String.fetchOne(db, sql: "SELECT \(attribute)File FROM \(table) WHERE id = ?", arguments: [id]) {
            removeAfterCommit(db, file: file)
        }
    }

    /// Call before deleting every row of a table (e.g. an import with --replace).
    public func prepareDeleteAll(_ db: Database, table: String, attribute: String) throws {
        for file in try String.fetchAll(db, sql: "SELECT \(attribute)File FROM \(table) WHERE \(attribute)File IS NOT NULL") {
            removeAfterCommit(db, file: file)
        }
    }

    private func removeAfterCommit(_ db: Database, file: String) {
        let url = directory.appendingPathComponent(file)
        db.afterNextTransaction(onCommit: { _ in try? FileManager.default.removeItem(at: url) })
    }

    // guide: begin orphan-sweep
    /// Removes files that no row names and that are older than `gracePeriod`.
    @discardableResult
    public func sweepOrphans(in reader: some DatabaseReader, olderThan gracePeriod: TimeInterval) -> [String] {
        let fileManager = FileManager.default
        guard let names = try? fileManager.contentsOfDirectory(atPath: directory.path), !names.isEmpty,
            let referenced = try? reader.read({ db in try Self.referencedFiles(db) })
        else { return [] }
        let cutoff = Date().addingTimeInterval(-gracePeriod)
        var removed: [String] = []
        for name in names where !referenced.contains(name) {
            let url = directory.appendingPathComponent(name)
            let modified = (try? fileManager.attributesOfItem(atPath: url.path)[.modificationDate] as? Date) ?? .distantPast
            if modified <= cutoff, (try? fileManager.removeItem(at: url)) != nil { removed.append(name) }
        }
        return removed
    }
    // guide: end orphan-sweep

    package static func referencedFiles(_ db: Database) throws -> Set<String> {
        var names = Set<String>()
        for (table, attribute) in Schema.binaryAttributes {
            names.formUnion(try String.fetchAll(db, sql: "SELECT \(attribute)File FROM \(table) WHERE \(attribute)File IS NOT NULL"))
        }
        return names
    }
}
