import Foundation
import GRDB
import Northwind
import NorthwindLoading
import NorthwindStore
import NorthwindSync
import SyncAPI
import SyncProtocol
import Testing

@testable import NorthwindTestSupport
@testable import SyncServer

extension SyncTrustEndToEndTests {
    @Test func aShopThatSilentlyLostARecordFindsItByTheZonesChecksumAndFetchesItAgain() async throws {
        // Given a customer at head office and at the shop, which then loses it without a trace in its change log
        // (as a hand edit of the file, or a bug, would)
        let company = try Company()
        try await company.start(shops: ["oxf"])
        _ = try await company.open("hq").records.create(Customer(code: "GONE1", companyName: "Lost at the shop"))
        try await company.sync("hq")
        try await company.sync("oxf")
        try await company.open("oxf").store.pool.write { db in
            let last = try Int64.fetchOne(db, sql: "SELECT max(seq) FROM change_log") ?? 0
            let recordID = try String.fetchOne(db, sql: "SELECT recordID FROM customers WHERE code = 'GONE1'")
            try db.execute(sql: "DELETE FROM customers WHERE code = 'GONE1'")
            try db.execute(sql: "DELETE FROM sync_records WHERE recordID = ?", arguments: [recordID])
            try db.execute(sql: "DELETE FROM change_log WHERE seq > ?", arguments: [last])
        }
        // When the shop syncs, with nothing new on the server
        let report = try await company.sync("oxf")
        // Then the customers zone's checksum differed, the zone was fetched again, and the customer is back
        #expect(try company.open("oxf").people.customer(code: "GONE1").companyName == "Lost at the shop")
        #expect(report.zonesDiffering.isEmpty)
        #expect(try await company.open("oxf").sync.status().zonesDiffering.isEmpty)
    }

    @Test func recordsOfATypeThisVersionDoesNotKnowAreHeldAndSaidSoNotSkipped() async throws {
        // Given head office's newer version writing a record of a type this version does not know
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let service = try await SyncService.open(database: company.database)
        let caller = try #require(try await service.installations(container: "acme").first { $0.role == .hq })
        var schema = try #require(try await service.storedSchema(container: "acme"))
        schema.recordTypes.append(.init(name: "warranty_claims", fields: [.init(name: "supplier", _type: .string)]))
        _ = try await service.putSchema(caller, container: "acme", schema: schema)
        let order = SyncRecord(
            recordName: "po-1",
            recordType: "warranty_claims",
            zoneID: ZoneID("catalog"),
            fields: ["supplier": .string("Exotic Liquids")]
        )
        let request = Components.Schemas.ModifyRequest(
            clientID: "newer",
            batchID: UUID().uuidString,
            operations: [.init(opID: "0", operationType: .create, record: order)]
        )
        _ = try await service.modifyRecords(caller, container: "acme", scope: .shared, request: request, bodySize: 0)
        await service.close()
        // When the shop syncs twice
        try await company.sync("oxf")
        let second = try await company.sync("oxf")
        // Then the record is held, `sync status` says so, and the zone's checksum still agrees
        let status = try await company.open("oxf").sync.status()
        #expect(status.heldForNewerVersion == 1)
        #expect(status.zonesDiffering.isEmpty)
        #expect(second.zonesDiffering.isEmpty)
    }

    @Test(arguments: [("HQ", true), (nil, true), ("HQ", false), (nil, false)])
    func aForgedMovementInAShopsZoneMovesNoOtherShelf(naming location: String?, schemaDeclared: Bool) async throws {
        // Given a shop whose client misbehaves: it appends to its own zone a movement that names head office's
        // location, or names none; with head office's schema on the server, or (an older head office) without
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try company.open("hq")
        let hqSite = try await hq.sync.siteCode()
        let product = try #require(try await hq.catalogue.list().items.first?.product)
        let service = try await SyncService.open(database: company.database)
        let installations = try await service.installations(container: "acme")
        let shop = try #require(installations.first { $0.role == .shop })
        if !schemaDeclared {
            let head = try #require(installations.first { $0.role == .hq })
            _ = try await service.putSchema(head, container: "acme", schema: .init(recordTypes: []))
        }
        var fields: [String: FieldValue] = [
            "productID": .reference(RecordReference(recordName: product.recordID, zoneName: "catalog")),
            "delta": .int64(-7),
            "reason": .string("received"),
            "createdAt": .string("2026-11-26T10:00:00.000Z"),
        ]
        if let location { fields["location"] = .string(location == "HQ" ? hqSite : location) }
        let forged = SyncRecord(
            recordName: UUID().uuidString.lowercased(),
            recordType: "stock_movements",
            zoneID: ZoneID("site-\(shop.siteCode)"),
            fields: fields
        )
        let request = Components.Schemas.ModifyRequest(
            clientID: "forger",
            batchID: UUID().uuidString,
            operations: [.init(opID: "0", operationType: .append, record: forged)]
        )
        let answer = try await service.modifyRecords(shop, container: "acme", scope: .shared, request: request, bodySize: 0)
        await service.close()
        // When head office syncs
        try await company.sync("hq")
        // Then head office's own shelf did not move. With the schema, the server refused both; without it, head
        // office put a movement naming its shelf in the inbox, and counted one naming none at the shop's location,
        // its zone's owner
        let after = try hq.catalogue.product(id: try #require(product.id)).product
        #expect(after.unitsInStock == product.unitsInStock)
        let (inbox, shopLevel) = try await hq.store.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sync_conflicts WHERE reason LIKE '%names another location%'") ?? 0,
                try Int.fetchOne(
                    db,
                    sql: "SELECT units FROM stock_levels WHERE location = ? AND productID = ?",
                    arguments: [shop.siteCode, product.id]
                )
            )
        }
        if schemaDeclared {
            #expect(answer.contains("SCHEMA_VIOLATION"), "\(answer)")
            #expect(shopLevel == nil)
            #expect(inbox == 0)
        } else if location == nil {
            #expect(shopLevel == -7)
            #expect(inbox == 0)
        } else {
            #expect(shopLevel == nil)
            #expect(inbox == 1)
        }
    }

    @Test func aSharedRecordSavedWithoutFieldClocksIsRefused() async throws {
        // Given a company whose head office declared the schema, and a shop whose client misbehaves
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let service = try await SyncService.open(database: company.database)
        let shop = try #require(try await service.installations(container: "acme").first { $0.role == .shop })
        // When it sends a customer without `~clocks`, which no merge could weigh (it would win every clash)
        let forged = SyncRecord(
            recordName: UUID().uuidString.lowercased(),
            recordType: "customers",
            zoneID: ZoneID("customers"),
            fields: ["code": .string("NOCLOCK"), "companyName": .string("Clockless")]
        )
        let request = Components.Schemas.ModifyRequest(
            clientID: "forger",
            batchID: UUID().uuidString,
            operations: [.init(opID: "0", operationType: .create, record: forged)]
        )
        let answer = try await service.modifyRecords(shop, container: "acme", scope: .shared, request: request, bodySize: 0)
        await service.close()
        // Then the server refuses it, and head office never sees it
        #expect(answer.contains("SCHEMA_VIOLATION") && answer.contains("~clocks"), "\(answer)")
        try await company.sync("hq")
        #expect(throws: NorthwindError.self) { try company.open("hq").people.customer(code: "NOCLOCK") }
    }

    @Test func batchIDsThatDifferOnlyAfterANULAreRefusedNotTakenForOne() async throws {
        // Given a company in sync
        let company = try Company()
        try await company.start(shops: [])
        let service = try await SyncService.open(database: company.database)
        let caller = try #require(try await service.installations(container: "acme").first { $0.role == .hq })
        // When a batch whose ID holds a NUL is sent (stored as text, "zz\0a" and "zz\0b" would both be "zz")
        let request = Components.Schemas.ModifyRequest(
            clientID: "c1",
            batchID: "zz\u{0}a",
            operations: [
                .init(
                    opID: "0",
                    operationType: .create,
                    record: SyncRecord(recordName: "nul-batch", recordType: "regions", zoneID: ZoneID("catalog"), fields: [:])
                )
            ]
        )
        var refusal: SyncError?
        do {
            _ = try await service.modifyRecords(caller, container: "acme", scope: .shared, request: request, bodySize: 0)
        } catch {
            refusal = error
        }
        await service.close()
        // Then it is refused naming the field
        #expect(refusal?.serverErrorCode == .badRequest)
        #expect(refusal?.reason.contains("batchID") == true, "\(String(describing: refusal))")
    }

    @Test func aJoinRefusedBeforeEnrollingLeavesTheTokenForAStoreThatCan() async throws {
        // Given a company with data, and a token for a shop
        let company = try Company()
        try await company.start(shops: [])
        let token = try await company.token(role: .shop)
        // When a store holding data joins with it (refused), then an empty store joins with the same token
        let full = try await company.northwind(["customers", "list"], store: "full")
        let refused = try await CLI.run(["sync", "join", company.url, token, "--store", company.store("full")])
        let joined = try await CLI.run(["sync", "join", company.url, token, "--store", company.store("empty"), "--empty"])
        // Then the first was refused saying why, and the token still enrolled the second
        #expect(!full.isEmpty)
        #expect(refused.status != 0 && refused.stderr.contains("holds data"), "\(refused.stderr)")
        #expect(joined.status == 0, "\(joined.stderr)")
    }

    @Test func aRevokedShopJoinsAgainAsTheSameSiteWithAReplacingToken() async throws {
        // Given a shop in sync, then revoked by the administrator
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let site = try #require(try await company.open("oxf").sync.membership()?.siteCode)
        let service = try await SyncService.open(database: company.database)
        try await service.revoke(container: "acme", siteCode: site)
        let replacing = try await service.createEnrollment(container: "acme", role: .shop, site: site, replace: true)
        await service.close()
        _ = try await company.open("oxf").records.create(Customer(code: "AGAIN", companyName: "Taken while revoked"))
        let refused = try await CLI.run(["sync", "now", "--store", company.store("oxf")])
        // When it joins again with the replacing token and syncs, then head office syncs
        try await company.northwind(["sync", "join", company.url, replacing, "--again"], store: "oxf")
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then it was refused while revoked, saying what to do, and its change reached head office after
        #expect(refused.status != 0 && refused.stderr.contains("--replace"), "\(refused.stderr)")
        #expect(try company.open("hq").people.customer(code: "AGAIN").companyName == "Taken while revoked")
    }

    @Test func theCredentialLivesBesideTheStoreSoABackupRestoredElsewhereCannotSync() async throws {
        // Given a shop in sync, backed up
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let files = StoreFiles(path: company.store("oxf"))
        let credential = try #require(files.readSyncCredential())
        let place = BackupPlace()
        let backup = try await company.open("oxf").backups.create(in: place.folder, kind: .manual).file
        // When the backup is restored on another machine (another folder, with none of the first one's files)
        let elsewhere = StoreFiles(path: company.directory.appendingPathComponent("elsewhere/oxf.sqlite").path)
        _ = try await Restore.perform(backup, over: elsewhere, folder: place.folder, force: false)
        let restored = try Backoffice.open(StoreConfiguration(path: elsewhere.path), seedIfCreated: false)
        let refused = try await CLI.run(["sync", "now", "--store", elsewhere.path])
        // Then the credential is in a file of its owner's alone, not in the store; the restored store cannot sync,
        // and says why and what to do
        let mode = try FileManager.default.attributesOfItem(atPath: files.syncCredential.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let stored = try await company.open("oxf").store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT value FROM sync_state").joined()
        }
        #expect(!stored.contains(credential))
        #expect(refused.status != 0 && refused.stderr.contains("--replace") && refused.stderr.contains("credential"), "\(refused.stderr)")
        #expect(try await restored.sync.status().credentialMissing)
    }

    @Test func aCredentialAnOlderVersionKeptInTheStoreIsMovedBesideIt() async throws {
        // Given a shop whose credential sits in the store, as an older version kept it, and no credential file
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let files = StoreFiles(path: company.store("oxf"))
        let credential = try #require(files.readSyncCredential())
        try FileManager.default.removeItem(at: files.syncCredential)
        try await company.open("oxf").store.pool.write { db in
            try db.execute(
                sql: "UPDATE sync_state SET value = json_set(value, '$.credential', ?) WHERE key = 'membership'",
                arguments: [credential]
            )
        }
        // When it syncs
        let report = try await company.sync("oxf")
        // Then it synced with it, and the credential is now in the file and no longer in the store
        #expect(report.pending == 0)
        #expect(files.readSyncCredential() == credential)
        let membership = try await company.open("oxf").store.pool.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'membership'")
        }
        #expect(membership?.contains(credential) == false)
    }

    /// Whether the sync server takes `credential`.
    static func accepted(_ credential: String, by company: Company) async throws -> Bool {
        let service = try await SyncService.open(database: company.database)
        defer { Task { await service.close() } }
        do {
            _ = try await service.authenticate(credential: credential)
            return true
        } catch {
            return false
        }
    }

    @Test func aShopRotatesItsCredentialBeforeItExpiresAndTheOldOneStopsWorking() async throws {
        // Given a shop whose credential was issued 300 days ago, on a server whose credentials last 365
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let files = StoreFiles(path: company.store("oxf"))
        let old = try #require(files.readSyncCredential())
        let site = try await company.open("oxf").sync.siteCode()
        let queue = try DatabaseQueue(path: company.database)
        try await queue.write { db in
            let issued = Int64(Date().timeIntervalSince1970 * 1000) - 300 * 86_400_000
            try db.execute(sql: "UPDATE installations SET credentialIssued = ? WHERE siteCode = ?", arguments: [issued, site])
        }
        try queue.close()
        // When it syncs, and syncs again
        let rotating = try await company.sync("oxf")
        let next = try await company.sync("oxf")
        // Then the first sync rotated it: the new one works, the old one no longer does, and the next sync did not
        let new = try #require(files.readSyncCredential())
        #expect(rotating.credentialRotated && !next.credentialRotated)
        #expect(new != old)
        #expect(try await Self.accepted(new, by: company))
        #expect(try await !Self.accepted(old, by: company))
        let status = try await company.open("oxf").sync.status()
        #expect(status.credentialExpires != nil)
    }

    @Test func rotateCredentialGivesANewCredentialAndSyncGoesOnWithIt() async throws {
        // Given a shop in sync
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let old = try #require(StoreFiles(path: company.store("oxf")).readSyncCredential())
        // When the manager rotates its credential, then makes a change and syncs
        let output = try await company.northwind(["sync", "rotate-credential"], store: "oxf")
        _ = try await company.open("oxf").records.create(Customer(code: "ROTAT", companyName: "After the rotation"))
        let report = try await company.sync("oxf")
        try await company.sync("hq")
        // Then it said so, the change reached head office, and the old credential is refused
        #expect(output.contains("new sync credential"), "\(output)")
        #expect(report.pending == 0)
        #expect(try company.open("hq").people.customer(code: "ROTAT").companyName == "After the rotation")
        #expect(try await !Self.accepted(old, by: company))
    }

    /// A store's whole content, through SQLite's backup: as a file copy would be, write-ahead log included.
    @Test func aSecondCopyOfAShopsStoreIsRefusedAndTheCopyThatResumesIsTheSitesFromThenOn() async throws {
        // Given a shop's whole folder copied to a second machine (its credential and watermark with it), and then a
        // customer sent from the first copy
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let second = company.directory.appendingPathComponent("machine2/oxf.sqlite").path
        try FileManager.default.createDirectory(atPath: (second as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Self.copy(from: company.store("oxf"), to: second)
        for file in [\StoreFiles.syncCredential, \StoreFiles.syncWatermark] {
            // (No watermark yet when the shop has sent nothing.)
            try? FileManager.default.copyItem(at: StoreFiles(path: company.store("oxf"))[keyPath: file], to: StoreFiles(path: second)[keyPath: file])
        }
        _ = try await company.open("oxf").records.create(Customer(code: "FIRST", companyName: "Sent from the first copy"))
        try await company.sync("oxf")
        // When the second copy takes a customer and syncs with the real program
        _ = try await Backoffice.open(StoreConfiguration(path: second)).records.create(
            Customer(code: "COPY", companyName: "Taken at the second copy")
        )
        let refused = try await CLI.run(["sync", "now", "--store", second])
        // Then it is refused, saying what to do, and keeps its change
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("northwind sync resume"), "\(refused.stderr)")
        #expect(try await Backoffice.open(StoreConfiguration(path: second)).sync.pendingChanges() > 0)
        // When a person makes the second copy the site's (sync resume), it syncs, and the first copy sends a change
        let resumed = try await CLI.run(["sync", "resume", "--store", second])
        let synced = try await CLI.run(["sync", "now", "--store", second])
        _ = try await company.open("oxf").records.create(Customer(code: "LATE", companyName: "Sent from the first copy, too late"))
        let first = try await CLI.run(["sync", "now", "--store", company.store("oxf")])
        try await company.sync("hq")
        // Then the second copy's change went up and it got back the first copy's acknowledged one; the first copy is
        // refused from then on, and head office has what each copy had acknowledged, and not the refused change
        #expect(resumed.status == 0 && synced.status == 0, "\(resumed.stderr)\(synced.stderr)")
        #expect(first.status != 0 && first.stderr.contains("another copy"), "\(first.stderr)")
        let hq = try company.open("hq")
        #expect(try hq.people.customer(code: "FIRST").companyName == "Sent from the first copy")
        #expect(try hq.people.customer(code: "COPY").companyName == "Taken at the second copy")
        #expect(throws: NorthwindError.self) { try hq.people.customer(code: "LATE") }
        #expect(try Backoffice.open(StoreConfiguration(path: second)).people.customer(code: "FIRST").companyName == "Sent from the first copy")
    }

    /// A company with one shop, "oxf", and an order for one unit of a product the shop holds, synced while new: its
    /// number, and the product as it was before the order shipped.
    static func newOrderSynced(_ company: Company) async throws -> (number: String, product: Product) {
        try await company.start(shops: ["oxf"])
        let shop = try company.open("oxf")
        let productID = try #require(try await shop.catalogue.list().items.first { !$0.product.discontinued }?.product.id)
        _ = try await shop.stock.receive(productID: productID, quantity: 5)
        let product = try shop.catalogue.product(id: productID).product
        let customer = try #require(try await shop.records.list(Customer.self, limit: 1).items.first)
        let order = try await shop.orders.create(
            OrderDraft(customerCode: customer.code, employeeID: 1, lines: [OrderLineDraft(productID: productID, quantity: 1)])
        )
        try await company.sync("oxf")
        return (order.order.number, product)
    }

    /// A company with one shop, "oxf", started and synced, and its sync server backed up into the returned folder.
    static func companyWithItsServerBackedUp() async throws -> (Company, String) {
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let folder = company.directory.appendingPathComponent("server-backup").path
        _ = try ServerBackup.create(database: company.database, folder: folder)
        return (company, folder)
    }

    static func copy(from source: String, to destination: String) throws {
        let from = try DatabaseQueue(path: source)
        let to = try DatabasePool(path: destination)
        try from.backup(to: to)
        try to.close()
        try from.close()
    }
}
