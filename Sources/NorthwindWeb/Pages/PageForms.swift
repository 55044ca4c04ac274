import Foundation
import Northwind
import NorthwindStore

/// The product edit form: what was typed, and the errors to show beside each field.
struct ProductForm {
    var values: [String: String]
    var errors: [NorthwindError.FieldError] = []

    static let textFields: [(name: String, label: String, inputMode: String)] = [
        ("name", "Name", "text"), ("quantityPerUnit", "Quantity per unit", "text"), ("unitPrice", "Unit price", "decimal"),
        ("unitsOnOrder", "Units on order", "numeric"), ("reorderLevel", "Reorder level", "numeric"),
    ]

    init(_ product: Product) {
        values = [
            "name": product.name, "quantityPerUnit": product.quantityPerUnit ?? "",
            "unitPrice": product.unitPrice.description, "unitsOnOrder": String(product.unitsOnOrder),
            "reorderLevel": String(product.reorderLevel), "unitsInStock": String(product.unitsInStock),
            "categoryID": product.categoryID.map(String.init) ?? "", "supplierID": product.supplierID.map(String.init) ?? "",
            "discontinued": product.discontinued ? "1" : "", "version": String(product.version),
        ]
    }

    init(_ form: FormData) {
        values = [:]
        for name in [
            "name", "quantityPerUnit", "unitPrice", "unitsOnOrder", "reorderLevel", "unitsInStock",
            "categoryID", "supplierID", "discontinued", "version",
        ] {
            values[name] = form[name] ?? ""
        }
    }

    /// The edited product, or every field error at once.
    func product(base: Product, allowStock: Bool) throws(NorthwindError) -> Product {
        var parser = FieldParser()
        var product = base
        product.name = values["name"] ?? ""
        product.quantityPerUnit = values["quantityPerUnit"]
        if let price = parser.money(values["unitPrice"], "unitPrice", required: true) { product.unitPrice = price }
        if let onOrder = parser.int(values["unitsOnOrder"], "unitsOnOrder", in: Limits.units) { product.unitsOnOrder = onOrder }
        if let level = parser.int(values["reorderLevel"], "reorderLevel", in: Limits.units) { product.reorderLevel = level }
        if allowStock, let stock = parser.int(values["unitsInStock"], "unitsInStock", in: Limits.units) { product.unitsInStock = stock }
        product.categoryID = parser.id(values["categoryID"], "categoryID")
        product.supplierID = parser.id(values["supplierID"], "supplierID")
        product.discontinued = values["discontinued"] == "1"
        if !allowStock {
            guard let version = parser.int(values["version"], "version", required: true) else {
                try parser.throwIfAny()
                return product
            }
            product.version = version
        }
        // Report parse errors together with the domain's own checks.
        var copy = product
        parser.errors += copy.normalizeAndValidate().filter { error in !parser.errors.contains { $0.field == error.field } }
        try parser.throwIfAny()
        return product
    }

    /// The form as its template shows it.
    struct View {
        var action: String
        var version: String
        var fields: [Field]
        var errorSummary: Bool
        var otherErrors: [String]
    }

    /// A text box, a select or a checkbox, with the error to show beside it.
    struct Field {
        var name: String
        var label: String
        var isText = false
        var isSelect = false
        var isCheckbox = false
        var inputMode: String?
        var value: String?
        var options: [SelectOption] = []
        var checked = false
        var error: String?
    }

    func view(action: String, backoffice: Backoffice) async throws -> View {
        let categories = try await backoffice.records.choices(NorthwindStore.Category.self)
        let suppliers = try await backoffice.records.choices(Supplier.self)
        func message(_ field: String) -> String? {
            errors.first { $0.field == field }.map { $0.message.prefix(1).uppercased() + $0.message.dropFirst() }
        }
        func options(_ choices: [Choice], selected: String?) -> [SelectOption] {
            choices.map { SelectOption(value: String($0.id), label: $0.name, selected: String($0.id) == selected) }
        }
        var fields = Self.textFields.map { field in
            Field(
                name: field.name,
                label: field.label,
                isText: true,
                inputMode: field.inputMode,
                value: values[field.name] ?? "",
                error: message(field.name)
            )
        }
        if action == "/products" {
            fields.append(
                Field(
                    name: "unitsInStock",
                    label: "Opening stock",
                    isText: true,
                    inputMode: "numeric",
                    value: values["unitsInStock"] ?? "0",
                    error: message("unitsInStock")
                )
            )
        }
        fields.append(
            Field(
                name: "categoryID",
                label: "Category",
                isSelect: true,
                options: options(categories, selected: values["categoryID"]),
                error: message("categoryID")
            )
        )
        fields.append(
            Field(
                name: "supplierID",
                label: "Supplier",
                isSelect: true,
                options: options(suppliers, selected: values["supplierID"]),
                error: message("supplierID")
            )
        )
        fields.append(Field(name: "discontinued", label: "Discontinued", isCheckbox: true, checked: values["discontinued"] == "1"))
        let unplaced = errors.filter { error in !fields.contains { $0.name == error.field } }
        return View(
            action: action,
            version: values["version"] ?? "",
            fields: fields,
            errorSummary: !errors.isEmpty,
            otherErrors: unplaced.map { "\($0.field): \($0.message)" }
        )
    }
}

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
