import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Quotes")
struct QuoteTests {
    static let nancy = QuoteEditor(login: "nancy.davolio", name: "Nancy Davolio")
    static let janet = QuoteEditor(login: "janet.leverling", name: "Janet Leverling")

    /// A demo store with a quote for VINET: 10 of product 1 and 5 of product 2 at 10% off.
    static func quoted(in given: TemporaryStore? = nil) async throws -> (TemporaryStore, Quote) {
        let store = try given ?? TemporaryStore(seed: DemoData.Options(scale: 1, seed: 5, endDate: LocalDate("2026-06-30") ?? .today))
        let b = store.backoffice
        let customer = try #require(try await b.records.list(Customer.self, limit: 1).items.first?.code)
        let ids = try await b.catalogue.list().items.filter { !$0.product.discontinued }.prefix(2).compactMap(\.product.id)
        let content = QuoteContent(
            customerCode: customer,
            validUntil: LocalDate("2026-12-31") ?? .today,
            notes: "Delivery in two parts",
            lines: [try b.quotes.newLine(productID: ids[0], quantity: 10), try b.quotes.newLine(productID: ids[1], quantity: 5, discount: 0.1)]
        )
        return (store, try await b.quotes.create(content, by: nancy))
    }

    @Test func aQuoteBecomesAnOrderAtThePricesQuoted() async throws {
        // Given a quote, and the first product's list price raised after it was made
        let (store, quote) = try await Self.quoted()
        let b = store.backoffice
        var product = try b.catalogue.product(id: quote.content.lines[0].productID).product
        product.unitPrice = product.unitPrice + Money(cents: 500)
        _ = try await b.catalogue.update(product)
        // When it is converted
        let order = try await b.quotes.convert(number: quote.number, employeeID: 1, editor: Self.nancy)
        // Then the order has the quoted lines and prices, and the quote names it and no longer changes
        #expect(order.lines.map(\.line.unitPrice) == quote.content.lines.map(\.unitPrice))
        #expect(order.lines.map(\.line.quantity) == [10, 5])
        #expect(order.subtotal == quote.content.total)
        let converted = try await b.quotes.quote(number: quote.number)
        #expect(converted.status == .converted && converted.orderNumber == order.order.number)
        let again = await northwindError { _ = try await b.quotes.convert(number: quote.number, employeeID: 1, editor: Self.nancy) }
        #expect(again?.description.contains("only a draft converts") == true)
    }

    @Test func aSecondEditorSeesItReadOnlyAndTakingOverTellsTheFirst() async throws {
        // Given Nancy editing a quote
        let (store, quote) = try await Self.quoted()
        let b = store.backoffice
        let first = try await b.quotes.open(number: quote.number, editor: Self.nancy)
        // When Janet opens it, then takes it over
        let second = try await b.quotes.open(number: quote.number, editor: Self.janet)
        let refusedSave = await northwindError {
            _ = try await b.quotes.saveDraft(
                number: quote.number,
                base: quote.content,
                content: quote.content,
                history: QuoteHistory(),
                editor: Self.janet
            )
        }
        let taken = try await b.quotes.takeOver(number: quote.number, editor: Self.janet)
        let told = await northwindError { _ = try await b.quotes.ping(number: quote.number, editor: Self.nancy) }
        // Then Janet saw it read-only with Nancy's name, could not save, then held it; Nancy is told who took it
        #expect(first.state == .normal && first.editor == Self.nancy)
        #expect(second.state.contains(.editingDisabled) && second.editor == Self.nancy)
        #expect(refusedSave?.description == "Nancy Davolio is editing quote \(quote.number); it is read-only for you.")
        #expect(taken.state == .normal && taken.editor == Self.janet)
        #expect(
            told?.description
                == "Janet Leverling took quote \(quote.number) over; it is read-only for you now. Your unsaved changes are still on this page."
        )
    }

    @Test func aSaveWritesOnlyTheFieldsTheEditorChangedSoAnotherChangeStands() async throws {
        // Given Nancy editing a quote, and its notes changed meanwhile as sync would change them
        let (store, quote) = try await Self.quoted()
        let b = store.backoffice
        _ = try await b.quotes.open(number: quote.number, editor: Self.nancy)
        try await store.store.pool.write { db in
            try db.execute(sql: "UPDATE quotes SET notes = 'Call before delivery', version = version + 1 WHERE number = ?", arguments: [quote.number])
        }
        // When she saves a new quantity on the first line, from the content she loaded
        var edited = quote.content
        edited.lines[0].quantity = 12
        let saved = try await b.quotes.saveDraft(
            number: quote.number,
            base: quote.content,
            content: edited,
            history: QuoteHistory(),
            editor: Self.nancy
        )
        // Then both changes stand
        #expect(saved.quote.content.lines[0].quantity == 12)
        #expect(saved.quote.content.notes == "Call before delivery")
        #expect(saved.quote.revision == quote.revision + 2)
    }

    @Test func theUndoHistoryOutlivesThePageButNotTheEditor() async throws {
        // Given Nancy's save with two undo steps
        let (store, quote) = try await Self.quoted()
        let b = store.backoffice
        _ = try await b.quotes.open(number: quote.number, editor: Self.nancy)
        let steps = [
            QuoteStep(
                name: "Change quantity of \(quote.content.lines[0].productName)",
                changes: [.init(field: "quantity", lineID: quote.content.lines[0].lineID, before: "10", after: "11")]
            ),
            QuoteStep(name: "Change notes", changes: [.init(field: "notes", lineID: nil, before: "Delivery in two parts", after: "x")]),
        ]
        _ = try await b.quotes.saveDraft(
            number: quote.number,
            base: quote.content,
            content: quote.content,
            history: QuoteHistory(undo: steps),
            editor: Self.nancy
        )
        try await b.quotes.close(number: quote.number, editor: Self.nancy)
        // When she opens it again, and when Janet opens it after her
        let reopened = try await b.quotes.open(number: quote.number, editor: Self.nancy)
        try await b.quotes.close(number: quote.number, editor: Self.nancy)
        let janets = try await b.quotes.open(number: quote.number, editor: Self.janet)
        // Then Nancy has her steps back, and Janet starts with none
        #expect(reopened.history.undo == steps)
        #expect(janets.history == QuoteHistory())
        #expect(janets.editor == Self.janet)
    }

    @Test func versionsFormAChainAndRestoringOneIsAVersionToo() async throws {
        // Given a quote (its first version "Created"), a version saved after a change, and another change
        let (store, quote) = try await Self.quoted()
        let b = store.backoffice
        _ = try await b.quotes.open(number: quote.number, editor: Self.nancy)
        var first = quote.content
        first.notes = "Sent to the customer"
        _ = try await b.quotes.saveDraft(number: quote.number, base: quote.content, content: first, history: QuoteHistory(), editor: Self.nancy)
        let sent = try await b.quotes.saveVersion(number: quote.number, label: "Sent", editor: Self.nancy)
        var second = first
        second.lines.removeLast()
        _ = try await b.quotes.saveDraft(number: quote.number, base: first, content: second, history: QuoteHistory(), editor: Self.nancy)
        // When the "Sent" version is restored
        let restored = try await b.quotes.restoreVersion(number: quote.number, versionID: sent.id, editor: Self.nancy)
        // Then the quote is as sent again, and the versions run Created ← Sent ← Restored, each naming its parent
        #expect(restored.content.lines.map(\.lineID) == quote.content.lines.map(\.lineID))
        #expect(restored.content.notes == "Sent to the customer")
        let versions = try await b.quotes.versions(number: quote.number)
        #expect(versions.map(\.label) == ["Restored “Sent” of \(sent.createdAt.prefix(16))", "Sent", "Created"])
        #expect(versions[0].parentIDs == [versions[1].id])
        #expect(versions[1].parentIDs == [versions[2].id])
        #expect(versions[2].parentIDs.isEmpty)
    }

    @Test func anHourAfterTheLastVersionASaveMakesOneByItself() async throws {
        // Given a quote whose last version is two hours old
        let (store, quote) = try await Self.quoted()
        let b = store.backoffice
        _ = try await b.quotes.open(number: quote.number, editor: Self.nancy)
        let twoHoursAgo = Timestamp.now.adding(seconds: -7200).description
        try await store.store.pool.write { db in try db.execute(sql: "UPDATE quote_versions SET createdAt = ?", arguments: [twoHoursAgo]) }
        // When Nancy's edit is saved, then another
        var edited = quote.content
        edited.lines[0].quantity = 20
        let saved = try await b.quotes.saveDraft(
            number: quote.number,
            base: quote.content,
            content: edited,
            history: QuoteHistory(),
            editor: Self.nancy
        )
        var again = edited
        again.lines[0].quantity = 21
        let next = try await b.quotes.saveDraft(number: quote.number, base: edited, content: again, history: QuoteHistory(), editor: Self.nancy)
        // Then the first save made an hourly version, and the second, within the hour, did not
        #expect(saved.madeVersion)
        #expect(!next.madeVersion)
        #expect(try await b.quotes.versions(number: quote.number).map(\.label) == ["Hourly", "Created"])
    }

    @Test func aDiscontinuedProductCannotBeQuoted() async throws {
        // Given a discontinued product
        let (store, _) = try await Self.quoted()
        let discontinued = try #require(try await store.backoffice.catalogue.list().items.first { $0.product.discontinued }?.product)
        // When a line for it is asked for
        let error = #expect(throws: NorthwindError.self) { _ = try store.backoffice.quotes.newLine(productID: discontinued.id ?? 0, quantity: 1) }
        // Then it is refused, naming it
        #expect(error?.description == "productID: '\(discontinued.name)' is discontinued and can no longer be quoted")
    }

    @Test func aBadLineIsRefusedAndNothingChanges() async throws {
        // Given Nancy editing a quote
        let (store, quote) = try await Self.quoted()
        let b = store.backoffice
        _ = try await b.quotes.open(number: quote.number, editor: Self.nancy)
        // When she saves a line with a quantity of zero and a discount over 100%
        var edited = quote.content
        edited.lines[0].quantity = 0
        edited.lines[1].discount = 1.5
        let error = await northwindError {
            _ = try await b.quotes.saveDraft(number: quote.number, base: quote.content, content: edited, history: QuoteHistory(), editor: Self.nancy)
        }
        // Then both are named, and the quote is as it was
        #expect(error?.description.contains("lines[0].quantity") == true)
        #expect(error?.description.contains("lines[1].discount") == true)
        #expect(try await b.quotes.quote(number: quote.number) == quote)
    }
}

@Suite("Quotes edited at two installations")
struct QuoteSyncTests {
    @Test func aChangeToOneRecordStandsAndTheSameFieldChangedAtBothKeepsBothSides() async throws {
        // Given a quote made at head office and carried to London
        let pair = try await StockTransferTests.Pair.make()
        let office = pair.office.backoffice
        let london = pair.london.backoffice
        let customer = try #require(try await office.records.list(Customer.self, limit: 1).items.first?.code)
        let made = try await office.quotes.create(
            QuoteContent(
                customerCode: customer,
                validUntil: LocalDate("2026-12-31") ?? .today,
                notes: "Draft",
                lines: [try office.quotes.newLine(productID: pair.productID, quantity: 4)]
            ),
            by: QuoteTests.nancy
        )
        try await StockTransferTests.Pair.relay(from: pair.office, to: pair.london)
        let there = try await london.quotes.quote(number: made.number)
        // When, offline, head office changes a line's quantity and the notes, and London the notes, later
        _ = try await office.quotes.open(number: made.number, editor: QuoteTests.nancy)
        var here = made.content
        here.lines[0].quantity = 9
        here.notes = "Notes from head office"
        _ = try await office.quotes.saveDraft(
            number: made.number,
            base: made.content,
            content: here,
            history: QuoteHistory(),
            editor: QuoteTests.nancy
        )
        try await Task.sleep(for: .milliseconds(20))
        _ = try await london.quotes.open(number: made.number, editor: QuoteTests.janet)
        var away = there.content
        away.notes = "Notes from London"
        _ = try await london.quotes.saveDraft(
            number: made.number,
            base: there.content,
            content: away,
            history: QuoteHistory(),
            editor: QuoteTests.janet
        )
        // and London's changes reach head office
        try await StockTransferTests.Pair.relay(from: pair.london, to: pair.office)
        // Then head office keeps its line's change, and the notes are in conflict with both sides kept
        let session = try await office.quotes.open(number: made.number, editor: QuoteTests.nancy)
        #expect(session.quote.content.lines[0].quantity == 9)
        #expect(session.state.contains(.inConflict))
        let notes = try #require(session.conflicts.first { $0.field == "notes" })
        #expect(Set([notes.kept, notes.lost]) == ["Notes from head office", "Notes from London"])
        // And when the value set aside is chosen, it stands, and the quote is no longer in conflict
        try await office.sync.resolveConflict(id: notes.id, restoreLost: true)
        let resolved = try await office.quotes.open(number: made.number, editor: QuoteTests.nancy)
        #expect(resolved.quote.content.notes == notes.lost)
        #expect(!resolved.state.contains(.inConflict), "\(resolved.conflicts)")
    }
}
