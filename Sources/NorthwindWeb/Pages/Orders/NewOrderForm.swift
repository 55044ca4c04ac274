import Foundation
import Northwind
import NorthwindStore

/// The phone-order form, as typed, so a refused save can show it again unchanged.
struct NewOrderForm {
    struct Line {
        var product: String
        var productID: String
        var quantity: String
        var discount: String
    }
    var customer: String
    var employeeID: Int64?
    var requiredDate = ""
    var shipVia = ""
    var freight = "0.00"
    var lines: [Line] = []

    init(customer: String, employeeID: Int64?) {
        self.customer = customer
        self.employeeID = employeeID
        requiredDate = LocalDate.today.adding(days: 7).description
    }

    init(_ form: FormData) {
        customer = form["customer"] ?? ""
        employeeID = form.text("employeeID").flatMap { Int64($0) }
        requiredDate = form["requiredDate"] ?? ""
        shipVia = form["shipVia"] ?? ""
        freight = form["freight"] ?? ""
        let products = form.all("product")
        let ids = form.all("productID")
        let quantities = form.all("quantity")
        let discounts = form.all("discount")
        for index in 0..<max(products.count, ids.count) {
            func at(_ values: [String]) -> String { index < values.count ? values[index] : "" }
            let line = Line(product: at(products), productID: at(ids), quantity: at(quantities), discount: at(discounts))
            // A row left blank is not a line.
            if !(line.product.isEmpty && line.productID.isEmpty) { lines.append(line) }
        }
    }

    /// The customer field holds a code, or "CODE — Company" as the lookup fills it in.
    var customerCode: String {
        String(customer.split(separator: " ").first ?? "").uppercased()
    }

    func draft() throws(NorthwindError) -> OrderDraft {
        var parser = FieldParser()
        if customer.trimmingCharacters(in: .whitespaces).isEmpty { parser.errors.append(.init("customer", "is required")) }
        let required = parser.date(requiredDate, "requiredDate")
        let shipper = parser.id(shipVia, "shipVia")
        let freightAmount = parser.money(freight, "freight") ?? .zero
        var drafts: [OrderLineDraft] = []
        for (index, line) in lines.enumerated() {
            let field = "line \(index + 1)"
            // Typing a product number works without the lookup script.
            let id = Int64(line.productID) ?? Int64(line.product.trimmingCharacters(in: .whitespaces))
            guard let id else {
                parser.errors.append(.init(field, "choose a product from the list"))
                continue
            }
            guard let quantity = parser.int(line.quantity, field + " quantity", required: true, in: Limits.lineQuantity) else { continue }
            let percent = line.discount.isEmpty ? 0 : Double(line.discount)
            guard let percent, (0...100).contains(percent) else {
                parser.errors.append(.init(field + " discount", "must be a percentage from 0 to 100"))
                continue
            }
            drafts.append(OrderLineDraft(productID: id, quantity: quantity, discount: percent / 100))
        }
        if lines.isEmpty { parser.errors.append(.init("lines", "add at least one product")) }
        try parser.throwIfAny()
        return OrderDraft(
            customerCode: customerCode,
            employeeID: employeeID,
            requiredDate: required,
            shipVia: shipper,
            freight: freightAmount,
            lines: drafts
        )
    }

    static func label(_ field: String) -> String {
        switch field {
        case "customer": "Customer"
        case "requiredDate": "Required date"
        case "shipVia": "Shipper"
        case "freight": "Freight"
        case "employeeID": "Employee"
        case "lines": "Lines"
        default: field.prefix(1).uppercased() + field.dropFirst()
        }
    }
}
