import Foundation
import SyncAPI
import SyncProtocol
import SyncServer
import Testing

@testable import NorthwindTestSupport

/// Faults: the server process killed with SIGKILL while it applies a batch.
@Suite("Sync faults")
struct SyncFaultTests {
    /// Replay a failure with `SYNC_FAULT_SEED=N swift test --filter SyncFaultTests`.
    @Test(arguments: SyncEngine.all) func aBatchKilledMidwayIsAllOrNothing(_ engine: SyncEngine) async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["SYNC_FAULT_SEED"] ?? "") ?? UInt64.random(in: 1...1_000_000)
        var random = SplitMix64(seed: seed)
        var trace = ["SYNC_FAULT_SEED=\(seed) on \(engine)"]
        // Given head office enrolled on a server with two zones
        let database = try await SyncHarness.freshDatabase(engine)
        defer { SyncHarness.removeDatabase(database) }
        let service = try await SyncService.open(database: database)
        let arguments = ["serve", "--database", database, "--port", "0"]
        var server = try ServerProcess.start(arguments)
        let token = try await service.createEnrollment(container: "acme", role: .hq)
        let credential = try await SyncHarness.client(port: server.port, credential: nil)
            .enroll(body: .json(.init(token: token, siteCode: "HQ"))).ok.body.json.credential
        var hq = SyncHarness.client(port: server.port, credential: credential)
        _ = try await hq.createZones(["catalog", "people"])
        // How long one batch takes here, so the kills fall before, during and after its commit.
        let started = ContinuousClock.now
        _ = try await hq.modify((0..<400).map { (.create, record("warm-\($0)", zone: $0 % 2 == 0 ? "catalog" : "people")) })
        let span = max(20, Int((ContinuousClock.now - started) / .milliseconds(1)))
        trace.append("one batch took \(span) ms")
        for round in 0..<8 {
            // When a 400-record batch across both zones is sent, and the server is killed a random moment later
            let operations: [(Components.Schemas.RecordOperation.OperationTypePayload, SyncRecord)] = (0..<400).map {
                (.create, record("r\(round)-\($0)", zone: $0 % 2 == 0 ? "catalog" : "people", ["n": .int64(Int64($0))]))
            }
            let client = hq
            let sent = Task { try? await client.modify(operations) }
            let delay = Int(random.next() % UInt64(span * 3 / 2))
            try await Task.sleep(for: .milliseconds(delay))
            server.kill()
            let answered = await sent.value?.value != nil
            server = try ServerProcess.start(arguments)
            hq = SyncHarness.client(port: server.port, credential: credential)
            // Then after a restart the batch is there whole or not at all
            var count = 0
            for zone in ["catalog", "people"] {
                count += try await hq.changes(zone).pages.flatMap(\.records).filter { $0.recordName.hasPrefix("r\(round)-") }.count
            }
            trace.append("round \(round): killed after \(delay) ms, answered: \(answered), records after restart: \(count)")
            #expect(count == 0 || count == 400, "half a batch survived a kill\n\(trace.joined(separator: "\n"))")
            #expect(!answered || count == 400, "an answered batch was lost\n\(trace.joined(separator: "\n"))")
        }
        server.stop()
        await service.close()
    }
}
