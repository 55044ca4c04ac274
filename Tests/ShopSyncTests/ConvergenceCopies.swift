import Foundation
import GRDB
import Glibc
import NorthwindLoading
import NorthwindStore
import NorthwindSync
import SyncProtocol
import Synchronization
import Testing

@testable import Northwind
@testable import NorthwindTestSupport
@testable import SyncServer

extension ConvergenceRun {
    // MARK: - Stores put back or copied

    /// A site's store put back to an older copy of its file: the first time, the copy is taken (as a file-level
    /// snapshot would be); the next time, it is put back over the store, half the time with its watermark too (a whole
    /// folder put back, which the server finds at the next send, and a person answers with `sync resume`).
    func revertStore(_ site: String, step: Int) async throws -> String {
        guard let copy = storeCopies[site] else {
            let path = directory.appendingPathComponent("\(site)-copy-\(step).sqlite").path
            try copyStore(site, to: path, withFiles: [\.syncWatermark])
            storeCopies[site] = (path, step)
            return "store copied aside"
        }
        storeCopies[site] = nil
        let wholeFolder = Bool.random(using: &random)
        try await replacingStore(site) {
            let files = StoreFiles(path: store(site))
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: files.path + suffix) }
            try FileManager.default.copyItem(atPath: copy.path, toPath: files.path)
            if wholeFolder {
                try? FileManager.default.removeItem(at: files.syncWatermark)
                try? FileManager.default.copyItem(at: StoreFiles(path: copy.path).syncWatermark, to: files.syncWatermark)
            }
        }
        try await forgetUnsent(at: site, since: copy.step)
        if wholeFolder { foldersPutBack.insert(site) }
        return "store put back to its copy of step \(copy.step)\(wholeFolder ? " with its watermark" : "")"
    }

    /// A site restored from its own backup: the first time the backup is made, the next time it is restored.
    func restoreOwnBackup(_ site: String, step: Int) async throws -> String {
        let folder = BackupFolder(url: directory.appendingPathComponent("backups-\(site)"))
        guard let backup = storeBackups[site] else {
            let listing = try await stores[site]!.backups.create(in: folder, kind: .manual)
            storeBackups[site] = (listing.file, step)
            return "store backed up"
        }
        storeBackups[site] = nil
        try await replacingStore(site) {
            _ = try await Restore.perform(backup.file, over: StoreFiles(path: store(site)), folder: folder, force: true)
        }
        try await forgetUnsent(at: site, since: backup.step)
        return "store restored from its backup of step \(backup.step)"
    }

    /// A site's whole folder copied to a second machine (a cloned virtual machine), which takes a customer and
    /// syncs: refused when the first copy has sent since (STORE_DIVERGED); else the copy becomes the site's, and the
    /// first is refused until a person answers with `sync resume`. Then the second machine is switched off.
    func copyToSecondMachine(_ site: String, step: Int) async throws -> String {
        let path = directory.appendingPathComponent("\(site)-machine2-\(step).sqlite").path
        try copyStore(site, to: path, withFiles: [\.syncWatermark, \.syncCredential])
        let copy = try Backoffice.open(StoreConfiguration(path: path), seedIfCreated: false)
        let created = try await copy.records.create(
            Customer(code: "CV\(Int.random(in: 0..<12, using: &random))", companyName: "Customer of a copy, step \(step)")
        )
        let engine = ShopSyncEngine(backoffice: copy)
        let outcome = await firstOf(syncTimeout(site, otherwise: .seconds(10)), waitingForTheEnd: configuration.deterministic) {
            do {
                let report = try await engine.syncNow()
                return "up \(report.uploaded)"
            } catch {
                return "\(error)"
            }
        }
        inboxListedBefore.formUnion(try await Self.inboxListing(copy))
        try copy.store.close()
        // What the server took from the copy is acknowledged: it must reach everyone.
        if try await serverRecord(SyncTable.sharedZone(of: "customers")!, created.recordID) != nil {
            customersCreated.insert(created.recordID)
            origins[created.recordID] = (site, step)
            ofGoneMachines.insert(created.recordID)
        }
        return "store copied to a second machine, which synced: \(outcome?.split(separator: "\n").first ?? "abandoned")"
    }

    /// A consistent copy of a site's store file, with the named files beside it.
    func copyStore(_ site: String, to path: String, withFiles files: [KeyPath<StoreFiles, URL>]) throws {
        try stores[site]!.store.pool.backup(to: DatabaseQueue(path: path))
        for file in files where FileManager.default.fileExists(atPath: StoreFiles(path: store(site))[keyPath: file].path) {
            try FileManager.default.copyItem(at: StoreFiles(path: store(site))[keyPath: file], to: StoreFiles(path: path)[keyPath: file])
        }
    }

    /// Closes a site's store, runs `change` on its files, and opens it again (as the program would, finding out
    /// whether it is an older copy of itself), even when `change` failed.
    func replacingStore(_ site: String, _ change: () async throws -> Void) async throws {
        inboxListedBefore.formUnion(try await Self.inboxListing(stores[site]!))
        try stores[site]!.store.close()
        do { try await change() } catch {
            stores[site] = try Backoffice.open(StoreConfiguration(path: store(site)), seedIfCreated: false)
            throw error
        }
        stores[site] = try Backoffice.open(StoreConfiguration(path: store(site)), seedIfCreated: false)
    }

    /// The records the server holds live, of those asked for, through one connection.
    func serverRecords(_ keys: [RecordKey]) async throws -> [RecordKey: SyncRecord] {
        guard !keys.isEmpty else { return [:] }
        let service = try await SyncService.open(database: database)
        let found: [RecordKey: StoredRecord]
        do {
            found = try await service.storage.lookup(container: "acme", scope: .shared, keys: keys)
        } catch {
            await service.close()
            throw error
        }
        await service.close()
        return found.filter { !$0.value.record.deleted }.mapValues(\.record)
    }

    func serverRecord(_ zone: String, _ recordID: String) async throws -> SyncRecord? {
        let key = RecordKey(zoneName: zone, recordName: recordID)
        return try await serverRecords([key])[key]
    }

    /// After a site's store was put back to its state of `step`: what it wrote since and the server never took was
    /// only ever in that file (nobody acknowledged it), so the checks stop expecting it; all the server took must
    /// come back.
    func forgetUnsent(at site: String, since step: Int) async throws {
        func since(_ key: String) -> Bool { origins[key].map { $0.site == site && $0.step > step } ?? false }
        let siteZone = SyncTable.siteZone(siteCodes[site]!)
        let customers = SyncTable.sharedZone(of: "customers")!
        let orders = ordersTaken.filter(since)
        let created = customersCreated.sorted().filter(since)
        let written = writes.filter { $0.site == site && $0.step > step }
        let held = try await serverRecords(
            orders.map { RecordKey(zoneName: siteZone, recordName: $0) }
                + created.map { RecordKey(zoneName: customers, recordName: $0) }
                + written.map { RecordKey(zoneName: SyncTable.sharedZone(of: $0.table) ?? siteZone, recordName: $0.recordID) }
        )
        var forgotten: [String] = []
        let unsentOrders = Set(orders.filter { held[RecordKey(zoneName: siteZone, recordName: $0)] == nil })
        forgotten += unsentOrders.sorted().map { orderNumbers[$0] ?? $0 }
        ordersTaken.removeAll { unsentOrders.contains($0) }
        for recordID in created where held[RecordKey(zoneName: customers, recordName: recordID)] == nil {
            customersCreated.remove(recordID)
            forgotten.append(recordID)
        }
        var kept: [Write] = []
        for var write in writes {
            if write.site == site, write.step > step {
                let record = held[RecordKey(zoneName: SyncTable.sharedZone(of: write.table) ?? siteZone, recordName: write.recordID)]
                if record?.fields[write.field] != write.value {
                    forgotten.append("\(write.table) \(write.recordID) \(write.field)")
                    continue
                }
                write.writerLost = true
            }
            kept.append(write)
        }
        writes = kept
        customersWriterLost.formUnion(created.filter(customersCreated.contains))
        ordersWriterLost.formUnion(orders.filter(ordersTaken.contains))
        // Its orders' statuses start again from the older state.
        statusesSeen[site] = [:]
        if !forgotten.isEmpty { log("  never sent, so not expected: \(forgotten.joined(separator: ", "))") }
    }

    // MARK: - Healing

    /// Heals every link and syncs every installation until nothing is pending and nothing moves. Still moving after
    /// eight rounds, or a sync that does not return within two minutes, is a stall. Rounds, not a wall-clock budget:
    /// a store that resumes fetches everything again, which under the full suite's load took one sync 36 s.
    func heal() async throws {
        for proxy in proxies.values { proxy.inject(.none) }
        log("healed")
        var rounds = 0
        var quietRounds = 0
        while quietRounds < 2 {
            guard rounds < 8 else {
                var pending: [String] = []
                for site in sites { pending.append("\(site): \(try await stores[site]!.sync.pendingChanges()) pending") }
                throw Violation(
                    description: "sync stalled: still moving after \(rounds) rounds of healing (\(pending.joined(separator: ", ")))"
                )
            }
            rounds += 1
            var quiet = true
            for site in sites {
                do {
                    // A sync that never returns would hold the run for good; past two minutes it is the stall it is.
                    let engine = ShopSyncEngine(backoffice: stores[site]!)
                    let attempt: @Sendable () async -> Result<SyncReport, ShopSyncError> = {
                        do throws(ShopSyncError) { return .success(try await engine.syncNow()) } catch { return .failure(error) }
                    }
                    let started = ContinuousClock.now
                    defer {
                        // A slow sync, for a stall's trace.
                        let took = ContinuousClock.now - started
                        if took > .seconds(2) { log("heal sync at \(site) took \(took)") }
                    }
                    guard let result = await firstOf(.seconds(120), attempt) else {
                        throw Violation(description: "sync stalled: a sync at \(site) did not return within 120 s of healing")
                    }
                    let report = try result.get()
                    if report.uploaded + report.downloaded + report.pending + report.waiting > 0 {
                        quiet = false
                        // What kept it moving, for a stall's trace.
                        log(
                            "heal sync at \(site): up \(report.uploaded), down \(report.downloaded), pending \(report.pending), "
                                + "waiting \(report.waiting)"
                        )
                    }
                } catch let violation as Violation {
                    throw violation
                } catch let error as ShopSyncError {
                    log("heal sync at \(site) failed: \(error.message)")
                    try await resumeIfDiverged(site, error)
                    quiet = false
                }
            }
            quietRounds = quiet ? quietRounds + 1 : 0
        }
        log("quiet")
    }
}
