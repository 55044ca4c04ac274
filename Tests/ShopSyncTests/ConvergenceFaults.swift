import Foundation
import GRDB
import Glibc
import NorthwindLoading
import NorthwindStore
import NorthwindSync
import SyncAPI
import SyncProtocol
import Synchronization
import Testing

@testable import Northwind
@testable import NorthwindTestSupport
@testable import SyncServer

extension ConvergenceRun {
    // MARK: - Syncing and faults

    /// One sync in this process, abandoned after `timeout` (a withheld answer would otherwise hold it for a minute).
    func syncInProcess(_ site: String) async -> String {
        // A withheld answer holds a sync until it is abandoned. For the determinism check, nothing else may: a long
        // sync (everything sent again after a server restore) runs to its end, and an abandoned one is over before
        // the next step, or when it stopped would depend on the machine's speed.
        let timeout = syncTimeout(site, otherwise: .seconds(4))
        let engine = ShopSyncEngine(backoffice: stores[site]!)
        let outcome = await firstOf(timeout, waitingForTheEnd: configuration.deterministic) { () -> (String, ShopSyncError?) in
            do {
                let report = try await engine.syncNow()
                return ("sync: up \(report.uploaded), down \(report.downloaded), pending \(report.pending)", nil)
            } catch let error as ShopSyncError {
                return ("sync failed: \(error.message)", error)
            } catch {
                return ("sync failed: \(error)", nil)
            }
        }
        guard let (text, error) = outcome else { return "sync abandoned after \(timeout)" }
        if let error { try? await resumeIfDiverged(site, error) } else { foldersPutBack.remove(site) }
        return text
    }

    /// How long a sync at `site` may take before it is abandoned: for the determinism check, only a withheld answer
    /// holds it back.
    func syncTimeout(_ site: String, otherwise: Duration) -> Duration {
        guard configuration.deterministic else { return otherwise }
        return [.halfOpen, .cutResponses].contains(proxies[site]!.fault) ? .seconds(10) : .seconds(600)
    }

    /// A store the server found behind what it took from its site (a whole folder put back, or a second copy that
    /// synced first): the person at it does what the message says, `sync resume`.
    func resumeIfDiverged(_ site: String, _ error: ShopSyncError) async throws {
        guard error.kind == .refused(.storeDiverged) else { return }
        try await stores[site]!.sync.resumeAsThisCopy()
        foldersPutBack.remove(site)
        log("  \(site): sync resume, as the message said")
    }

    /// `northwind sync now` in its own process, killed with SIGKILL: at a named moment, or after a random delay that
    /// may fall anywhere (during the upload, a page's apply, between the server's commit and the acknowledgement).
    func syncAndKill(_ site: String) async throws -> String {
        guard let binary = CLI.binary("northwind") else { throw CLIError(description: "no northwind binary: build it first") }
        let arguments = ["sync", "now", "--store", store(site)]
        // Half the time (always for the determinism check) it kills itself at a named moment (`CrashPoint`): before
        // sending a batch, between the server's commit and the acknowledgement, or inside a page's transaction.
        if FaultSwitches.compiledIn && (configuration.deterministic || Bool.random(using: &random)) {
            let point = ["upload", "acknowledge", "apply"].randomElement(using: &random)!
            let count = Int.random(in: 1...2, using: &random)
            let child = try ChildProcess(binary.path, arguments, environment: ["NORTHWIND_CRASH_AT": "\(point):\(count)"])
            guard let ended = await child.exit(within: syncTimeout(site, otherwise: .seconds(10))) else {
                child.signal(SIGKILL)
                await child.exit()
                return "sync process abandoned before \(point) #\(count)"
            }
            return ended == .init(status: SIGKILL, signalled: true)
                ? "sync process killed at \(point) #\(count)" : "sync process ended before \(point) #\(count) (\(ended.status))"
        }
        let after = Int.random(in: 0...800, using: &random)
        let child = try ChildProcess(binary.path, arguments)
        if let ended = await child.exit(within: .milliseconds(after)) { return "sync process ended by itself (\(ended.status))" }
        child.signal(SIGKILL)
        await child.exit()
        return "sync process killed after \(after) ms"
    }

    func injectFault(_ site: String) -> String {
        let faults: [FaultProxy.Fault] = [
            .none, .none, .cut, .dropResponse, .cutResponses, .halfOpen, .delay(milliseconds: Int.random(in: 50...400, using: &random)), .duplicate,
        ]
        var fault = faults.randomElement(using: &random)!
        // A delay decides only when a sync is abandoned, which the seed cannot fix.
        if configuration.deterministic, case .delay = fault { fault = .none }
        proxies[site]!.inject(fault)
        return "network: \(fault)"
    }

    /// Kills a server instance with SIGKILL and starts it again on the same database.
    func restartServer() throws -> String {
        let index = Int.random(in: 0..<servers.count, using: &random)
        servers[index].kill()
        servers[index] = try ServerProcess.start(Self.serverArguments(database))
        for site in sites where instance(of: site) == index { proxies[site]!.forward(to: servers[index].port) }
        return "server \(index) killed and restarted"
    }

    /// Stops PostgreSQL at once, as a crash would, and starts it again: every server instance loses its connections.
    func restartPostgres() throws -> String {
        try PostgresCluster.restart(postgresDirectory!)
        return "PostgreSQL crashed and restarted"
    }

    func purgeTombstones() async throws -> String {
        let result = try await CLI.run(["purge", "--database", database, "--days", "0"], program: "northwind-sync-server")
        guard result.status == 0 else { throw Violation(description: "purge failed: \(result.stderr)") }
        return "tombstones purged"
    }

    /// A sync with the shop's clock a day or ten minutes off, either way, must send nothing (it may also fail to
    /// reach the server).
    func syncWithSkewedClock(_ site: String) async throws -> String {
        guard FakeTime.installed else { return "no faketime" }
        let offset = ["+1d", "-1d", "+10m", "-10m"].randomElement(using: &random)!
        let pending = try await stores[site]!.sync.pendingChanges()
        let result = try await FakeTime.northwind(["sync", "now", "--store", store(site)], offset: offset)
        let after = try await stores[site]!.sync.pendingChanges()
        guard result.status != 0, after >= pending else {
            throw Violation(description: "a sync with the clock \(offset) off was not refused (\(pending) pending, then \(after)): \(result.stderr)")
        }
        return "sync with the clock \(offset) off: \(result.stderr.split(separator: "\n").first ?? "")"
    }

    /// Backs the server up while it runs: SQLite's online backup, or `pg_dump`.
    func backUpServer() throws -> String {
        let backup = directory.appendingPathComponent("server-backup-\(trace.count)").path
        if postgresDirectory != nil {
            _ = try PostgresCluster.run("/usr/bin/pg_dump", ["--format=custom", "--file=" + backup, database])
        } else {
            _ = try ServerBackup.create(database: database, folder: backup)
        }
        serverBackup = backup
        return "server backed up"
    }

    /// Stops every server instance, puts the backup back (and marks the database restored, for PostgreSQL), and
    /// starts them again: every installation must send again what the server lost of what it had acknowledged.
    func restoreServer() async throws -> String {
        guard let backup = serverBackup else { return "no server backup" }
        for server in servers { server.kill() }
        if postgresDirectory != nil {
            _ = try PostgresCluster.run("/usr/bin/pg_restore", ["--clean", "--if-exists", "--no-owner", "--dbname=" + database, backup])
            try await ServerBackup.markRestored(database: database)
        } else {
            _ = try ServerBackup.restore(folder: backup, over: database)
        }
        for index in servers.indices {
            servers[index] = try ServerProcess.start(Self.serverArguments(database))
            for site in sites where instance(of: site) == index { proxies[site]!.forward(to: servers[index].port) }
        }
        serverBackup = nil
        let customers = SyncTable.sharedZone(of: "customers")!
        let held = try await serverRecords(ofGoneMachines.sorted().map { RecordKey(zoneName: customers, recordName: $0) })
        let lost = ofGoneMachines.filter { held[RecordKey(zoneName: customers, recordName: $0)] == nil }.sorted()
        for recordID in lost { customersCreated.remove(recordID) }
        ofGoneMachines.subtract(lost)
        if !lost.isEmpty {
            log("  written only by second machines that are gone, so lost with the server's restore: \(lost.joined(separator: ", "))")
        }
        try await forgetWhatNobodyLeftHolds()
        return "server restored from its backup"
    }

    /// What the restored server lacks, and its writer lost in a restore of its own, and no installation left holds
    /// (only the server, or machines now gone, had fetched it) has no copy left to send: it is no longer expected.
    /// What any installation still holds is, and must come back.
    func forgetWhatNobodyLeftHolds() async throws {
        let customers = SyncTable.sharedZone(of: "customers")!
        func zone(_ table: String, _ site: String) -> String { SyncTable.sharedZone(of: table) ?? SyncTable.siteZone(siteCodes[site]!) }
        let orders = ordersWriterLost.compactMap { recordID in origins[recordID].map { (orderNumbers[recordID] ?? recordID, $0.site, recordID) } }
        let restored = try await serverRecords(
            writes.filter(\.writerLost).map { RecordKey(zoneName: zone($0.table, $0.site), recordName: $0.recordID) }
                + customersWriterLost.map { RecordKey(zoneName: customers, recordName: $0) }
                + orders.map { RecordKey(zoneName: zone("orders", $0.1), recordName: $0.2) }
        )
        func heldAnywhere(_ table: String, _ recordID: String, _ field: String? = nil, _ value: FieldValue? = nil) async throws -> Bool {
            for site in sites {
                guard let fields = try await fields(at: site, table: table, recordID: recordID) else { continue }
                if field.map({ fields[$0] == value }) ?? true { return true }
            }
            return false
        }
        var gone: [String] = []
        var kept: [Write] = []
        for write in writes {
            let server = restored[RecordKey(zoneName: zone(write.table, write.site), recordName: write.recordID)]
            if write.writerLost, server?.fields[write.field] != write.value,
                try await !heldAnywhere(write.table, write.recordID, write.field, write.value)
            {
                gone.append("\(write.table) \(write.recordID) \(write.field)")
                continue
            }
            kept.append(write)
        }
        writes = kept
        for recordID in customersWriterLost.sorted() where customersCreated.contains(recordID) {
            if restored[RecordKey(zoneName: customers, recordName: recordID)] == nil, try await !heldAnywhere("customers", recordID) {
                customersCreated.remove(recordID)
                gone.append(recordID)
            }
        }
        for (number, site, recordID) in orders where ordersTaken.contains(recordID) {
            if restored[RecordKey(zoneName: zone("orders", site), recordName: recordID)] == nil, try await !heldAnywhere("orders", recordID) {
                ordersTaken.removeAll { $0 == recordID }
                gone.append(number)
            }
        }
        if !gone.isEmpty {
            log("  lost by their writer's own restore, then by the server's, and held by nobody left: \(gone.joined(separator: ", "))")
        }
    }

    /// A misbehaving client with a shop's credential appends to its zone a movement that names another location's
    /// shelf, or none: the server must refuse it (head office declared the schema), and it must move no shelf.
    func forgeMovement(at site: String) async throws -> String {
        guard site != "hq" else { return "no forgery at head office" }
        let product = try await stores["hq"]!.store.pool.read { db in try String.fetchOne(db, sql: "SELECT recordID FROM products ORDER BY id") }
        guard let product else { return "no product to forge" }
        let victim = siteCodes[sites.filter { $0 != site }.randomElement(using: &random)!]!
        let naming: String? = Bool.random(using: &random) ? victim : nil
        var fields: [String: FieldValue] = [
            "productID": .reference(RecordReference(recordName: product, zoneName: "catalog")),
            "delta": .int64(-Int64.random(in: 1...9, using: &random)),
            "reason": .string("received"),
            "createdAt": .string(Timestamp.now.description),
        ]
        if let naming { fields["location"] = .string(naming) }
        let record = SyncRecord(
            recordName: UUID().uuidString.lowercased(),
            recordType: "stock_movements",
            zoneID: ZoneID(SyncTable.siteZone(siteCodes[site]!)),
            fields: fields
        )
        let service = try await SyncService.open(database: database)
        let installation = try await service.installations(container: "acme").first { $0.siteCode == siteCodes[site]! }
        guard let installation else {
            await service.close()
            return "no installation to forge for"
        }
        let answer = try await service.modifyRecords(
            installation,
            container: "acme",
            scope: .shared,
            request: .init(clientID: "forger", batchID: UUID().uuidString, operations: [.init(opID: "0", operationType: .append, record: record)]),
            bodySize: 0
        )
        await service.close()
        if !answer.contains("SCHEMA_VIOLATION") {
            throw Violation(description: "the server took a movement forged at \(site) naming \(naming ?? "no location"): \(record.recordName)")
        }
        return "forged movement at \(site) naming \(naming ?? "no location"): refused"
    }

    /// Head office deletes a product, perhaps one a shop holds stock of: refused when any movement of it is known
    /// here; otherwise a shop's movement of it, when it arrives, brings the product back.
    func deleteProduct() async throws -> String {
        let hq = stores["hq"]!
        let ids = try await hq.store.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM products ORDER BY id") }
        guard let id = ids.randomElement(using: &random) else { return "no product to delete" }
        try await hq.catalogue.delete(id: id)
        return "delete product \(id) at hq"
    }
}
