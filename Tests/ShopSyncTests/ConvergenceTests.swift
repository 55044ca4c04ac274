import Foundation
import GRDB
import Northwind
import NorthwindLoading
import NorthwindStore
import Testing

@testable import NorthwindTestSupport

/// The convergence harness in CI: a short seeded run with every fault class (`ConvergenceHarness.swift`). Longer
/// runs: `NORTHWIND_CONVERGENCE_SEED=7 NORTHWIND_CONVERGENCE_SHOPS=5 NORTHWIND_CONVERGENCE_SECONDS=120 swift test
/// --filter ConvergenceTests`; `NORTHWIND_CONVERGENCE_TRACE=1` prints the trace of a run that passed too.
@Suite("Convergence under faults", .serialized)
struct ConvergenceTests {
    @Test(arguments: SyncEngine.all)
    func everyInstallationConvergesAfterARandomWorkloadUnderFaults(_ engine: SyncEngine) async throws {
        // Given head office and two shops, each behind a faulty link to a real sync server (two instances on
        // PostgreSQL)
        let configuration = ConvergenceRun.Configuration.fromEnvironment(seed: 20_261_124, shops: 3, seconds: 60, engine: engine)
        // When a seeded random workload runs while faults strike, and then everything heals
        // Then every installation holds the same data, nothing acknowledged is lost, and the invariants hold
        _ = try await Self.completeRun(configuration)
    }

    @Test func theSameSeedGivesTheSameFinalState() async throws {
        // Given head office's store seeded once, and a seed
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("determinism-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let template = folder.appendingPathComponent("hq.sqlite").path
        let seeded = try Backoffice.open(StoreConfiguration(path: template), seedIfCreated: true)
        _ = try await seeded.store.pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        var configuration = ConvergenceRun.Configuration.fromEnvironment(seed: 20_261_125, shops: 3, seconds: 0, engine: .sqlite)
        configuration.steps = ProcessInfo.processInfo.environment["NORTHWIND_DETERMINISM_STEPS"].flatMap { Int($0) } ?? 200
        configuration.deterministic = true
        configuration.template = template
        // When the same seeded workload runs twice, with the faults whose outcome the seed fixes
        let first = try await Self.finalState(configuration)
        let second = try await Self.finalState(configuration)
        // Then both runs end in the same state
        guard let first, let second else { return }
        if first.state != second.state {
            let differing = zip(first.state, second.state).first { $0 != $1 }
            let parted = zip(first.trace, second.trace).first { $0 != $1 }
            Issue.record(
                """
                two runs of seed \(configuration.seed) ended differently (\(first.state.count) and \(second.state.count) rows)
                first differing row:
                  first run:  \(differing?.0 ?? "none")
                  second run: \(differing?.1 ?? "none")
                first differing step:
                  first run:  \(parted?.0 ?? "none")
                  second run: \(parted?.1 ?? "none")
                \(second.report)
                """
            )
        }
    }

    /// A whole run, workload, healing and every check; nil (with the issue, seed and trace recorded) when a check
    /// failed.
    static func completeRun(_ configuration: ConvergenceRun.Configuration) async throws -> ConvergenceRun? {
        let run = try await ConvergenceRun(configuration)
        do {
            try await run.start()
            try await run.runWorkload()
            try await run.heal()
            try await run.checkConverged()
            print(await run.summary)
            if ProcessInfo.processInfo.environment["NORTHWIND_CONVERGENCE_TRACE"] != nil { print(await run.report) }
            return run
        } catch {
            Issue.record("\(error)\n\(await run.report)")
            return nil
        }
    }

    /// A whole run's final state and trace, normalized.
    static func finalState(_ configuration: ConvergenceRun.Configuration) async throws -> (state: [String], trace: [String], report: String)? {
        guard let run = try await completeRun(configuration) else { return nil }
        return (try await run.normalizedState(), await run.normalizedTrace, await run.report)
    }
}
