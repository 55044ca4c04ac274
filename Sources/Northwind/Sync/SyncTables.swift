import Crypto
import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

/// How each synced table travels: as records of its own type (the table's name), named by the row's `recordID`, in
/// one zone. Columns are read from the schema, so a column added by a migration travels without a change here.
struct SyncTable: Sendable {
    enum Zone: Sendable, Equatable {
        /// A zone every installation shares: `catalog`, `people`, `customers`.
        case shared(String)
        /// The writing installation's own zone, `site-<CODE>`.
        case site
    }

    let name: String
    let zone: Zone
    /// Columns that never travel: the local key, the local edit counter, values each store derives for itself.
    let localColumns: Set<String>
    /// Rows are never changed once written (a ledger): they upload with `append`.
    let appendOnly: Bool
    /// Binary attributes kept with external storage (`ExternalStorage`), which travel as assets: the record names
    /// the bytes by their SHA-256, and the bytes go up and down apart from it.
    let assetAttributes: [String]
    /// Fields an older version requires (NOT NULL there) that this one no longer keeps: sent with this fixed value,
    /// so that a shop not yet upgraded can still write the record, and never read here (an incoming value is
    /// taken as this one).
    let olderVersionsField: [String: FieldValue]

    init(
        _ name: String,
        _ zone: Zone,
        local: Set<String> = [],
        appendOnly: Bool = false,
        assets: [String] = [],
        forOlderVersions: [String: FieldValue] = [:]
    ) {
        self.name = name
        self.zone = zone
        // An asset attribute's three columns (bytes, file name, type) never travel as columns.
        self.localColumns = local.union(["id", "recordID", "version"]).union(assets.flatMap { [$0, $0 + "File", $0 + "Type"] })
        self.appendOnly = appendOnly
        self.assetAttributes = assets
        self.olderVersionsField = forOlderVersions
    }

    /// A record as this version reads it: what it sends older versions in place of what they sent. A record that
    /// lacks the field (written before this rule) keeps lacking it, so that this store's next upload fills it in.
    func readable(_ record: SyncRecord) -> SyncRecord {
        guard !olderVersionsField.isEmpty, !record.deleted else { return record }
        var record = record
        for (name, value) in olderVersionsField where record.fields[name] != nil { record.fields[name] = value }
        return record
    }

    /// Every synced table, parents before children (`Store.syncedTables` order).
    // guide: begin sync-tables
    static let all: [SyncTable] = [
        SyncTable("categories", .shared("catalog"), assets: ["picture"]),
        SyncTable("suppliers", .shared("catalog")),
        // A product's stock and what it has on order are this location's, derived from its movements and its
        // purchase orders. Versions before purchasing (v21) shared units on order, NOT NULL: they get 0.
        SyncTable("products", .shared("catalog"), local: ["unitsInStock", "unitsOnOrder"], forOlderVersions: ["unitsOnOrder": .int64(0)]),
        SyncTable("customers", .shared("customers")),
        SyncTable("customer_demographics", .shared("customers")),
        SyncTable("customer_demographic_links", .shared("customers")),
        SyncTable("employees", .shared("people"), assets: ["photo"]),
        SyncTable("shippers", .shared("catalog")),
        SyncTable("orders", .site),
        SyncTable("order_lines", .site),
        SyncTable("regions", .shared("catalog")),
        SyncTable("territories", .shared("catalog")),
        SyncTable("employee_territories", .shared("people")),
        // A purchase order is its site's, written there only; its receipts are that site's movements.
        SyncTable("purchase_orders", .site),
        SyncTable("purchase_order_lines", .site),
        // A transfer lives in the sender's zone; the destination's movement in names it across zones.
        SyncTable("stock_transfers", .site, appendOnly: true),
        // What left, in parts: the shipping site's, never changed once written; each line's movement names it.
        SyncTable("shipments", .site, appendOnly: true),
        SyncTable("shipment_lines", .site, appendOnly: true),
        // Returns, invoices and credit notes are the shipping site's too: each site numbers its own series.
        SyncTable("returns", .site, appendOnly: true),
        SyncTable("return_lines", .site, appendOnly: true),
        SyncTable("invoices", .site, appendOnly: true),
        SyncTable("invoice_lines", .site, appendOnly: true),
        SyncTable("stock_movements", .site, appendOnly: true),
        // Quotes are shared, so that two installations may edit one; a version is never changed once saved.
        // When it last changed is each installation's own fact: two saves must not conflict over it.
        SyncTable("quotes", .shared("customers"), local: ["updatedAt"]),
        SyncTable("quote_lines", .shared("customers")),
        SyncTable("quote_versions", .shared("customers"), appendOnly: true),
        // A record another site and the server lost, offered to that site from here; its answer is that site's.
        SyncTable("record_offers", .site, appendOnly: true),
        SyncTable("record_offer_answers", .site, appendOnly: true),
    ]
    // guide: end sync-tables

    static let byName = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })

    /// A record type's place in `all`: a parent's comes before its children's. Unknown types come last.
    static func rank(_ name: String) -> Int { ranks[name] ?? .max }

    private static let ranks = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($0.element.name, $0.offset) })

    /// The shared zones, in the order a new installation downloads them (parents' zones first).
    static let sharedZones = ["catalog", "people", "customers"]

    static func siteZone(_ siteCode: String) -> String { "site-\(siteCode)" }

    /// The shared zone a table's rows live in; nil for a site's own tables, which no other installation writes.
    static func sharedZone(of table: String) -> String? {
        guard case .shared(let zone)? = byName[table]?.zone else { return nil }
        return zone
    }

    /// The zone this store writes a row of this table to.
    func zone(siteCode: String) -> String {
        switch zone {
        case .shared(let name): name
        case .site: Self.siteZone(siteCode)
        }
    }

    /// The travelling columns and, for foreign keys, the table they name.
    func columns(_ db: Database) throws -> [(name: String, parent: String?)] {
        var parents: [String: String] = [:]
        for key in try db.foreignKeys(on: name) {
            for mapping in key.mapping { parents[mapping.origin] = key.destinationTable }
        }
        return try db.columns(in: name).map(\.name).filter { !localColumns.contains($0) }.map { ($0, parents[$0]) }
    }
}

extension OperationOutcome {
    /// The outcome with the server's record as this version reads it (`SyncTable.readable`).
    func readable(by table: SyncTable) -> OperationOutcome {
        switch self {
        case .saved(let record): .saved(table.readable(record))
        case .changedOnServer(let record): .changedOnServer(table.readable(record))
        default: self
        }
    }
}

/// What the sync rules need besides the transaction: this store's membership, where its binary values live, and the
/// asset bytes the sync engine fetched for the records being applied (by SHA-256).
struct SyncSite: Sendable {
    var membership: SyncMembership
    var binaries: ExternalStorage
    var assets: [String: Data] = [:]
    var siteCode: String { membership.siteCode }
}

extension BackofficeFeature {
    func syncSite(_ db: Database, assets: [String: Data] = [:]) throws -> SyncSite? {
        try ShopSync.membership(db).map { SyncSite(membership: $0, binaries: store.binaries, assets: assets) }
    }
}

/// Rows as records and records as rows.
enum RecordMapping {
    /// The row as a record, or nil when no row has this id. NULL columns are left out; `location` of a movement
    /// made here is this store's site code; a picture is an asset named by its bytes' SHA-256.
    static func record(_ db: Database, table: SyncTable, recordID: String, site: SyncSite, zoneName: String) throws -> SyncRecord? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM \(table.name) WHERE recordID = ?"), arguments: [recordID]) else {
            return nil
        }
        var fields: [String: FieldValue] = [:]
        for column in try table.columns(db) {
            let value: DatabaseValue = row[column.name]
            if let parent = column.parent {
                guard let id = Int64.fromDatabaseValue(value) else { continue }
                guard let parentID = try String.fetchOne(db.cachedStatement(sql: "SELECT recordID FROM \(parent) WHERE id = ?"), arguments: [id])
                else {
                    continue
                }
                let parentTable = SyncTable.byName[parent]
                let parentZone = try parentTable.map { try zone(db, table: $0, recordID: parentID, siteCode: site.siteCode) }
                fields[column.name] = .reference(RecordReference(recordName: parentID, zoneName: parentZone == zoneName ? nil : parentZone))
            } else if let field = field(value) {
                fields[column.name] = field
            }
        }
        for attribute in table.assetAttributes {
            if let asset = try asset(db, table: table, attribute: attribute, rowID: row["id"], site: site) {
                fields[attribute] = .asset(asset.reference)
            }
        }
        if ShopSync.ownerBound[table.name] == "location", fields["location"] == nil { fields["location"] = .string(site.siteCode) }
        fields.merge(table.olderVersionsField) { _, fixed in fixed }
        return SyncRecord(recordName: recordID, recordType: table.name, zoneID: ZoneID(zoneName), fields: fields)
    }

    /// The zone a row lives in: where the server has it (or had it, for a version sent again after the server's
    /// restore), else where this store writes it.
    static func zone(_ db: Database, table: SyncTable, recordID: String, siteCode: String) throws -> String {
        try String.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT coalesce(
                      (SELECT zoneName FROM sync_records WHERE tableName = ?1 AND recordID = ?2),
                      (SELECT zoneName FROM sync_resend WHERE tableName = ?1 AND recordID = ?2))
                    """
            ),
            arguments: [table.name, recordID]
        ) ?? table.zone(siteCode: siteCode)
    }

    /// A row's binary value and the asset that names it; nil when the row has none.
    static func asset(
        _ db: Database,
        table: SyncTable,
        attribute: String,
        rowID: Int64,
        site: SyncSite
    ) throws -> (reference: AssetReference, content: BinaryContent)? {
        guard let content = try site.binaries.load(db, table: table.name, attribute: attribute, id: rowID) else { return nil }
        return (assetReference(content), content)
    }

    static func assetReference(_ content: BinaryContent) -> AssetReference {
        AssetReference(sha256: sha256(content.bytes), size: Int64(content.bytes.count), contentType: content.contentType)
    }

    static func sha256(_ bytes: Data) -> String {
        SHA256.hash(data: bytes).hex
    }

    static func field(_ value: DatabaseValue) -> FieldValue? {
        switch value.storage {
        case .null: nil
        case .int64(let number): .int64(number)
        case .double(let number): .double(number)
        case .string(let text): .string(text)
        case .blob(let data): .bytes(data)
        }
    }

    static func databaseValue(_ field: FieldValue) -> DatabaseValue? {
        switch field {
        case .string(let text), .decimal(let text): text.databaseValue
        case .int64(let number), .timestamp(let number): number.databaseValue
        case .double(let number): number.databaseValue
        case .bytes(let data): data.databaseValue
        case .null: .null
        case .reference, .asset, .list: nil
        }
    }
}

/// A record type as head office declares it in the container's schema (see the sync server's `ContainerSchema`).
public struct DeclaredRecordType: Sendable, Equatable, Codable {
    public var name: String
    public var appendOnly: Bool
    /// Every save carries field clocks (`~clocks`): this version's always do.
    public var clocked: Bool = true
    public var fields: [DeclaredField]
}

/// One field of a declared record type. `type` is the protocol's field type, nil for any (a column whose SQLite
/// affinity lets it hold several).
public struct DeclaredField: Sendable, Equatable, Codable {
    public var name: String
    public var type: String?
    public var required: Bool
    public var referenceType: String?
    public var ownerBound: Bool
}

extension SyncEngineSide {
    /// The container's schema as this version's synced tables make it: one record type per table, a field per
    /// travelling column (a reference for a foreign key, an asset for a picture), required when the column is NOT
    /// NULL with no default (so a column a later version adds, which must have one, never stops an older one), and
    /// a movement's `location` and a transfer's `fromLocation` bound to the zone's owner.
    public func declaredSchema() async throws(NorthwindError) -> [DeclaredRecordType] {
        try await read { db in
            try SyncTable.all.map { table in
                let info = Dictionary(try db.columns(in: table.name).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
                var fields = try table.columns(db).map { column -> DeclaredField in
                    let described = info[column.name]
                    return DeclaredField(
                        name: column.name,
                        type: column.parent != nil ? "REFERENCE" : described.flatMap { ShopSync.fieldType(affinityOf: $0.type) },
                        required: (described?.isNotNull ?? false) && described?.defaultValueSQL == nil,
                        referenceType: column.parent,
                        ownerBound: ShopSync.ownerBound[table.name] == column.name
                    )
                }
                fields += table.assetAttributes.map { DeclaredField(name: $0, type: "ASSET", required: false, referenceType: nil, ownerBound: false) }
                return DeclaredRecordType(name: table.name, appendOnly: table.appendOnly, clocked: true, fields: fields)
            }
        }
    }
}

extension ShopSync {
    /// The field of a ledger table that names whose stock it is: always its zone's owner.
    static let ownerBound = [
        "stock_movements": "location", "stock_transfers": "fromLocation", "purchase_orders": "location", "record_offers": "site",
        "record_offer_answers": "site", "invoices": "site",
    ]

    /// The protocol type a column's values always have, by SQLite's affinity rules; nil when it may hold several.
    static func fieldType(affinityOf declared: String) -> String? {
        let type = declared.uppercased()
        if type.contains("INT") { return "INT64" }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return "STRING" }
        if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return "DOUBLE" }
        return nil
    }
}
