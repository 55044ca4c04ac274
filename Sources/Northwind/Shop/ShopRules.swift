import Foundation
import NorthwindStore
import Synchronization

/// The settings the domain's own rules depend on, as they stand now. `Settings` writes them whenever a layer
/// changes; the rules read them at each call, so a change applies to the next one without a restart.
public final class ShopRules: Sendable {
    private let margin = Atomic<Int>(Int(Setting.factoryDefaults["stock.lowStockMargin"] ?? "") ?? 0)

    private let cover = Atomic<Int>(ShopRules.hundredths(Setting.factoryDefaults["purchasing.targetCover"]) ?? 200)

    private let invoiceRules = Mutex(InvoiceRules(Setting.factoryDefaults))

    /// The `invoices.*` and `tax.*` settings, as an invoice issued now applies them.
    public var invoicing: InvoiceRules { invoiceRules.withLock { $0 } }

    /// `stock.lowStockMargin`: units above the reorder level that still count as low.
    public var lowStockMargin: Int { margin.load(ordering: .relaxed) }

    /// `purchasing.targetCover`: the multiple of its reorder level a reorder proposal brings a product up to.
    public var targetCover: Decimal { Decimal(cover.load(ordering: .relaxed)) / 100 }

    private static func hundredths(_ text: String?) -> Int? {
        text.flatMap { Decimal(string: $0) }.map { NSDecimalNumber(decimal: $0 * 100).intValue }
    }

    /// Takes the values `settings` give now.
    func update(from settings: Settings) {
        if let value = (try? settings.value("stock.lowStockMargin")).flatMap({ Int($0.value) }) {
            margin.store(value, ordering: .relaxed)
        }
        if let value = Self.hundredths((try? settings.value("purchasing.targetCover"))?.value) {
            cover.store(value, ordering: .relaxed)
        }
        var values: [String: String] = [:]
        for key in InvoiceRules.keys {
            if let value = try? settings.value(key).value { values[key] = value }
        }
        let rules = InvoiceRules(values.merging(Setting.factoryDefaults) { mine, _ in mine })
        invoiceRules.withLock { $0 = rules }
    }
}

/// What an invoice issued now says of the seller, how it is numbered, and how its tax is reckoned.
public struct InvoiceRules: Sendable, Equatable {
    public var sellerName: String
    public var sellerAddress: String
    public var sellerTaxID: String
    public var numberFormat: String
    public var creditNoteNumberFormat: String
    /// Never empty: the first is the rate of a product whose category and product name none.
    public var rates: [TaxRate]
    public var rounding: TaxRounding

    static let keys = [
        "invoices.sellerName", "invoices.sellerAddress", "invoices.sellerTaxID", "invoices.numberFormat",
        "invoices.creditNoteNumberFormat", "tax.rates", "tax.rounding",
    ]

    /// From settings' values by key; a value that does not read (never stored: settings are checked) falls back.
    init(_ values: [String: String]) {
        sellerName = values["invoices.sellerName"] ?? ""
        sellerAddress = values["invoices.sellerAddress"] ?? ""
        sellerTaxID = values["invoices.sellerTaxID"] ?? ""
        numberFormat = values["invoices.numberFormat"] ?? "{site}/{year}/{counter:6}"
        creditNoteNumberFormat = values["invoices.creditNoteNumberFormat"] ?? "{site}/CN/{year}/{counter:6}"
        rates = (try? TaxRates.parse(values["tax.rates"] ?? "").get()) ?? [TaxRate(basisPoints: 2300, name: "Standard")]
        rounding = TaxRounding(rawValue: values["tax.rounding"] ?? "") ?? .line
    }
}
