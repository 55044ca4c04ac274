import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import SyncProtocol
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

/// Every write goes through one gate: each stored field's rule (`RecordRules`) is refused on every path, with the
/// same message, and a refused write changes nothing.
@Suite("The write gate")
struct WriteGateTests {
    static let demo = DemoData.Options(scale: 1, seed: 5, endDate: LocalDate("2026-06-30") ?? .today)

    /// A value that breaks `rule`, as a client could send it.
    static func badValue(_ rule: FieldRule) -> DatabaseValue {
        switch rule {
        case .text(let max): String(repeating: "é", count: max + 1).databaseValue
        case .customerCode: "A/B".databaseValue
        case .documentNumber: "..".databaseValue
        case .money: Int64.max.databaseValue
        case .whole(let range): (range.upperBound + 1).databaseValue
        case .date: "1997-02-29".databaseValue
        case .timestamp: "yesterday".databaseValue
        }
    }

    @Test func everyRuledFieldOfEveryTableIsRefusedOnTheStoresConnectionWithTheRulesMessage() async throws {
        // Given a demo store, and every field with a rule, read from the rules and the schema (not a list kept here)
        let store = try TemporaryStore(seed: Self.demo)
        var tried = 0
        for (table, rules) in RecordRules.tables.sorted(by: { $0.key < $1.key }) {
            let columns = try await store.store.pool.read { db in try Set(db.columns(in: table).map(\.name)) }
            for (column, rule) in rules.sorted(by: { $0.key < $1.key }) where columns.contains(column) {
                guard let id = try await store.store.pool.read({ db in try Int64.fetchOne(db, sql: "SELECT id FROM \(table) LIMIT 1") }) else {
                    continue
                }
                let bad = Self.badValue(rule)
                // When any write on the store's connection sets it (here plain SQL, as any path would)
                let error = await northwindError {
                    try await store.backoffice.write { db in
                        try db.execute(sql: "UPDATE \(table) SET \(column.quotedDatabaseIdentifier) = ? WHERE id = ?", arguments: [bad, id])
                    }
                }
                // Then it is refused with the rule's own message, naming the field as clients do, and nothing changed
                let expected = try #require(RecordRules.check(table, column, bad))
                #expect(error == .invalid([expected]), "\(table).\(column): \(error?.description ?? "accepted")")
                let stored = try await store.store.pool.read { db in
                    try DatabaseValue.fetchOne(db, sql: "SELECT \(column.quotedDatabaseIdentifier) FROM \(table) WHERE id = ?", arguments: [id])
                }
                #expect(stored != bad, "\(table).\(column) was written")
                tried += 1
            }
        }
        // And the demo data has rows in enough tables that most rules were tried
        #expect(tried >= 60, "only \(tried) fields tried")
    }

    @Test func everySyncedTableWithTextHasRulesForEachOfItsFreeTextColumns() async throws {
        // Given the schema of a new store
        let store = try TemporaryStore()
        // When its synced tables' text columns are read from SQLite
        let unruled = try await store.store.pool.read { db in
            try Store.syncedTables.flatMap { table in
                try db.columns(in: table).filter { $0.type.uppercased() == "TEXT" }.map(\.name).filter { column in
                    // Columns whose values the store writes or a CHECK constrains are not free text.
                    let fixed: Set<String> = [
                        "recordID", "status", "reason", "parentIDs", "pictureFile", "photoFile",
                    ]
                    return !fixed.contains(column) && RecordRules.tables[table]?[column] == nil
                }.map { "\(table).\($0)" }
            }
        }
        // Then every free text column has a rule, so a column added later cannot skip the gate
        #expect(unruled.isEmpty, "text columns without a rule: \(unruled)")
    }

    @Test func aTransferNotePastItsLimitIsRefusedNamingTheFieldAndTheStoreDoesNotGrow() async throws {
        // Given a store that has joined a company with another location
        let store = try TemporaryStore(seed: Self.demo)
        let before = try store.count("SELECT count(*) FROM stock_transfers")
        // When a transfer is sent with a 1.5 MB note
        let error = await northwindError {
            _ = try await store.backoffice.stock.send(productID: 1, quantity: 1, to: "LON", note: String(repeating: "x", count: 1_500_000))
        }
        // Then it is refused naming the note and its limit, before anything is written
        #expect(error == .invalid([.init("note", "must be at most 500 characters")]))
        #expect(try store.count("SELECT count(*) FROM stock_transfers") == before)
    }

    /// A package exported here, its content changed by `change`, its manifest's checksum made to match.
    static func forged<T: Codable>(_ file: URL, kind: DocumentKind, as type: T.Type, _ change: (inout T) -> Void) throws -> URL {
        let archive = try SafeArchive(url: file, mediaType: kind.mediaType, limits: DocumentPackages.limits, what: "x")
        var entries = try archive.paths.filter { $0 != "mimetype" }.map { ($0, try archive.read($0, limit: 1 << 24)) }
        let contentIndex = try #require(entries.firstIndex { $0.0 == kind.root })
        var content = try JSONDecoder().decode(T.self, from: entries[contentIndex].1)
        change(&content)
        let data = try JSONEncoder().encode(content)
        entries[contentIndex].1 = data
        let scratch = file.deletingLastPathComponent().appendingPathComponent(UUID().uuidString)
        try data.write(to: scratch)
        let hash = try sha256(of: scratch)
        let manifestIndex = try #require(entries.firstIndex { $0.0 == "manifest.json" })
        var manifest = try JSONDecoder().decode(DocumentManifest.self, from: entries[manifestIndex].1)
        for index in manifest.entries.indices where manifest.entries[index].path == kind.root {
            manifest.entries[index].sha256 = hash.sha256
            manifest.entries[index].size = hash.size
        }
        entries[manifestIndex].1 = try JSONEncoder().encode(manifest)
        let forged = file.deletingLastPathComponent().appendingPathComponent("forged-" + file.lastPathComponent)
        let writer = try ArchiveWriter(creating: forged, mediaType: kind.mediaType)
        for (path, data) in entries { try writer.add(path, data, compress: false) }
        return forged
    }

    @Test func anOrderPackageWithFreightPastTheLimitIsRefusedAndImportsNothing() async throws {
        // Given an order's package whose freight was set to 2^63-1 cents, checksums made to match
        let (here, there, place) = try DocumentPackageTests.pair()
        let number = try #require(try await here.backoffice.orders.list().items.first?.order.number)
        let file = try DocumentPackageTests.file(place, "order.nwdoc")
        try await here.backoffice.documents.exportOrder(number: number, to: file)
        let forged = try Self.forged(file, kind: .order, as: OrderDocument.self) { $0.freight = Money(cents: .max) }
        let orders = try there.count("SELECT count(*) FROM orders")
        // When it is imported
        let error = await northwindError { _ = try await there.backoffice.documents.importFile(forged, dryRun: false) }
        // Then it is refused with the freight's rule, as a form would say it, and no order was added
        #expect(error?.description.contains("freight: must be from 0.00 to 9,999,999.99") == true, "\(error?.description ?? "accepted")")
        #expect(try there.count("SELECT count(*) FROM orders") == orders)
    }

    @Test func aCataloguePackageWithAReorderLevelPastTheLimitIsRefused() async throws {
        // Given a catalogue package with a new product whose reorder level is past a billion
        let (here, there, place) = try DocumentPackageTests.pair()
        let file = try DocumentPackageTests.file(place, "catalog.nwdoc")
        try await here.backoffice.documents.exportCatalog(to: file)
        let forged = try Self.forged(file, kind: .catalog, as: CatalogDocument.self) { document in
            document.products[0].recordID = newRecordID()
            document.products[0].name = "Forged product"
            document.products[0].reorderLevel = 2_000_000_000
        }
        // When it is imported
        let error = await northwindError { _ = try await there.backoffice.documents.importFile(forged, dryRun: false) }
        // Then it is refused with the reorder level's rule, and the product is not there
        #expect(error?.description.contains("reorderLevel: must be a whole number from 0 to 1,000,000,000") == true, "\(error?.description ?? "")")
        #expect(try there.count("SELECT count(*) FROM products WHERE name = 'Forged product'") == 0)
    }

    @Test(arguments: [("A/B", "code"), ("%2F", "code"), ("NEW-OXF", "code"), ("NEW-OXF-2", "code")])
    func aPackageWhoseCustomerCodeIsNoCodeIsRefused(_ code: String, _ field: String) async throws {
        // Given a quote's package for a customer this store lacks, whose code is not letters and digits (or is in the
        // form only sync gives, settling a clash)
        let (here, there, place) = try DocumentPackageTests.pair()
        let (_, quote) = try await QuoteTests.quoted(in: here)
        let file = try DocumentPackageTests.file(place, "quote.nwdoc")
        try await here.backoffice.documents.exportQuote(number: quote.number, to: file)
        let forged = try Self.forged(file, kind: .quote, as: QuoteDocument.self) { $0.customer.code = code }
        // When it is imported
        let error = await northwindError { _ = try await there.backoffice.documents.importFile(forged, dryRun: false) }
        // Then the customer code's rule refuses it, as creating the customer by hand would, and nothing was added
        #expect(error == .invalid([.init(field, FieldRule.customerCodeMessage)]), "\(error?.description ?? "accepted")")
        #expect(try there.count("SELECT count(*) FROM quotes") == 0)
    }

    @Test func aCustomerAddedByAnImportWithAMegabyteAddressIsRefused() async throws {
        // Given a quote's package for a new customer whose address is 1.2 MB
        let (here, there, place) = try DocumentPackageTests.pair()
        let (_, quote) = try await QuoteTests.quoted(in: here)
        let file = try DocumentPackageTests.file(place, "quote.nwdoc")
        try await here.backoffice.documents.exportQuote(number: quote.number, to: file)
        let forged = try Self.forged(file, kind: .quote, as: QuoteDocument.self) { document in
            document.customer.code = "NEWCO"
            document.customer.address = String(repeating: "x", count: 1_200_000)
        }
        // When it is imported
        let error = await northwindError { _ = try await there.backoffice.documents.importFile(forged, dryRun: false) }
        // Then the address's rule refuses it and the customer was not added
        #expect(error == .invalid([.init("address", "must be at most 200 characters")]), "\(error?.description ?? "accepted")")
        #expect(try there.count("SELECT count(*) FROM customers WHERE code = 'NEWCO'") == 0)
    }

    @Test func anImportedOrderTakesThisSitesNextNumberAndKeepsThePackagesAsItsSource() async throws {
        // Given an order's package numbered as another shop's order would be
        let (here, there, place) = try DocumentPackageTests.pair()
        let number = try #require(try await here.backoffice.orders.list().items.first?.order.number)
        let file = try DocumentPackageTests.file(place, "order.nwdoc")
        try await here.backoffice.documents.exportOrder(number: number, to: file)
        let forged = try Self.forged(file, kind: .order, as: OrderDocument.self) { $0.number = "OTHER1-77" }
        // When it is imported
        let plan = try await there.backoffice.documents.importFile(forged, dryRun: false)
        // Then the order has this site's next number, not the package's, and the package's is kept beside it
        let site = try await there.backoffice.sync.siteCode()
        let fetched = try there.store.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT number, sourceNumber FROM orders ORDER BY id DESC LIMIT 1")
        }
        let row = try #require(fetched)
        #expect((row["number"] as String).hasPrefix(site + "-"))
        #expect(row["sourceNumber"] as String? == "OTHER1-77")
        #expect(plan.adds.first?.contains("(their OTHER1-77)") == true)
        #expect(try there.count("SELECT count(*) FROM orders WHERE number = 'OTHER1-77'") == 0)
    }

    @Test(arguments: ["..", "%2e%2e", "a?b=1"])
    func anImportedQuoteNumberedAsAPathGetsThisSitesNumber(_ number: String) async throws {
        // Given a quote's package whose number is no quote number
        let (here, there, place) = try DocumentPackageTests.pair()
        let (_, quote) = try await QuoteTests.quoted(in: here)
        let file = try DocumentPackageTests.file(place, "quote.nwdoc")
        try await here.backoffice.documents.exportQuote(number: quote.number, to: file)
        let forged = try Self.forged(file, kind: .quote, as: QuoteDocument.self) { $0.number = number }
        // When it is imported
        _ = try await there.backoffice.documents.importFile(forged, dryRun: false)
        // Then the quote has this site's number and keeps the package's only as its source
        let fetched = try there.store.pool.read { db in try Row.fetchOne(db, sql: "SELECT number, sourceNumber FROM quotes") }
        let row = try #require(fetched)
        let site = try await there.backoffice.sync.siteCode()
        #expect((row["number"] as String).hasPrefix(site + "-Q"))
        #expect(row["sourceNumber"] as String? == number)
    }

    @Test func tenConcurrentBackupsEachGetAFileOfTheirOwn() async throws {
        // Given a demo store and an empty backup folder
        let store = try TemporaryStore(seed: Self.demo)
        let place = BackupPlace()
        let folder = place.folder
        // When ten backups are taken at once (the same second, the same kind)
        let results = await withTaskGroup(of: Result<BackupListing, NorthwindError>.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        return .success(try await store.backoffice.backups.create(in: folder, kind: .manual))
                    } catch let error as NorthwindError {
                        return .failure(error)
                    } catch {
                        return .failure(.storeUnavailable("\(error)"))
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        // Then every one succeeds, with a file of its own, and each file verifies
        let files = results.compactMap { (result: Result<BackupListing, NorthwindError>) -> URL? in try? result.get().file }
        #expect(files.count == 10, "\(results)")
        #expect(Set(files.map { $0.path }).count == 10)
        #expect(folder.list().count == 10)
    }

    /// Lines at the limits: prices up to 9,999,999.99, quantities up to 1,000,000, discounts 0 to 100% in halves.
    static func randomLines(_ random: inout SplitMix64, products: [Int64]) -> [OrderLineDraft] {
        products.shuffled(using: &random).prefix(Int(random.next() % 5) + 1).map { id in
            let price = Int(random.next() % 4) == 0 ? 999_999_999 : Int(random.next() % 1_000_000_000)
            let quantity = Int(random.next() % 3) == 0 ? 1_000_000 : Int(random.next() % 1_000_000) + 1
            return OrderLineDraft(productID: id, quantity: quantity, discount: Double(random.next() % 201) / 200, unitPrice: Money(cents: price))
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5])
    func aQuotesTotalIsTheTotalOfTheOrderItBecomes(seed: UInt64) async throws {
        // Given a quote of random lines at the limits (seeded; the seed is in the test's name)
        let store = try TemporaryStore(seed: Self.demo)
        let b = store.backoffice
        var random = SplitMix64(seed: seed)
        let products = try await b.store.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM products WHERE NOT discontinued") }
        let lines = Self.randomLines(&random, products: products).map {
            QuoteLine(productID: $0.productID, productName: "", quantity: $0.quantity, unitPrice: $0.unitPrice ?? .zero, discount: $0.discount)
        }
        let customer = try #require(try await b.records.list(Customer.self, limit: 1).items.first)
        let quote = try await b.quotes.create(QuoteContent(customerCode: customer.code, validUntil: .today, lines: lines), by: QuoteTests.nancy)
        // When it becomes an order
        let order = try await b.quotes.convert(number: quote.number, employeeID: nil, editor: QuoteTests.nancy)
        // Then the quote's total, and the list's, are the order's, to the cent
        #expect(quote.content.total == order.subtotal, "seed \(seed): \(lines)")
        let listed = try #require(try await b.quotes.list(all: true).first { $0.number == quote.number })
        #expect(listed.total == order.subtotal, "seed \(seed)")
    }

    @Test func anAutosaveThatAddsADiscontinuedProductIsRefusedAndChangesNothing() async throws {
        // Given a quote held by Nancy, and a discontinued product
        let (store, quote) = try await QuoteTests.quoted()
        let b = store.backoffice
        let discontinued = try await b.catalogue.create(Product(name: "Old stock", unitPrice: Money(cents: 100), discontinued: true))
        _ = try await b.quotes.open(number: quote.number, editor: QuoteTests.nancy)
        var content = quote.content
        content.lines.append(
            QuoteLine(productID: discontinued.id ?? 0, productName: "Old stock", quantity: 1, unitPrice: Money(cents: 100), discount: 0)
        )
        // When her autosave adds a line of it
        let error = await northwindError {
            _ = try await b.quotes.saveDraft(
                number: quote.number,
                base: quote.content,
                content: content,
                history: QuoteHistory(),
                editor: QuoteTests.nancy
            )
        }
        // Then it is refused as adding the line is, and the quote is as it was
        #expect(error == .invalid([.init("productID", "'Old stock' is discontinued and can no longer be quoted")]))
        #expect(try await b.quotes.quote(number: quote.number).content == quote.content)
    }

    @Test func aReadOnlyViewerCannotConvertSomeoneElsesQuote() async throws {
        // Given a quote Nancy holds, which Andrew sees read-only
        let (store, quote) = try await QuoteTests.quoted()
        let b = store.backoffice
        let andrew = QuoteEditor(login: "andrew.fuller", name: "Andrew Fuller")
        _ = try await b.quotes.open(number: quote.number, editor: QuoteTests.nancy)
        // When Andrew converts it
        let error = await northwindError { _ = try await b.quotes.convert(number: quote.number, employeeID: nil, editor: andrew) }
        // Then he is refused, naming who edits it, and it is still a draft with no order
        #expect(error == .conflict("Nancy Davolio is editing quote \(quote.number); it is read-only for you."))
        #expect(try await b.quotes.quote(number: quote.number).status == .draft)
    }

    @Test func rowsWrittenPastTheGateAreNamedByTheCheckARestoreRuns() async throws {
        // Given a store file edited by a plain connection, as an editor of the file would, which skips the gate
        let store = try TemporaryStore(seed: Self.demo)
        let queue = try DatabaseQueue(path: store.path)
        try await queue.write { db in
            try db.execute(
                sql: "UPDATE customers SET city = ? WHERE id = (SELECT min(id) FROM customers)",
                arguments: [String(repeating: "x", count: 1 << 20)]
            )
        }
        try queue.close()
        // When the rules are checked over its rows, as a restore does before it swaps a backup in
        let violations = try await store.store.pool.read { db in try RecordRules.violations(db) }
        // Then the row and the rule are named
        #expect(violations.count == 1)
        #expect(violations.first?.hasPrefix("customers #") == true && violations.first?.hasSuffix("city must be at most 100 characters") == true)
    }
}
