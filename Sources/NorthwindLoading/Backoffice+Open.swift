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
        // Before anything executes an order: a store file put back to an older copy waits for a full sync.
        try backoffice.sync.takeOverIfRevertedCopy()
        return backoffice
    }
}
