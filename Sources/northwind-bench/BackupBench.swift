import Foundation
import Northwind
import NorthwindStore
import Synchronization

/// A backup while an employee keeps placing orders: how long the backup takes, and how long each order waits, with
/// no backup and during one. Ours is `backups.create` (snapshot, checks, archive, read-back) beside `orders.create`;
/// bare is SQLite's online backup in one step on its own connection beside the same order through the C API.
struct BackupBench {
    let backoffice: Backoffice
    let path: String
    let folder: URL
    let writes: Int
    let order: (Int) -> OrderDraft

    func run() async throws {
        let bare = try BareSQLite(path: path)
        let backups = BackupFolder(url: folder.appendingPathComponent("backups"))
        let copy = folder.appendingPathComponent("bare-backup.sqlite").path

        var ourIdle = Sample()
        for i in 0..<writes { _ = try await ourIdle.time { try await backoffice.orders.create(order(i)) } }
        let ourStart = DispatchTime.now().uptimeNanoseconds
        let ours = Finish()
        let backing = Task { [backoffice] in
            defer { ours.done.store(true, ordering: .releasing) }
            return try await backoffice.backups.create(in: backups, kind: .manual)
        }
        var ourDuring = Sample()
        var i = 0
        while ourDuring.nanos.count < 1 || !ours.done.load(ordering: .acquiring) {
            _ = try await ourDuring.time { try await backoffice.orders.create(order(i)) }
            i += 1
        }
        let listing = try await backing.value
        let ourSeconds = Double(DispatchTime.now().uptimeNanoseconds - ourStart) / 1e9

        var bareIdle = Sample()
        for i in 0..<writes {
            _ = try bareIdle.timeSync { try BareOrders.create(bare, customerCode: order(i).customerCode, products: order(i).lines.map(\.productID)) }
        }
        let theirs = Finish()
        let (source, target) = (path, copy)
        let bareStart = DispatchTime.now().uptimeNanoseconds
        let thread = Thread {
            do { try BareSQLite(path: source).backup(to: target) } catch { theirs.failure.withLock { $0 = "\(error)" } }
            theirs.done.store(true, ordering: .releasing)
        }
        thread.start()
        var bareDuring = Sample()
        while bareDuring.nanos.count < 1 || !theirs.done.load(ordering: .acquiring) {
            _ = try bareDuring.timeSync {
                try BareOrders.create(bare, customerCode: order(i).customerCode, products: order(i).lines.map(\.productID))
            }
            i += 1
        }
        let bareSeconds = Double(DispatchTime.now().uptimeNanoseconds - bareStart) / 1e9
        if let message = theirs.failure.withLock({ $0 }) { throw BenchError("bare backup: \(message)") }
        try? FileManager.default.removeItem(atPath: copy)

        let database = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        print(
            String(
                format:
                    "\nBackup of a %.1f MB database: ours %.2f s (archive %.1f MB, checked and read back), bare online copy %.2f s, ours/bare %.0f%%",
                Double(database) / 1e6,
                ourSeconds,
                Double(listing.size) / 1e6,
                bareSeconds,
                100 * bareSeconds / ourSeconds
            )
        )
        func f(_ x: Double) -> String { String(format: "%.3f", x) }
        var table = TextTable("Order creation (3 lines)", "Orders", "p50 ms", "p99 ms", "max ms")
        for (name, sample) in [
            ("ours, no backup", ourIdle), ("ours, during our backup", ourDuring), ("bare, no backup", bareIdle),
            ("bare, during bare backup", bareDuring),
        ] {
            table.add(name, "\(sample.nanos.count)", f(sample.percentile(0.5)), f(sample.percentile(0.99)), f(sample.maximum))
        }
        print(table.render())
        print(
            String(
                format: "Longest wait during a backup: ours %.1f ms, bare %.1f ms, ours/bare %.0f%%",
                ourDuring.maximum,
                bareDuring.maximum,
                100 * ourDuring.maximum / bareDuring.maximum
            )
        )
    }

    /// Set when a backup running beside the orders ends.
    private final class Finish: Sendable {
        let done = Atomic<Bool>(false)
        let failure = Mutex<String?>(nil)
    }
}
