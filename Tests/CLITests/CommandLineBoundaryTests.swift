import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Hostile input: the command line", .serialized)
struct CommandLineBoundaryTests {
    /// Every numeric argument: out of range is a non-zero exit with a message; nothing ever ends in a signal.
    @Test(
        arguments: [
            (["products", "edit", "CHAI", "--price", "VALUE"], NumericKind.money),
            (["products", "edit", "CHAI", "--reorder-level", "VALUE"], units),
            (["products", "receive", "CHAI", "VALUE"], .whole(1...Limits.units.upperBound)),
            (["products", "adjust", "CHAI", "VALUE"], units),
            (["products", "list", "--limit", "VALUE"], .whole(Limits.pageSize)),
            (["products", "list", "--offset", "VALUE"], .whole(Limits.offset)),
            (["orders", "new", "--customer", "VINET", "--line", "CHAI:VALUE"], .whole(Limits.lineQuantity)),
            (["orders", "new", "--customer", "VINET", "--line", "CHAI:1:VALUE"], .fraction),
            (["orders", "new", "--customer", "VINET", "--line", "CHAI:1", "--freight", "VALUE"], .money),
        ] as [([String], NumericKind)]
    )
    func aNumericArgumentAtItsBoundaries(arguments: [String], kind: NumericKind) async throws {
        // Given a store with a known world
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        for value in NumericKind.textValues {
            // When the command runs with the value
            let argv = arguments.map { $0.replacingOccurrences(of: "VALUE", with: value).replacingOccurrences(of: "CHAI", with: String(w.chai.key)) }
            let result = try await CLI.run(argv + ["--store", store.path])
            // Then it never crashes, and an out-of-range value is refused with a message
            #expect(!result.crashed, "\(argv) crashed: \(result.stderr)")
            if !kind.accepts(text: value) {
                #expect(result.status != 0 && !result.stderr.isEmpty, "\(argv) was accepted: \(result.stdout)")
            }
        }
    }
}
