import Foundation
import Northwind
import NorthwindStore

extension Backoffice {
    /// Opens the store at `configuration.path`; a store created by this call is seeded with demo data unless
    /// `seedIfCreated` is false.
    public static func open(_ configuration: StoreConfiguration, seedIfCreated: Bool = true) throws(NorthwindError) -> Backoffice {
        let isNew = !FileManager.default.fileExists(atPath: configuration.path)
        let backoffice = Backoffice(store: try Store(configuration))
        if isNew && seedIfCreated {
            _ = try DemoData.seed(into: backoffice.store, options: .init())
        }
        return backoffice
    }
}
