import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing
import ZIPFoundation

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Document packages")
struct DocumentPackageTests {
    static let demo = DemoData.Options(scale: 1, seed: 11, endDate: LocalDate("2026-06-30") ?? .today)

    /// Two stores with the same demo data made apart (names and codes agree, record ids do not), and a folder.
    static func pair() throws -> (TemporaryStore, TemporaryStore, BackupPlace) {
        (try TemporaryStore(seed: demo), try TemporaryStore(seed: demo), BackupPlace())
    }

    static func file(_ place: BackupPlace, _ name: String) throws -> URL {
        try FileManager.default.createDirectory(at: place.directory, withIntermediateDirectories: true)
        return place.directory.appendingPathComponent(name)
    }

    @Test func aQuoteTravelsToAnotherStoreAndASecondImportChangesNothing() async throws {
        // Given a quote at one store
        let (here, there, place) = try Self.pair()
        let (_, quote) = try await QuoteTests.quoted(in: here)
        let file = try Self.file(place, "quote.nwdoc")
        // When it is exported, imported at the other store, and imported again
        try await here.backoffice.documents.exportQuote(number: quote.number, to: file)
        let first = try await there.backoffice.documents.importFile(file, dryRun: false)
        let second = try await there.backoffice.documents.importFile(file, dryRun: false)
        // Then the other store has it, under its own next number, with the same lines and prices, and the second
        // import found it all there
        let number = try #require(try await there.backoffice.quotes.list(all: true).first?.number)
        #expect(number.hasPrefix(try await there.backoffice.sync.siteCode() + "-Q"))
        #expect(first.adds == ["quote \(number) (their \(quote.number)) for \(quote.customerName), 2 lines"])
        let arrived = try await there.backoffice.quotes.quote(number: number)
        #expect(arrived.content.lines.map(\.productName) == quote.content.lines.map(\.productName))
        #expect(arrived.content.lines.map(\.unitPrice) == quote.content.lines.map(\.unitPrice))
        #expect(arrived.content.total == quote.content.total)
        #expect(second.adds.isEmpty && second.updates.isEmpty && second.unchanged == 1)
    }

    @Test func anOrderWithItsInvoiceTravelsUnderThisSitesNumberAndKeepsItsOwnAsSource() async throws {
        // Given an order at one store
        let (here, there, place) = try Self.pair()
        let number = try #require(try await here.backoffice.orders.list().items.first?.order.number)
        let order = try await here.backoffice.orders.order(number: number)
        let file = try Self.file(place, "order.nwdoc")
        // When it is exported and imported at the other store
        try await here.backoffice.documents.exportOrder(number: number, to: file)
        let plan = try await there.backoffice.documents.importFile(file, dryRun: false)
        // Then it is there under this site's next number, its own kept as the source, with the same lines, and its
        // invoice prints from the package
        let local = try #require(
            try await there.store.pool.read { db in
                try String.fetchOne(db, sql: "SELECT number FROM orders WHERE sourceNumber = ?", arguments: [number])
            }
        )
        #expect(plan.adds.first?.hasPrefix("order \(local) (their \(number)) for \(order.customer.companyName)") == true)
        let arrived = try await there.backoffice.orders.order(number: local)
        #expect(arrived.lines.map(\.productName) == order.lines.map(\.productName))
        #expect(arrived.subtotal == order.subtotal)
        let html = String(
            decoding: try SafeArchive(url: file, mediaType: DocumentKind.order.mediaType, limits: DocumentPackages.limits, what: "x").read(
                "rendition/document.html",
                limit: 1 << 20
            ),
            as: UTF8.self
        )
        #expect(html.contains("<h1>Invoice for order \(number)</h1>"))
        #expect(!html.contains("<script"))
    }

    @Test func aCatalogueAddsProductsAndUpdatesPricesButNeverDeletes() async throws {
        // Given a catalogue from a store where one price went up, one product and one category with a picture are new;
        // and another store with a product of its own
        let (here, there, place) = try Self.pair()
        var product = try #require(try await here.backoffice.catalogue.list().items.first?.product)
        let oldPrice = product.unitPrice
        product.unitPrice = product.unitPrice + Money(cents: 100)
        _ = try await here.backoffice.catalogue.update(product)
        _ = try await here.backoffice.catalogue.create(Product(name: "Smoked Arctic Char", unitPrice: Money(cents: 2450)))
        let localOnly = try await there.backoffice.catalogue.create(Product(name: "Only at the other store", unitPrice: Money(cents: 100)))
        let file = try Self.file(place, "catalog.nwdoc")
        try await here.backoffice.documents.exportCatalog(to: file)
        // When the other store looks first, then imports it
        let dry = try await there.backoffice.documents.importFile(file, dryRun: true)
        let countBefore = try there.count("SELECT count(*) FROM products")
        let plan = try await there.backoffice.documents.importFile(file, dryRun: false)
        // Then the dry run said it all and changed nothing; the import added the product, updated the price, and
        // removed nothing
        #expect(dry == plan)
        #expect(plan.adds == ["product Smoked Arctic Char at 24.50"])
        #expect(plan.updates == ["the price of \(product.name): \(oldPrice) → \(product.unitPrice)"])
        #expect(try there.count("SELECT count(*) FROM products") == countBefore + 1)
        #expect(try there.backoffice.catalogue.product(id: localOnly.id ?? 0).product.name == "Only at the other store")
    }

    @Test func aPackageNamingAProductThisStoreLacksImportsNothing() async throws {
        // Given an order for a customer and a product that only the exporting store has
        let (here, there, place) = try Self.pair()
        let made = try await here.backoffice.catalogue.create(Product(name: "Made here only", unitPrice: Money(cents: 500)))
        var customer = Customer(code: "NEWCO", companyName: "New Company")
        customer.city = "Lyon"
        _ = try await here.backoffice.records.create(customer)
        let order = try await here.backoffice.orders.create(
            OrderDraft(customerCode: "NEWCO", employeeID: nil, lines: [OrderLineDraft(productID: made.id ?? 0, quantity: 2)])
        )
        let file = try Self.file(place, "order.nwdoc")
        try await here.backoffice.documents.exportOrder(number: order.order.number, to: file)
        // When the other store imports it
        let error = await northwindError { _ = try await there.backoffice.documents.importFile(file, dryRun: false) }
        // Then it is refused, naming the product, and not even the customer was added
        #expect(error?.description == "This store has no product Made here only: import a catalogue that has it first. Nothing was imported.")
        #expect(try there.count("SELECT count(*) FROM customers WHERE code = 'NEWCO'") == 0)
    }

    /// A package changed after it was written, and what its refusal must say.
    struct Tampering: Sendable, CustomTestStringConvertible {
        var name: String
        var refusal: String
        var change: @Sendable (inout [(String, Data)]) -> Void
        var testDescription: String { name }
    }

    static let tamperings: [Tampering] = [
        Tampering(name: "an entry the manifest does not list", refusal: "it holds media/extra.png, which its manifest does not list") {
            $0.append(("media/extra.png", Data([1, 2, 3])))
        },
        Tampering(name: "an entry the manifest lists, missing", refusal: "its manifest lists previews/thumbnail.png, which it does not hold") {
            $0.removeAll { $0.0 == "previews/thumbnail.png" }
        },
        Tampering(name: "a changed content", refusal: "content/quote.json does not match its checksum in the manifest") { entries in
            if let index = entries.firstIndex(where: { $0.0 == "content/quote.json" }) {
                entries[index].1 = Data(
                    String(decoding: entries[index].1, as: UTF8.self).replacingOccurrences(of: "\"quantity\" : 10", with: "\"quantity\" : 99").utf8
                )
            }
        },
        Tampering(
            name: "a newer format",
            refusal: "in document format 2, which this Northwind (\(NorthwindVersion.current)) cannot read: upgrade Northwind"
        ) { entries in
            if let index = entries.firstIndex(where: { $0.0 == "manifest.json" }) {
                entries[index].1 = Data(
                    String(decoding: entries[index].1, as: UTF8.self).replacingOccurrences(
                        of: "\"minReaderVersion\" : 1",
                        with: "\"minReaderVersion\" : 2"
                    )
                    .replacingOccurrences(of: "\"formatVersion\" : 1", with: "\"formatVersion\" : 2").utf8
                )
            }
        },
        Tampering(
            name: "another kind than its type",
            refusal: "its manifest says northwind-document order, its type application/vnd.northwind.quote+zip"
        ) { entries in
            if let index = entries.firstIndex(where: { $0.0 == "manifest.json" }) {
                entries[index].1 = Data(
                    String(decoding: entries[index].1, as: UTF8.self).replacingOccurrences(of: "\"kind\" : \"quote\"", with: "\"kind\" : \"order\"")
                        .utf8
                )
            }
        },
    ]

    @Test(arguments: tamperings)
    func aTamperedPackageIsRefusedAndImportsNothing(_ tampering: Tampering) async throws {
        // Given a quote's package, changed after it was written
        let (here, there, place) = try Self.pair()
        let (_, quote) = try await QuoteTests.quoted(in: here)
        let file = try Self.file(place, "quote.nwdoc")
        try await here.backoffice.documents.exportQuote(number: quote.number, to: file)
        let archive = try SafeArchive(url: file, mediaType: DocumentKind.quote.mediaType, limits: DocumentPackages.limits, what: "x")
        var entries = try archive.paths.filter { $0 != "mimetype" }.map { ($0, try archive.read($0, limit: 1 << 24)) }
        tampering.change(&entries)
        let tampered = try Self.file(place, "tampered.nwdoc")
        let writer = try ArchiveWriter(creating: tampered, mediaType: DocumentKind.quote.mediaType)
        for (path, data) in entries { try writer.add(path, data, compress: false) }
        // When it is imported
        let error = await northwindError { _ = try await there.backoffice.documents.importFile(tampered, dryRun: false) }
        // Then it is refused, saying why, and the store has no quote
        #expect(error?.description.contains(tampering.refusal) == true, "\(error?.description ?? "no error")")
        #expect(try there.count("SELECT count(*) FROM quotes") == 0)
    }

    @Test func theThumbnailIsAPNGOfTheRightSize() async throws {
        // Given a quote's package
        let (here, _, place) = try Self.pair()
        let (_, quote) = try await QuoteTests.quoted(in: here)
        let file = try Self.file(place, "quote.nwdoc")
        try await here.backoffice.documents.exportQuote(number: quote.number, to: file)
        // When its thumbnail is read
        let png = [UInt8](
            try SafeArchive(url: file, mediaType: DocumentKind.quote.mediaType, limits: DocumentPackages.limits, what: "x").read(
                "previews/thumbnail.png",
                limit: 1 << 20
            )
        )
        // Then it is a PNG, 256 by 256
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(Array(png[16..<24]) == [0, 0, 1, 0, 0, 0, 1, 0])
    }
}
