import ArgumentParser
import Foundation
import Northwind
import NorthwindStore
import NorthwindWeb

struct ShipmentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shipments",
        abstract: "Ship orders in parts, see what each order has shipped, and the backorder queue.",
        subcommands: [Show.self, Ship.self, Slip.self, Backorders.self, CompleteOnly.self]
    )

    static func print(_ state: OrderFulfilment) {
        Swift.print("Order \(state.orderNumber) — \(state.status.words)\(state.completeShipmentsOnly ? " (complete shipments only)" : "")")
        var table = TextTable("Product", "Name", "Ordered", "Shipped", "Open", "In stock", "Fillable now")
        for line in state.lines {
            table.add(
                String(line.productID),
                line.productName,
                String(line.ordered),
                String(line.shipped),
                String(line.open),
                String(line.inStock),
                line.open > 0 ? String(line.fillable) : ""
            )
        }
        Swift.print(table.render())
        for shipment in state.shipments {
            let parts = shipment.lines.map { "\($0.quantity) × \($0.productName)" }.joined(separator: ", ")
            Swift.print("Shipment \(shipment.shipment.sequence), \(shipment.shipment.shippedDate): \(parts)")
        }
    }

    static func print(_ shipment: ShipmentDetail) {
        Swift.print(
            "Shipment \(shipment.shipment.sequence) of order \(shipment.orderNumber), shipped \(shipment.shipment.shippedDate) — order now \(shipment.orderStatus.words)"
        )
        var table = TextTable("Product", "Name", "Quantity")
        for line in shipment.lines { table.add(String(line.productID), line.productName, String(line.quantity)) }
        Swift.print(table.render())
        if let invoice = shipment.invoiceNumber { Swift.print("Invoice \(invoice)") }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "An order's lines as shipped so far (ordered, shipped, open, fillable now) and its shipments."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The order number, e.g. 7KQ2XM-831, or 831 alone for an order taken here.") var number: String

        func run() async throws {
            let state = try await storeOptions.open().orders.fulfilment(number: number)
            if output.json { return try printJSON(Wire.fulfilment(state)) }
            ShipmentsCommand.print(state)
        }
    }

    struct Ship: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ship part of an order: what the shelf holds now (--available), or the quantities given; the rest stays backordered."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The order number, e.g. 7KQ2XM-831, or 831 alone for an order taken here.") var number: String
        @Flag(help: "Ship what the shelf holds of every open line.") var available = false
        @Option(name: .customLong("line"), help: "PRODUCT:QUANTITY to ship, e.g. 11:4 (repeatable).") var lines: [ProductQuantity] = []
        @Option(help: "The day it ships (default today), YYYY-MM-DD.") var date: LocalDate?
        @Option(help: "The shipment's key: run again with the same key, the command ships nothing more.") var key: String?
        @Option(help: "The employee shipping it (default: who took the order).") var employee: Int64?

        func validate() throws {
            if available == !lines.isEmpty { throw ValidationError("Give either --available or --line PRODUCT:QUANTITY, not both.") }
        }

        func run() async throws {
            let orders = try await storeOptions.open().orders
            let shipped =
                available
                ? try await orders.shipAvailable(number: number, employeeID: employee, shippedDate: date, requestKey: key)
                : try await orders.ship(
                    number: number,
                    lines: lines.map { ShipLine(productID: $0.productID, quantity: $0.quantity) },
                    employeeID: employee,
                    shippedDate: date,
                    requestKey: key
                )
            if output.json { return try printJSON(Wire.shipment(shipped)) }
            ShipmentsCommand.print(shipped)
        }
    }

    struct Slip: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One shipment, as its packing slip lists it.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The order number.") var number: String
        @Argument(help: "The shipment's number within the order (1, 2, …).") var sequence: Int

        func run() async throws {
            let shipment = try await storeOptions.open().orders.shipment(orderNumber: number, sequence: sequence)
            if output.json { return try printJSON(Wire.shipment(shipment)) }
            ShipmentsCommand.print(shipment)
        }
    }

    struct Backorders: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The backorder queue: lines still to ship of orders shipped in part, most urgent first, with what can ship now."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "Rows per page.") var limit = 50
        @Option(help: "Rows to skip.") var offset = 0

        func run() async throws {
            let page = try await storeOptions.open().orders.backorders(limit: limit, offset: offset)
            if output.json { return try printJSON(Wire.backorders(page)) }
            var table = TextTable("Order", "Customer", "Required", "Product", "Open", "Fillable now", "Expected from")
            for item in page.items {
                let expected =
                    item.site.map { "ships from site \($0)" } ?? item.coveredBy.map { "\($0.number) (\($0.expectedDate?.description ?? "no date"))" }
                    ?? (item.line.fillable < item.line.open ? "nothing on order" : "")
                table.add(
                    item.orderNumber,
                    item.customerCode,
                    item.requiredDate?.description ?? "",
                    item.line.productName,
                    String(item.line.open),
                    String(item.line.fillable),
                    expected
                )
            }
            Swift.print(table.render())
            Swift.print("\(page.total) backordered line(s)")
        }
    }

    struct CompleteOnly: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "complete-only",
            abstract: "Mark a customer as taking complete shipments only (on), or partial ones too (off)."
        )
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The customer code, e.g. VINET.") var customer: String
        @Argument(help: "on or off.") var value: String

        func validate() throws {
            if !["on", "off"].contains(value) { throw ValidationError("Say on or off.") }
        }

        func run() async throws {
            try await storeOptions.open().orders.setCompleteShipmentsOnly(customerCode: customer, value == "on")
            Swift.print("\(customer.uppercased()) takes \(value == "on" ? "complete shipments only" : "partial shipments too").")
        }
    }
}
