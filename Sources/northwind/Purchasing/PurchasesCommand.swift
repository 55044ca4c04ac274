import ArgumentParser
import Foundation
import Northwind
import NorthwindStore
import NorthwindWeb

struct PurchasesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purchases",
        abstract: "Purchase orders to suppliers: write, send, receive (in parts), reverse a receipt, cancel, and the reorder proposal.",
        subcommands: [List.self, Show.self, New.self, Send.self, Receive.self, Reverse.self, Cancel.self, Propose.self]
    )

    static func print(_ detail: PurchaseOrderDetail) {
        let o = detail.order
        Swift.print("Purchase order \(o.number) — \(o.status.words)\(o.opening ? " (opening balance)" : "")\(detail.isLate ? " — LATE" : "")")
        Swift.print("  Supplier:  \(detail.supplierName) (#\(o.supplierID))")
        if let expected = o.expectedDate { Swift.print("  Expected:  \(expected)") }
        if let sent = o.sentAt { Swift.print("  Sent:      \(sent)") }
        if let note = o.note { Swift.print("  Note:      \(note)") }
        var table = TextTable("Product", "Name", "Ordered", "Unit cost", "Received", "Outstanding")
        for line in detail.lines {
            table.add(
                String(line.line.productID),
                line.productName,
                String(line.line.quantity),
                line.line.unitCost?.description ?? "no cost",
                String(line.received),
                String(line.outstanding)
            )
        }
        Swift.print(table.render())
        guard !detail.receipts.isEmpty else { return }
        Swift.print("Receipts:")
        var receipts = TextTable("Receipt", "When", "Product", "Units", "Unit cost", "Average after", "Note")
        for entry in detail.receipts {
            let m = entry.movement
            let kind =
                m.reason == .receiptReversal
                ? "reverses #\(m.reversesID ?? 0)" : entry.reversed ? "reversed" : m.overReceipt.map { "over: \($0)" } ?? ""
            receipts.add(
                "#\(m.id ?? 0)",
                m.createdAt.description,
                entry.productName,
                String(m.delta),
                m.unitCost?.description ?? "",
                m.averageCost?.description ?? "",
                [kind, m.note ?? ""].filter { !$0.isEmpty }.joined(separator: "; ")
            )
        }
        Swift.print(receipts.render())
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List purchase orders, newest first, by status or supplier.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "draft, sent, partiallyReceived, received or cancelled.") var status: PurchaseOrderStatus?
        @Option(help: "A supplier id.") var supplier: Int64?
        @Option(help: "Rows per page (1–1000).") var limit = 50
        @Option(help: "Rows to skip.") var offset = 0

        func run() async throws {
            var query = PurchaseOrderQuery(status: status, supplierID: supplier)
            (query.limit, query.offset) = (limit, offset)
            let page = try await storeOptions.open().purchasing.list(query)
            if output.json { return try printJSON(Wire.purchaseOrders(page)) }
            var table = TextTable("Number", "Supplier", "Status", "Expected", "Lines", "Outstanding", "Total")
            for s in page.items {
                table.add(
                    s.order.number,
                    s.supplierName,
                    s.order.status == .draft ? "draft" : s.order.status.words,
                    s.order.expectedDate?.description ?? "",
                    String(s.lineCount),
                    String(s.outstanding),
                    s.uncostedLines == 0 ? s.total.description : s.uncostedLines == s.lineCount ? "no cost" : "\(s.total) + no cost"
                )
            }
            Swift.print(table.render())
            Swift.print(pageFooter(page))
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a purchase order: its lines, what each has received, and its receipts.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The purchase order number, e.g. 7KQ2XM-P3.") var number: String

        func run() async throws {
            let detail = try await storeOptions.open().purchasing.purchaseOrder(number: number)
            if output.json { return try printJSON(Wire.purchaseOrder(detail)) }
            PurchasesCommand.print(detail)
        }
    }

    /// PRODUCT:QUANTITY[:UNITCOST], e.g. 11:120 or 11:120:14.50.
    struct LineArgument: ExpressibleByArgument {
        var draft: PurchaseLineDraft
        init?(argument: String) {
            let parts = argument.split(separator: ":", omittingEmptySubsequences: false)
            guard (2...3).contains(parts.count), let product = Int64(parts[0]), let quantity = Int(parts[1]) else { return nil }
            var cost: Money?
            if parts.count == 3 {
                guard let value = Money(parsing: String(parts[2])) else { return nil }
                cost = value
            }
            draft = PurchaseLineDraft(productID: product, quantity: quantity, unitCost: cost)
        }
    }

    struct New: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write a draft purchase order to a supplier.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "The supplier's id.") var supplier: Int64
        @Option(help: "When the goods are expected (YYYY-MM-DD).") var expected: LocalDate?
        @Option(help: "A note for the supplier or the buyer.") var note: String?
        @Option(help: "The employee writing it.") var employee: Int64?
        @Option(name: .customLong("line"), help: "PRODUCT:QUANTITY[:UNITCOST], e.g. 11:120:14.50 (repeatable).")
        var lines: [LineArgument] = []
        @Flag(help: "Send it at once (every line needs a unit cost).") var send = false

        func validate() throws {
            if lines.isEmpty { throw ValidationError("A purchase order needs at least one --line PRODUCT:QUANTITY[:UNITCOST].") }
        }

        func run() async throws {
            let purchasing = try await storeOptions.open().purchasing
            let draft = PurchaseOrderDraft(supplierID: supplier, expectedDate: expected, note: note, lines: lines.map(\.draft))
            let detail = try await purchasing.create(draft, employeeID: employee, send: send)
            if output.json { return try printJSON(Wire.purchaseOrder(detail)) }
            PurchasesCommand.print(detail)
        }
    }

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send a draft to its supplier: its lines are fixed, and they count as on order.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The purchase order number.") var number: String

        func run() async throws {
            let detail = try await storeOptions.open().purchasing.send(number: number)
            if output.json { return try printJSON(Wire.purchaseOrder(detail)) }
            PurchasesCommand.print(detail)
        }
    }

    struct Receive: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Book goods received against a sent purchase order, line by line; what is left stays on order."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The purchase order number.") var number: String
        @Option(name: .customLong("line"), help: "PRODUCT:QUANTITY received, e.g. 11:40 (repeatable).") var lines: [ProductQuantity] = []
        @Option(help: "Why more than was awaited was taken in: needed for a line received beyond its order.") var overReceipt: String?
        @Option(
            help: "The delivery's key: run again with the same key, the command books nothing more (default: a new key, so give one to retry safely)."
        )
        var key: String?
        @Option(help: "The employee receiving.") var employee: Int64?
        @Option(help: "A note, e.g. the delivery note's number.") var note: String?

        func validate() throws {
            if lines.isEmpty { throw ValidationError("Name what arrived with --line PRODUCT:QUANTITY.") }
        }

        func run() async throws {
            let received = lines.map { ReceiptLine(productID: $0.productID, quantity: $0.quantity, overReceipt: overReceipt) }
            let detail = try await storeOptions.open().purchasing.receive(
                number: number,
                lines: received,
                requestKey: key ?? UUID().uuidString,
                employeeID: employee,
                note: note
            )
            if output.json { return try printJSON(Wire.purchaseOrder(detail)) }
            PurchasesCommand.print(detail)
        }
    }

    struct Reverse: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take back a receipt booked in error (a receipt is never edited).")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The receipt's number, as `purchases show` lists it (#12 or 12).") var receipt: String
        @Option(help: "The employee correcting it.") var employee: Int64?
        @Option(help: "Why it is taken back.") var note: String?

        func run() async throws {
            guard let id = Int64(receipt.hasPrefix("#") ? String(receipt.dropFirst()) : receipt) else {
                throw ValidationError("'\(receipt)' is not a receipt number; `purchases show` lists them, e.g. #12.")
            }
            let detail = try await storeOptions.open().purchasing.reverse(receiptID: id, employeeID: employee, note: note)
            if output.json { return try printJSON(Wire.purchaseOrder(detail)) }
            PurchasesCommand.print(detail)
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Cancel what has not been received of a purchase order.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The purchase order number.") var number: String

        func run() async throws {
            let detail = try await storeOptions.open().purchasing.cancel(number: number)
            if output.json { return try printJSON(Wire.purchaseOrder(detail)) }
            Swift.print("Cancelled purchase order \(detail.order.number).")
        }
    }

    struct Propose: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What to order: products at or below their reorder level, up to the target (purchasing.targetCover), by supplier."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Flag(help: "Turn the proposal into draft purchase orders, one per supplier.") var create = false
        @Option(help: "The employee writing the drafts.") var employee: Int64?

        func run() async throws {
            let backoffice = try await storeOptions.open()
            let purchasing = backoffice.purchasing
            if create {
                let drafts = try await purchasing.draftsFromProposal(employeeID: employee)
                if output.json { return try printJSON(Wire.purchaseOrders(drafts)) }
                if drafts.isEmpty { return Swift.print("Nothing needs ordering.") }
                for draft in drafts {
                    let units = draft.lines.reduce(0) { $0 + $1.line.quantity }
                    Swift.print(
                        "\(draft.order.number)  \(draft.supplierName): \(draft.lines.count) line\(draft.lines.count == 1 ? "" : "s"), \(units) units"
                    )
                }
                return Swift.print("Wrote \(drafts.count) draft purchase order\(drafts.count == 1 ? "" : "s"); send each with `purchases send`.")
            }
            let proposals = try await purchasing.proposal()
            if output.json { return try printJSON(Wire.reorderProposal(proposals, targetCover: backoffice.rules.targetCover)) }
            if proposals.isEmpty { return Swift.print("Nothing needs ordering.") }
            for proposal in proposals {
                let lead = proposal.leadTimeDays.map { String(format: "%.1f days", $0) } ?? "not known yet"
                Swift.print("\(proposal.supplierName) (#\(proposal.supplierID)), lead time \(lead)")
                var table = TextTable("Product", "Name", "In stock", "On order", "Reorder at", "Order", "Last cost")
                for line in proposal.lines {
                    table.add(
                        String(line.productID),
                        line.productName,
                        String(line.unitsInStock),
                        String(line.unitsOnOrder),
                        String(line.reorderLevel),
                        String(line.quantity),
                        line.lastCost?.description ?? "no cost"
                    )
                }
                Swift.print(table.render())
            }
        }
    }
}

extension PurchaseOrderStatus: ExpressibleByArgument {}
