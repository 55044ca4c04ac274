import ArgumentParser
import Foundation
import Northwind
import NorthwindStore
import NorthwindWeb

struct InvoicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "invoices",
        abstract: "Invoices and credit notes as issued (one per shipment, one per return), and the tax rates they apply.",
        discussion:
            "A shipment issues its invoice as it leaves; a return issues its credit note. Each site numbers each kind in a series per year without gaps (settings invoices.numberFormat and invoices.creditNoteNumberFormat).",
        subcommands: [List.self, Show.self, Print.self, TaxRate.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Invoices and credit notes, newest first: all, a customer's, or an order's.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "Only this customer's (its code).") var customer: String?
        @Option(help: "Only this order's.") var order: String?
        @Option(help: "Rows per page.") var limit = 50
        @Option(help: "Rows to skip.") var offset = 0

        func run() async throws {
            let list = try await storeOptions.open().invoicing.invoices(customerCode: customer, orderNumber: order, limit: limit, offset: offset)
            if output.json { return try printJSON(Wire.invoices(list)) }
            var table = TextTable("Number", "Kind", "Issued", "Order", "Customer", "Net", "Tax", "Gross", "Corrects")
            for i in list {
                table.add(
                    i.number,
                    i.kind.words,
                    i.issuedDate.description,
                    i.orderNumber,
                    i.customerCode,
                    i.net.description,
                    i.tax.description,
                    i.gross.description,
                    i.corrects ?? ""
                )
            }
            Swift.print(table.render())
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One invoice or credit note, as issued: its parties, lines and tax per rate.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "Its number, e.g. KRK/2026/000001.") var number: String

        func run() async throws {
            let detail = try await storeOptions.open().invoicing.invoice(number: number)
            if output.json { return try printJSON(Wire.invoice(detail)) }
            let i = detail.invoice
            Swift.print("\(i.kind.words) \(i.number), issued \(i.issuedDate), order \(detail.orderNumber), shipment \(detail.shipmentSequence)")
            if let corrects = detail.corrects { Swift.print("Corrects invoice \(corrects)") }
            Swift.print("Seller: \(detail.seller.name)\(detail.seller.taxID.map { ", tax number \($0)" } ?? "")")
            Swift.print("Buyer: \(detail.buyer.name)\(detail.buyer.code.map { " (\($0))" } ?? "")\(detail.buyer.address.map { ", \($0)" } ?? "")")
            var table = TextTable("#", "Description", "Quantity", "Unit price", "Discount", "Net", "Rate", "Tax")
            for line in detail.lines {
                table.add(
                    String(line.position),
                    line.description,
                    String(line.quantity),
                    line.unitPrice.description,
                    Northwind.TaxRate(basisPoints: line.discountBasisPoints, name: "").percent,
                    line.net.description,
                    "\(line.taxName) \(Northwind.TaxRate(basisPoints: line.taxBasisPoints, name: "").percent)",
                    line.tax?.description ?? ""
                )
            }
            Swift.print(table.render())
            var rates = TextTable("Rate", "Net", "Tax", "Gross")
            for rate in detail.taxes {
                rates.add("\(rate.rate.name) \(rate.rate.percent)", rate.net.description, rate.tax.description, rate.gross.description)
            }
            rates.add("Total", i.net.description, i.tax.description, i.gross.description)
            Swift.print(rates.render())
            if !detail.creditNotes.isEmpty { Swift.print("Corrected by \(detail.creditNotes.joined(separator: ", "))") }
        }
    }

    struct Print: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Write the printable HTML of an invoice or credit note, exactly as it was issued.")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "Its number.") var number: String
        @Option(name: .shortAndLong, help: "The file to write; standard output when left out.") var output: String?

        func run() async throws {
            let html = try await storeOptions.open().invoicing.invoice(number: number).invoice.rendition
            if let output {
                try Data(html.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
                Swift.print("Wrote \(output).")
            } else {
                Swift.print(html)
            }
        }
    }

    struct TaxRate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "tax-rate",
            abstract: "Set a category's tax rate, or a product's own, to one of the rates tax.rates lists; 'none' clears it."
        )
        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "The category's name.") var category: String?
        @Option(help: "The product's id.") var product: Int64?
        @Argument(help: "A percentage tax.rates lists (e.g. 8), or none.") var rate: String

        func validate() throws {
            if (category == nil) == (product == nil) { throw ValidationError("Give either --category NAME or --product ID.") }
        }

        func run() async throws {
            let invoicing = try await storeOptions.open().invoicing
            let percent = rate.lowercased() == "none" ? nil : rate
            if let category {
                try await invoicing.setTaxRate(categoryName: category, percent: percent)
                Swift.print("\(category) is taxed at \(percent.map { "\($0) %" } ?? "the first rate of tax.rates").")
            } else if let product {
                try await invoicing.setTaxRate(productID: product, percent: percent)
                Swift.print("Product \(product) is taxed at \(percent.map { "\($0) %" } ?? "its category's rate").")
            }
        }
    }
}

struct ReturnsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "returns",
        abstract: "Take goods back from a shipment (a credit note corrects its invoice), and list an order's returns.",
        subcommands: [Take.self, List.self]
    )

    static func print(_ r: ReturnDetail) {
        let parts = r.lines.map { "\($0.quantity) × \($0.productName)" }.joined(separator: ", ")
        Swift.print(
            "Return \(r.returned.sequence) of shipment \(r.shipmentSequence), order \(r.orderNumber), \(r.returned.returnedDate): \(parts)"
                + (r.creditNoteNumber.map { "; credit note \($0)" } ?? "; no invoice to correct")
        )
    }

    struct Take: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Book goods back from one shipment, each line within what it carried.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The order number.") var number: String
        @Argument(help: "The shipment's number within the order (1, 2, …).") var shipment: Int
        @Option(name: .customLong("line"), help: "PRODUCT:QUANTITY that came back, e.g. 11:2 (repeatable).") var lines: [ProductQuantity] = []
        @Option(help: "Why it came back.") var reason: String?
        @Option(help: "The day it came back (default today), YYYY-MM-DD.") var date: LocalDate?
        @Option(help: "The return's key: run again with the same key, the command books nothing more.") var key: String?
        @Option(help: "The employee taking it in (default: who took the order).") var employee: Int64?

        func validate() throws {
            if lines.isEmpty { throw ValidationError("Name what came back: --line PRODUCT:QUANTITY.") }
        }

        func run() async throws {
            let returned = try await storeOptions.open().invoicing.takeReturn(
                orderNumber: number,
                shipmentSequence: shipment,
                lines: lines.map { ShipLine(productID: $0.productID, quantity: $0.quantity) },
                reason: reason,
                returnedDate: date,
                employeeID: employee,
                requestKey: key
            )
            if output.json { return try printJSON(Wire.returned(returned)) }
            ReturnsCommand.print(returned)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "An order's returns, oldest first.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The order number.") var number: String

        func run() async throws {
            let list = try await storeOptions.open().invoicing.returns(orderNumber: number)
            if output.json { return try printJSON(Wire.returns(list)) }
            list.forEach(ReturnsCommand.print)
            if list.isEmpty { Swift.print("Nothing has come back from order \(number).") }
        }
    }
}
