import Foundation
import Logging
import Northwind
import ServiceLifecycle

/// Scheduled backups while the server runs: once a minute, a backup when `backup.every` says one is due (at once
/// on a store never backed up by schedule), then pruning by the `backup.keep…` settings. A failed backup is logged
/// and tried again at the next minute; the server goes on.
struct BackupScheduleService: Service {
    let backoffice: Backoffice
    let settings: Settings
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    if let made = try await backoffice.backups.backUpIfDue(settings: settings) {
                        logger.info("Backed up to \(made.file.path) (\(made.size) bytes, checked).")
                    }
                } catch {
                    logger.error("The scheduled backup failed: \(error). Trying again in a minute.")
                }
                try? await Task.sleep(for: .seconds(60))
            }
        }
    }
}
