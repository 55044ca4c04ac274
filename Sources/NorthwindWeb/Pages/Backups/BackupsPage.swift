import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// Managers' view of the backups: when each was taken, its size, whether it was checked good; and a button that
/// takes one now. Restoring stays on the command line, where the server is stopped first.
struct BackupsPage: PageModel {
    struct Row {
        var name: String
        var createdAt: String
        var kind: String
        var size: String
        var state: String
        var isGood: Bool
    }

    var folder: String
    var schedule: String
    var rows: [Row]
    var saved: String?
    var error: String?
    var me: PageUser?
}

extension PageRoutes {
    @Sendable func backupsPage(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireManager(env.policy, to: "see the backups")
        return try renderBackups(context: context)
    }

    /// `POST /backups`: a backup now, while the server goes on serving.
    @Sendable func createBackup(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireManager(env.policy, to: "take a backup")
        let made: BackupListing
        do throws(NorthwindError) {
            made = try await backoffice.backups.create(in: try env.settings.backupFolder(), kind: .manual)
        } catch {
            return try renderBackups(context: context, error: "The backup failed: \(error.description)", status: .internalServerError)
        }
        return try renderBackups(context: context, saved: "Backed up to \(made.name), and checked.")
    }

    private func renderBackups(
        context: WebContext,
        saved: String? = nil,
        error: String? = nil,
        status: HTTPResponse.Status = .ok
    ) throws -> Response {
        let folder = try env.settings.backupFolder()
        let every = try env.settings.value("backup.every").value
        let rows = folder.list().map { backup in
            BackupsPage.Row(
                name: backup.name,
                createdAt: backup.manifest.map { String($0.createdAt.prefix(19)).replacingOccurrences(of: "T", with: " ") + " UTC" } ?? "",
                kind: backup.manifest?.kind.rawValue ?? "",
                size: backup.sizeText,
                state: backup.state.rawValue,
                isGood: backup.isVerified
            )
        }
        let schedule =
            every == "off"
            ? "Automatic backups are off (backup.every)."
            : "While the server runs, a backup is taken \(every == "daily" ? "every day" : "every hour")."
        return render(
            "backups",
            BackupsPage(folder: folder.url.path, schedule: schedule, rows: rows, saved: saved, error: error),
            status: status,
            context: context
        )
    }

}
