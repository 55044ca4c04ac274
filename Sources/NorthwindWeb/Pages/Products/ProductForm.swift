import Foundation
import Northwind
import NorthwindStore

/// The product edit form: what was typed, and the errors to show beside each field.
struct ProductForm {
    var values: [String: String]
    var errors: [NorthwindError.FieldError] = []

    static let textFields: [(name: String, label: String, inputMode: String)] = [
        // (Units on order are not typed: purchase orders make them.)
        ("name", "Name", "text"), ("quantityPerUnit", "Quantity per unit", "text"), ("unitPrice", "Unit price", "decimal"),
        ("reorderLevel", "Reorder level", "numeric"),
    ]

    init(_ product: Product) {
        values = [
            "name": product.name, "quantityPerUnit": product.quantityPerUnit ?? "",
            "unitPrice": product.unitPrice.description,
            "reorderLevel": String(product.reorderLevel), "unitsInStock": String(product.unitsInStock),
            "categoryID": product.categoryID.map(String.init) ?? "", "supplierID": product.supplierID.map(String.init) ?? "",
            "discontinued": product.discontinued ? "1" : "", "version": String(product.version),
        ]
    }

    init(_ form: FormData) {
        values = [:]
        for name in [
            "name", "quantityPerUnit", "unitPrice", "reorderLevel", "unitsInStock",
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
