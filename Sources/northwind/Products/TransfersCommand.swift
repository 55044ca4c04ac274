import ArgumentParser
import Foundation
import Northwind
import NorthwindStore
import NorthwindWeb

struct TransfersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfers",
        abstract: "Send stock to another location, receive what was sent here, and see what is in transit.",
        subcommands: [List.self, Send.self, Receive.self]
    )

    static func table(_ transfers: [TransferStatus]) -> String {
        var table = TextTable("ID", "Product", "Units", "From", "To", "Sent", "Status")
        for status in transfers {
            let t = status.transfer
            let state: String =
                switch status.received {
                case nil: "in transit"
                case let units? where units < t.quantity: "received \(units), short by \(status.shortBy)"
                case _: "received"
                }
            table.add(String(t.id ?? 0), status.productName, String(t.quantity), t.fromLocation, t.toLocation, t.sentAt.description, state)
        }
        return table.render()
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Transfers from or to this location, newest first.")
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "Only this product id.") var product: Int64?
        @Flag(help: "Only transfers not yet received.") var inTransit = false
        @Option(help: "At most this many.") var limit = 100
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let transfers = try await storeOptions.open().stock.transfers(productID: product, inTransitOnly: inTransit, limit: limit)
            if output.json { return try printJSON(Wire.transfers(transfers)) }
            print(transfers.isEmpty ? "No transfers." : TransfersCommand.table(transfers))
        }
    }

    struct Send: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send QUANTITY units of a product from this shelf to another location (a site code)."
        )
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The product id.") var id: Int64
        @Argument(help: "Units sent.") var quantity: Int
        @Option(help: "The destination's site code.") var to: String
        @Option(help: "The employee who sent them.") var employee: Int64?
        @Option(help: "A note for the audit trail, e.g. a delivery note number.") var note: String?

        func run() async throws {
            let status = try await storeOptions.open()
                .stock.send(productID: id, quantity: quantity, to: to, employeeID: employee, note: note)
            print("Transfer #\(status.transfer.id ?? 0): \(quantity) × \(status.productName) in transit to \(status.transfer.toLocation).")
        }
    }

    struct Receive: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Book in a transfer sent here: UNITS is what arrived, fewer than sent for a short delivery."
        )
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The transfer id (see `transfers list`).") var id: Int64
        @Argument(help: "Units that arrived.") var units: Int
        @Option(help: "The employee who received them.") var employee: Int64?
        @Option(help: "A note for the audit trail.") var note: String?

        func run() async throws {
            let status = try await storeOptions.open().stock.receiveTransfer(id: id, units: units, employeeID: employee, note: note)
            let short = status.shortBy > 0 ? ", short by \(status.shortBy)" : ""
            print("Transfer #\(id): \(units) × \(status.productName) received from \(status.transfer.fromLocation)\(short).")
        }
    }
}
