import Foundation
import Synchronization

/// The settings the domain's own rules depend on, as they stand now. `Settings` writes them whenever a layer
/// changes; the rules read them at each call, so a change applies to the next one without a restart.
public final class ShopRules: Sendable {
    private let margin = Atomic<Int>(Int(Setting.factoryDefaults["stock.lowStockMargin"] ?? "") ?? 0)

    private let cover = Atomic<Int>(ShopRules.hundredths(Setting.factoryDefaults["purchasing.targetCover"]) ?? 200)

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
    }
}
