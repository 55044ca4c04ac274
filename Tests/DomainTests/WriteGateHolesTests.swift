import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import SyncProtocol
import Testing

@_spi(SyncEngine) @testable import Northwind
@testable import NorthwindTestSupport

/// What a hostile review found past the gate: dates as any text, settings a restore took unchecked, the customer
/// codes only sync may give, and a NUL that cut text short.
@Suite("The write gate: what got past it")
struct WriteGateHolesTests {
    static let demo = DemoData.Options(scale: 1, seed: 5, endDate: LocalDate("2026-06-30") ?? .today)

    /// A demo store joined as head office, everything it had counted as sent.
    static func joinedHeadOffice() async throws -> TemporaryStore {
        let store = try TemporaryStore(seed: Self.demo)
        try await store.backoffice.syncEngine.join(ShopSyncTests.membership("HQ", role: "hq"), containerHasData: false)
        try await store.store.pool.write { db in try ShopSync.setState(db, "uploadedThrough", String(try SyncEngineSide.lastSeq(db))) }
        return store
    }

    @Test(arguments: ["garbage", "1997-02-29", "1997-2-3", "1997-02-03 and more"])
    func anEmployeeArrivingBySyncWithABirthDateThatIsNoDayGoesToTheInboxAndEmployeesStillList(_ date: String) async throws {
        // Given head office, joined
        let store = try await Self.joinedHeadOffice()
        let before = try store.count("SELECT count(*) FROM employees")
        // When another site's employee arrives whose birth date is not a day
        let forged = SyncRecord(
            recordName: UUID().uuidString.lowercased(),
            recordType: "employees",
            zoneID: ZoneID("people"),
            fields: ["lastName": .string("Forged"), "firstName": .string("Fay"), "birthDate": .string(date)]
        )
        let applied = try await store.backoffice.syncEngine.applyDownloaded(zone: "people", records: [forged], token: "t1")
        // Then it is not stored, the inbox keeps it whole naming the rule, and the employees still list
        #expect(applied.discarded == 1)
        #expect(try store.count("SELECT count(*) FROM employees") == before)
        let conflict = try #require(try await store.backoffice.sync.conflicts().first)
        #expect(conflict.reason.contains("birthDate: \(FieldRule.dateMessage)"), "\(conflict.reason)")
        #expect(try await store.backoffice.records.list(Employee.self).items.count == before)
    }

    @Test func anOrderDateThatIsNoDayIsRefusedOnTheStoresConnection() async throws {
        // Given a demo store
        let store = try TemporaryStore(seed: Self.demo)
        // When any write sets an order's date to text that is not a day
        let error = await northwindError {
            try await store.backoffice.write { db in
                try db.execute(sql: "UPDATE orders SET orderDate = 'soon' WHERE id = (SELECT min(id) FROM orders)")
            }
        }
        // Then the gate refuses it with the date rule
        #expect(error == .invalid([.init("orderDate", FieldRule.dateMessage)]))
        #expect(try store.count("SELECT count(*) FROM orders WHERE orderDate = 'soon'") == 0)
    }

    /// A customer another site had, renamed by sync ("ALFKI-OXF"), arriving by sync.
    static func receiveRenamedCustomer(_ store: TemporaryStore) async throws -> SyncApplied {
        let renamed = SyncRecord(
            recordName: UUID().uuidString.lowercased(),
            recordType: "customers",
            zoneID: ZoneID("customers"),
            fields: ["code": .string("ALFKI-OXF"), "companyName": .string("Alfreds, Oxford's")]
        )
        return try await store.backoffice.syncEngine.applyDownloaded(zone: "customers", records: [renamed], token: "t1")
    }

    @Test func aCustomerCodeInTheFormSyncGivesIsTakenFromSyncOnly() async throws {
        // Given head office, joined
        let store = try await Self.joinedHeadOffice()
        // When a customer renamed by sync ("ALFKI-OXF") arrives, and one in the same form is written by hand
        let applied = try await Self.receiveRenamedCustomer(store)
        let error = await northwindError {
            try await store.backoffice.write { db in
                try db.execute(sql: "INSERT INTO customers (code, companyName) VALUES ('NEW-OXF', 'By hand')")
            }
        }
        // Then sync's is stored, and the one by hand is refused with the code's rule
        #expect(applied.discarded == 0)
        #expect(try store.count("SELECT count(*) FROM customers WHERE code = 'ALFKI-OXF'") == 1)
        #expect(error == .invalid([.init("code", FieldRule.customerCodeMessage)]))
        #expect(try store.count("SELECT count(*) FROM customers WHERE code = 'NEW-OXF'") == 0)
    }

    @Test func aFailedSyncApplyLeavesNoLicenceForSyncsFormsBehind() async throws {
        // Given head office, joined, and a page from sync that fails halfway (a picture whose bytes never came)
        let store = try await Self.joinedHeadOffice()
        let named = Data(repeating: 1, count: 600)
        let reference = AssetReference(sha256: RecordMapping.sha256(named), size: 600, contentType: "image/png")
        let page = [
            SyncRecord(
                recordName: UUID().uuidString.lowercased(),
                recordType: "categories",
                zoneID: ZoneID("catalog"),
                fields: ["name": .string("Pictured"), "picture": .asset(reference)]
            )
        ]
        let failure = await northwindError {
            _ = try await store.backoffice.syncEngine.applyDownloaded(
                zone: "catalog",
                records: page,
                token: "t1",
                assets: [reference.sha256: Data(repeating: 2, count: 600)]
            )
        }
        #expect(failure != nil)
        // When a customer in sync's form is then written by hand
        let error = await northwindError {
            try await store.backoffice.write { db in
                try db.execute(sql: "INSERT INTO customers (code, companyName) VALUES ('NEW-OXF', 'By hand')")
            }
        }
        // Then it is still refused
        #expect(error == .invalid([.init("code", FieldRule.customerCodeMessage)]))
    }

    @Test(arguments: [
        ("settings", "session.managerTitles", ";;;"),
        ("settings", "pages.pageSize", "100000"),
        ("settings", "log.level", "nonsense"),
        ("settings", "server.host", "bad host"),
        ("user_settings", "display.density", "tiny"),
    ])
    func aBackupWhoseSettingsBreakTheirRulesIsNotRestored(_ table: String, _ key: String, _ value: String) async throws {
        // Given a backup of a store whose settings table was edited by hand
        let made = try await Self.backup(settingsTable: table, key, value)
        // When it is restored
        let (error, restored) = await Self.restore(made)
        // Then nothing is restored, and the message names the key
        #expect(error?.description.contains(key) == true, "\(error?.description ?? "restored")")
        #expect(!restored)
    }

    @Test(arguments: [("session.managerTitles", "Chief Taster"), ("server.host", "no-such-host.invalid")])
    func aBackupWhoseSettingsDependOnTheMachineOrLaterEditsIsRestored(_ key: String, _ value: String) async throws {
        // Given a backup whose settings name titles no one holds now (an employee's title changed after the setting
        // was saved) or a host name another machine resolved
        let made = try await Self.backup(settingsTable: "settings", key, value)
        // When it is restored, on a machine that does not resolve that name
        let target = made.place.fresh()
        _ = try await Restore.perform(made.file, over: target, folder: made.place.folder, force: false)
        // Then it is restored (serve warns of such values; a recovery must not wait on them), readable by its owner
        // only
        #expect(target.exists)
        let mode = try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? Int ?? 0
        #expect(mode & 0o777 == 0o600, "\(String(mode, radix: 8))")
    }

    /// A backup of a demo store whose `table` holds `key` = `value`, written by hand.
    static func backup(settingsTable table: String, _ key: String, _ value: String) async throws -> (place: BackupPlace, file: URL) {
        try await backup { db in
            if table == "settings" {
                try db.execute(sql: "INSERT INTO settings (key, value) VALUES (?, ?)", arguments: [key, value])
            } else {
                let login = try String.fetchOne(db, sql: "SELECT login FROM credentials LIMIT 1") ?? "nancy"
                try db.execute(sql: "INSERT INTO user_settings (login, key, value) VALUES (?, ?, ?)", arguments: [login, key, value])
            }
        }
    }

    /// A backup of a demo store edited by `edit` on a plain connection, past the gate, as an editor of the file would.
    static func backup(editedBy edit: @escaping @Sendable (Database) throws -> Void) async throws -> (place: BackupPlace, file: URL) {
        let place = BackupPlace()
        let source = try TemporaryStore(seed: Self.demo)
        try source.store.close()
        let queue = try DatabaseQueue(path: source.path)
        try await queue.write(edit)
        let made = try BackupWriter.write(
            from: queue,
            pictures: StoreFiles(path: source.path).external,
            storePath: source.path,
            to: place.folder,
            kind: .manual
        )
        try queue.close()
        return (place, made.file)
    }

    /// Restores `backup` into a fresh path: the refusal, and whether a store was made.
    static func restore(_ backup: (place: BackupPlace, file: URL)) async -> (error: NorthwindError?, made: Bool) {
        let target = backup.place.fresh()
        let error = await northwindError { _ = try await Restore.perform(backup.file, over: target, folder: backup.place.folder, force: false) }
        return (error, target.exists)
    }

    @Test func aBackupWhoseDatesAreNoDaysIsNotRestored() async throws {
        // Given a backup of a store whose employee's birth date was edited by hand into text
        let made = try await Self.backup { db in try db.execute(sql: "UPDATE employees SET birthDate = 'garbage' WHERE id = 1") }
        // When it is restored
        let (error, restored) = await Self.restore(made)
        // Then nothing is restored, and the message names the row and the rule
        #expect(error?.description.contains("employees #1: birthDate \(FieldRule.dateMessage)") == true, "\(error?.description ?? "restored")")
        #expect(!restored)
    }

    @Test(arguments: ["", " ; ;; ", ";;;"])
    func managerTitlesThatNameNoTitleAreRefusedInEveryLayer(_ value: String) throws {
        // Given the manager titles setting, as the environment, a settings file, --setting and --manager-title give it
        let setting = try Setting.named("session.managerTitles")
        // When a value naming no title is checked, as each layer checks what it takes
        var refusal = "accepted"
        do { _ = try setting.canonical(value) } catch { refusal = error.description }
        // Then it is refused, saying titles are separated by semicolons
        #expect(refusal.contains("must name at least one job title"), "\(refusal)")
    }

    @Test func aBackupWhoseTextHoldsANULIsNotRestored() async throws {
        // Given a backup of a store whose customer's name was edited by hand to hold a NUL, which text read back hides
        let made = try await Self.backup { db in
            try db.execute(sql: "UPDATE customers SET companyName = 'Good' || char(0) || 'hidden' WHERE id = 1")
        }
        // When it is restored
        let (error, restored) = await Self.restore(made)
        // Then nothing is restored, and the row is named
        #expect(error?.description.contains("customers #1: companyName \(FieldRule.nulMessage)") == true, "\(error?.description ?? "restored")")
        #expect(!restored)
    }

    @Test(arguments: ["2024-+1-+1T00:00:00Z", "+202-01-01T00:00:00.000Z", "2024-01-01T00:00:00Z"])
    func aMomentNotWrittenAsTheStoreWritesItIsRefused(_ moment: String) async throws {
        // Given a demo store
        let store = try TemporaryStore(seed: Self.demo)
        // When a movement's moment is set to a form the store never writes
        let error = await northwindError {
            try await store.backoffice.write { db in
                try db.execute(sql: "UPDATE stock_movements SET createdAt = ? WHERE id = (SELECT min(id) FROM stock_movements)", arguments: [moment])
            }
        }
        // Then the gate refuses it
        #expect(error == .invalid([.init("createdAt", FieldRule.timestampMessage)]))
    }

    @Test func aCustomerWhoseCodeSyncGaveCanStillBeEdited() async throws {
        // Given head office holding a customer sync renamed ("ALFKI-OXF")
        let store = try await Self.joinedHeadOffice()
        _ = try await Self.receiveRenamedCustomer(store)
        var customer = try store.backoffice.people.customer(code: "ALFKI-OXF")
        // When someone edits its name, leaving the code
        customer.companyName = "Alfreds of Oxford"
        let saved = try await store.backoffice.records.update(customer)
        // Then the edit is saved; the code stays as sync gave it
        #expect(saved.companyName == "Alfreds of Oxford")
        #expect(try store.backoffice.people.customer(code: "ALFKI-OXF").companyName == "Alfreds of Oxford")
    }

    @Test func textHoldingANULIsRefusedByTheRuleBeforeTheStoreCutsItShort() async throws {
        // Given a demo store
        let store = try TemporaryStore(seed: Self.demo)
        // When a customer is created whose city holds a NUL
        var customer = Customer(code: "NULCO", companyName: "Nul Company")
        customer.city = "a\u{0}b"
        let error = await northwindError { _ = try await store.backoffice.records.create(customer) }
        // Then it is refused naming the field, and nothing was stored
        #expect(error == .invalid([.init("city", FieldRule.nulMessage)]))
        #expect(try store.count("SELECT count(*) FROM customers WHERE code = 'NULCO'") == 0)
    }

    @Test func aPackageWhoseTextHoldsANULIsRefused() async throws {
        // Given a quote's package whose new customer's name holds an escaped NUL
        let (here, there, place) = try DocumentPackageTests.pair()
        let (_, quote) = try await QuoteTests.quoted(in: here)
        let file = try DocumentPackageTests.file(place, "quote.nwdoc")
        try await here.backoffice.documents.exportQuote(number: quote.number, to: file)
        let forged = try WriteGateTests.forged(file, kind: .quote, as: QuoteDocument.self) { document in
            document.customer.code = "NULCO"
            document.customer.companyName = "a\u{0}b"
        }
        // When it is imported
        let error = await northwindError { _ = try await there.backoffice.documents.importFile(forged, dryRun: false) }
        // Then it is refused saying why, and the customer was not added
        #expect(error?.description.contains("NUL") == true, "\(error?.description ?? "accepted")")
        #expect(try there.count("SELECT count(*) FROM customers WHERE code = 'NULCO'") == 0)
    }

    @Test func aNewQuoteValidUntilAPastDayIsRefused() async throws {
        // Given a demo store and a quote's content valid until yesterday
        let store = try TemporaryStore(seed: Self.demo)
        let content = QuoteContent(customerCode: "ALFKI", validUntil: LocalDate.today.adding(days: -1), notes: "", lines: [])
        // When it is created
        let error = await northwindError { _ = try await store.backoffice.quotes.create(content, by: QuoteEditor(login: "nancy", name: "Nancy")) }
        // Then it is refused naming the field, and no quote was made
        #expect(error?.description.hasPrefix("validUntil: must be today") == true, "\(error?.description ?? "accepted")")
        #expect(try store.count("SELECT count(*) FROM quotes") == 0)
    }
}
