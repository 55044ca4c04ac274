import Foundation
import Synchronization

/// The settings the domain's own rules depend on, as they stand now. `Settings` writes them whenever a layer
/// changes; the rules read them at each call, so a change applies to the next one without a restart.
public final class ShopRules: Sendable {
    private let margin = Atomic<Int>(Int(Setting.factoryDefaults["stock.lowStockMargin"] ?? "") ?? 0)

    /// `stock.lowStockMargin`: units above the reorder level that still count as low.
    public var lowStockMargin: Int { margin.load(ordering: .relaxed) }

    /// Takes the values `settings` give now.
    func update(from settings: Settings) {
        if let value = (try? settings.value("stock.lowStockMargin")).flatMap({ Int($0.value) }) {
            margin.store(value, ordering: .relaxed)
        }
    }
}
