import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

extension Orders {
    /// Only the installation that took an order changes it (its lines, its execution, its cancellation): the order
    /// lives in that site's zone, which nobody else may write. Another site's order is read-only here.
    static func requireWrittenHere(_ order: Order, _ db: Database) throws {
        guard
            let zone = try String.fetchOne(
                db.cachedStatement(sql: "SELECT zoneName FROM sync_records WHERE tableName = 'orders' AND recordID = ?"),
                arguments: [order.recordID]
            ),
            let membership = try ShopSync.membership(db)
        else { return }
        let own = SyncTable.siteZone(membership.siteCode)
        if zone != own {
            throw NorthwindError.invalidState(
                "Order \(order.number) was taken at site \(zone.dropFirst("site-".count)); only that site can change, execute or cancel it."
            )
        }
    }
}
