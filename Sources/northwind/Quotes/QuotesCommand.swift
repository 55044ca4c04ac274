import ArgumentParser
import Foundation
import Northwind
import NorthwindStore
import NorthwindWeb

struct QuotesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quotes",
        abstract: "Prepare quotes for customers, keep their versions, and turn them into orders.",
        discussion: "The web app edits quotes with autosave, undo and versions (Quotes, in the top bar); docs/documents.md says how.",
        subcommands: [List.self, New.self, Show.self, Versions.self, SaveVersion.self, Convert.self]
    )

    /// Who the command line edits as: the operating system's user, as no one signs in here.
    static var editor: QuoteEditor {
        let login = ProcessInfo.processInfo.environment["USER"] ?? "cli"
        return QuoteEditor(login: "cli:" + login, name: login + " (command line)")
    }

    static func print(_ quote: Quote) {
        Swift.print(
            """
            Quote \(quote.number) — \(quote.status.rawValue)\(quote.orderNumber.map { ", became order \($0)" } ?? "")
              Customer:     \(quote.customerName) (\(quote.content.customerCode))
              Valid until:  \(quote.content.validUntil)
            """
        )
        if !quote.content.notes.isEmpty { Swift.print("  Notes:        \(quote.content.notes)") }
        var table = TextTable("Product", "Name", "Unit price", "Qty", "Discount", "Total")
        for line in quote.content.lines {
            table.add(
                String(line.productID),
                line.productName,
                line.unitPrice.description,
                String(line.quantity),
                discountText(line.discount),
                line.total.description
            )
        }
        Swift.print(table.render())
        Swift.print("Total \(quote.content.total)")
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Draft quotes, newest change first (--all for converted and withdrawn ones too).")
        @OptionGroup var storeOptions: StoreOptions
        @Flag(help: "Include converted and withdrawn quotes.") var all = false
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let quotes = try await storeOptions.open().quotes.list(all: all)
            if output.json { return try printJSON(quotes.map(SummaryJSON.init)) }
            var table = TextTable("Quote", "Customer", "Status", "Valid until", "Lines", "Total", "Order")
            for quote in quotes {
                table.add(
                    quote.number,
                    quote.customerName,
                    quote.status.rawValue,
                    quote.validUntil.description,
                    String(quote.lineCount),
                    quote.total.description,
                    quote.orderNumber ?? ""
                )
            }
            Swift.print(quotes.isEmpty ? "No quotes yet: `northwind quotes new` makes one." : table.render())
        }
    }

    struct New: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Prepare a quote at today's list prices.")
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "The customer's code, e.g. VINET.") var customer: String
        @Option(help: "Valid until this day (default: in 30 days).") var validUntil: LocalDate?
        @Option(help: "Notes for the customer.") var notes = ""
        @Option(name: .customLong("line"), help: "PRODUCT:QUANTITY[:DISCOUNT], e.g. 11:12 or 42:10:0.15 (repeatable).")
        var lines: [OrdersCommand.LineArgument] = []

        func run() async throws {
            let backoffice = try await storeOptions.open()
            let quoteLines = try lines.map { line throws(NorthwindError) in
                try backoffice.quotes.newLine(productID: line.draft.productID, quantity: line.draft.quantity, discount: line.draft.discount)
            }
            let content = QuoteContent(customerCode: customer, validUntil: validUntil ?? .today.adding(days: 30), notes: notes, lines: quoteLines)
            QuotesCommand.print(try await backoffice.quotes.create(content, by: QuotesCommand.editor))
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a quote with its lines.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The quote number, e.g. 7KQ2XM-Q3.") var number: String

        func run() async throws {
            let quote = try await storeOptions.open().quotes.quote(number: number)
            if output.json { return try printJSON(QuoteJSON(quote)) }
            QuotesCommand.print(quote)
        }
    }

    struct Versions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A quote's saved versions, newest first, each with its parents.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The quote number.") var number: String

        func run() async throws {
            let versions = try await storeOptions.open().quotes.versions(number: number)
            if output.json { return try printJSON(versions.map(VersionJSON.init)) }
            var table = TextTable("Version", "Saved", "By", "Label", "Total", "Follows")
            for version in versions {
                table.add(
                    String(version.id.prefix(8)),
                    String(version.createdAt.prefix(19)),
                    version.author ?? "",
                    version.label,
                    version.content.total.description,
                    version.parentIDs.map { String($0.prefix(8)) }.joined(separator: ", ")
                )
            }
            Swift.print(table.render())
        }
    }

    struct SaveVersion: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "save-version", abstract: "Save the quote as it stands as a named version.")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The quote number.") var number: String
        @Option(help: "What this version is, e.g. \"Sent to the customer\".") var label: String

        func run() async throws {
            let version = try await storeOptions.open().quotes.saveVersion(number: number, label: label, editor: QuotesCommand.editor)
            Swift.print("Saved version \(version.id.prefix(8)) of \(number): \(version.label).")
        }
    }

    struct Convert: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn a draft quote into an order, at the prices quoted.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The quote number.") var number: String
        @Option(help: "The employee taking the order.") var employee: Int64?
        @Option(help: "Required date.") var required: LocalDate?

        func run() async throws {
            let detail = try await storeOptions.open().quotes.convert(
                number: number,
                employeeID: employee,
                requiredDate: required,
                editor: QuotesCommand.editor
            )
            if output.json { return try printJSON(Wire.order(detail)) }
            OrdersCommand.print(detail)
        }
    }

    // The API serves no quotes, so `--json` has these shapes of its own, written as the API writes its values:
    // money as a decimal string ("18.00"), dates as ISO 8601, a discount as a fraction.

    struct LineJSON: Encodable {
        var lineID: String
        var productID: Int64
        var productName: String
        var quantity: Int
        var unitPrice: String
        var discount: Double
        var total: String
        init(_ line: QuoteLine) {
            (lineID, productID, productName, quantity) = (line.lineID, line.productID, line.productName, line.quantity)
            (unitPrice, discount, total) = (line.unitPrice.description, line.discount, line.total.description)
        }
    }

    /// A quote as it stands; `content` is what its versions keep, in the same shape.
    struct QuoteJSON: Encodable {
        var number: String
        var status: String
        var customerName: String
        var total: String
        var orderNumber: String?
        var createdAt: String
        var updatedAt: String
        var content: ContentJSON
        init(_ quote: Quote) {
            (number, status, customerName, orderNumber) = (quote.number, quote.status.rawValue, quote.customerName, quote.orderNumber)
            (total, createdAt, updatedAt) = (quote.content.total.description, quote.createdAt, quote.updatedAt)
            content = ContentJSON(quote.content)
        }
    }

    struct SummaryJSON: Encodable {
        var number: String
        var customerName: String
        var status: String
        var validUntil: String
        var lineCount: Int
        var total: String
        var orderNumber: String?
        var updatedAt: String
        init(_ quote: QuoteSummary) {
            (number, customerName, status) = (quote.number, quote.customerName, quote.status.rawValue)
            (validUntil, lineCount, total) = (quote.validUntil.description, quote.lineCount, quote.total.description)
            (orderNumber, updatedAt) = (quote.orderNumber, quote.updatedAt)
        }
    }

    struct VersionJSON: Encodable {
        var id: String
        var parentIDs: [String]
        var label: String
        var author: String?
        var createdAt: String
        var total: String
        var content: ContentJSON
        init(_ version: QuoteVersion) {
            (id, parentIDs, label, author, createdAt) = (version.id, version.parentIDs, version.label, version.author, version.createdAt)
            (total, content) = (version.content.total.description, ContentJSON(version.content))
        }
    }

    struct ContentJSON: Encodable {
        var customerCode: String
        var validUntil: String
        var notes: String
        var lines: [LineJSON]
        init(_ content: QuoteContent) {
            (customerCode, validUntil, notes) = (content.customerCode, content.validUntil.description, content.notes)
            lines = content.lines.map(LineJSON.init)
        }
    }
}
