import Foundation
import Testing

@testable import NorthwindTestSupport

/// The convergence harness in CI: a short seeded run with every fault class (`ConvergenceHarness.swift`). Longer
/// runs: `NORTHWIND_CONVERGENCE_SEED=7 NORTHWIND_CONVERGENCE_SHOPS=5 NORTHWIND_CONVERGENCE_SECONDS=120 swift test
/// --filter ConvergenceTests`.
@Suite("Convergence under faults", .serialized)
struct ConvergenceTests {
    @Test(arguments: SyncEngine.all)
    func everyInstallationConvergesAfterARandomWorkloadUnderFaults(_ engine: SyncEngine) async throws {
        // Given head office and two shops, each behind a faulty link to a real sync server (two instances on
        // PostgreSQL)
        let run = try await ConvergenceRun(.fromEnvironment(seed: 20_261_124, shops: 3, seconds: 60, engine: engine))
        do {
            try await run.start()
            // When a seeded random workload runs while faults strike, and then everything heals
            try await run.runWorkload()
            try await run.heal()
            // Then every installation holds the same data, nothing acknowledged is lost, and the invariants hold
            try await run.checkConverged()
            print(await run.summary)
        } catch {
            Issue.record("\(error)\n\(await run.report)")
        }
    }
}
