import Foundation
import NorthwindStore

/// Grandfather-father-son: of the scheduled backups, keep the newest of each of the last `hourly` hours, `daily`
/// days, `weekly` weeks and `monthly` months that have one (UTC). Manual and pre-restore backups are never pruned,
/// nor is the newest verified backup of any kind.
public struct BackupRetention: Sendable, Equatable {
    public var hourly: Int
    public var daily: Int
    public var weekly: Int
    public var monthly: Int

    public init(hourly: Int = 24, daily: Int = 14, weekly: Int = 8, monthly: Int = 12) {
        (self.hourly, self.daily, self.weekly, self.monthly) = (hourly, daily, weekly, monthly)
    }

    /// The backups of `listings` that this policy removes.
    public func prunable(_ listings: [BackupListing]) -> [BackupListing] {
        let dated = listings.compactMap { listing in listing.manifest.map { (listing, $0.created) } }
            .sorted { $0.1 > $1.1 }
        var keep = Set<URL>()
        if let newestVerified = dated.first(where: { $0.0.isVerified }) { keep.insert(newestVerified.0.file) }
        let scheduled = dated.filter { $0.0.manifest?.kind == .scheduled }
        let hour: Int64 = 3_600_000
        let buckets: [(count: Int, key: (Timestamp) -> Int64)] = [
            (hourly, { $0.milliseconds / hour }),
            (daily, { $0.milliseconds / (24 * hour) }),
            // Weeks from Monday: 1970-01-01 was a Thursday.
            (weekly, { ($0.milliseconds / (24 * hour) + 3) / 7 }),
            (
                monthly,
                { time in
                    let day = String(time.description.prefix(7))  // "YYYY-MM"
                    return Int64(day.replacingOccurrences(of: "-", with: "")) ?? 0
                }
            ),
        ]
        for (count, key) in buckets where count > 0 {
            var seen = Set<Int64>()
            for (listing, created) in scheduled {
                let bucket = key(created)
                guard !seen.contains(bucket) else { continue }
                if seen.count == count { break }
                seen.insert(bucket)
                keep.insert(listing.file)
            }
        }
        // Unreadable files are left for a person to look at.
        return scheduled.map(\.0).filter { !keep.contains($0.file) }
    }
}

extension BackupFolder {
    /// Removes the backups of the store `site` that `retention` lets go, with the record of their checks; returns their names.
    @discardableResult
    public func prune(_ retention: BackupRetention, site: String) -> [String] {
        var removed: [String] = []
        for listing in retention.prunable(list().filter { $0.manifest?.store.siteCode == site })
        where (try? FileManager.default.removeItem(at: listing.file)) != nil {
            try? FileManager.default.removeItem(at: BackupCheck.file(for: listing.file))
            removed.append(listing.name)
        }
        return removed
    }

    /// The newest scheduled backup's time of the store `site`, if any.
    public func lastScheduled(site: String) -> Timestamp? {
        list().compactMap { $0.manifest }.filter { $0.kind == .scheduled && $0.store.siteCode == site }.map(\.created).max()
    }
}

extension Settings {
    /// Where backups go: `backup.directory`, else the data folder's `northwind/backups`.
    public func backupFolder() throws(NorthwindError) -> BackupFolder {
        BackupFolder.resolve(try value("backup.directory").value)
    }

    /// The retention the `backup.keep…` settings describe.
    public func backupRetention() throws(NorthwindError) -> BackupRetention {
        func count(_ key: String) throws(NorthwindError) -> Int { Int(try value(key).value) ?? 0 }
        return BackupRetention(
            hourly: try count("backup.keepHourly"),
            daily: try count("backup.keepDaily"),
            weekly: try count("backup.keepWeekly"),
            monthly: try count("backup.keepMonthly")
        )
    }

    /// How long between scheduled backups, or nil when they are off (`backup.every`).
    public func backupInterval() throws(NorthwindError) -> Duration? {
        switch try value("backup.every").value {
        case "hourly": .seconds(3600)
        case "daily": .seconds(86400)
        default: nil
        }
    }
}

extension Backups {
    /// Makes a scheduled backup when `backup.every` says one is due, then prunes by the `backup.keep…` settings.
    /// Returns the new backup, or nil when none was due.
    public func backUpIfDue(settings: Settings, now: Timestamp = .now) async throws(NorthwindError) -> BackupListing? {
        guard let interval = try settings.backupInterval() else { return nil }
        let folder = try settings.backupFolder()
        let site = try await backoffice.sync.siteCode()
        // A minute's slack, so that a backup that took a while does not push the next one a whole interval on.
        if let last = folder.lastScheduled(site: site), now.milliseconds - last.milliseconds < interval.components.seconds * 1000 - 60_000 {
            return nil
        }
        let made = try await backoffice.backups.create(in: folder, kind: .scheduled)
        folder.prune(try settings.backupRetention(), site: site)
        return made
    }
}
