import Foundation
import Testing

@testable import NorthwindTestSupport

/// `northwind purchases`, run as a buyer at a terminal would, on a demo store.
@Suite("Purchases from the command line")
struct PurchasesCommandTests {
    static func json(_ result: CLI.Result) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)\(result.stderr)")
    }

    @Test func aBuyerOrdersReceivesInPartsAndTakesOneBack() async throws {
        // Given a demo store, and a product of a supplier that is still sold
        let store = try TemporaryStore()
        let path = store.directory.appendingPathComponent("cli.sqlite").path
        let listed = try Self.json(try await CLI.run(["products", "list", "--store", path, "--json", "--active", "--limit", "1"]))
        let product = try #require((listed["items"] as? [[String: Any]])?.first)
        let (productID, supplierID) = (try #require(product["id"] as? Int), try #require(product["supplierID"] as? Int))

        // When a purchase order of 20 at 2.50 is written and sent, 8 are received, then 15 (beyond it, with a reason)
        let sent = try Self.json(
            try await CLI.run([
                "purchases", "new", "--store", path, "--json", "--supplier", String(supplierID), "--line", "\(productID):20:2.50", "--send",
            ])
        )
        let number = try #require(sent["number"] as? String)
        let part = try await CLI.run(["purchases", "receive", number, "--store", path, "--line", "\(productID):8", "--key", "d1"])
        let again = try await CLI.run(["purchases", "receive", number, "--store", path, "--line", "\(productID):8", "--key", "d1"])
        let refused = try await CLI.run(["purchases", "receive", number, "--store", path, "--line", "\(productID):15"])
        let over = try Self.json(
            try await CLI.run([
                "purchases", "receive", number, "--store", path, "--json", "--line", "\(productID):15", "--over-receipt", "A full case came",
            ])
        )
        let receipts = try #require(over["receipts"] as? [[String: Any]])
        let reversed = try Self.json(
            try await CLI.run(["purchases", "reverse", "#\(try #require(receipts.last?["id"] as? Int))", "--store", path, "--json"])
        )

        // Then each step says what it did: sent, 8 received once, 15 refused without a reason, then booked with one;
        // the reversal leaves 8 received and 12 awaited
        #expect(sent["status"] as? String == "sent")
        #expect(part.status == 0 && again.status == 0, "\(part.stderr)\(again.stderr)")
        #expect(refused.status != 0 && refused.stderr.contains("over-receipt"))
        #expect(receipts.count == 2)
        #expect(over["status"] as? String == "received")
        let line = try #require((reversed["lines"] as? [[String: Any]])?.first)
        #expect(line["received"] as? Int == 8)
        #expect(line["outstanding"] as? Int == 12)
        #expect(reversed["status"] as? String == "partiallyReceived")
        // And the product's units on order say so
        let shown = try Self.json(try await CLI.run(["products", "show", String(productID), "--store", path, "--json"]))
        #expect((shown["product"] as? [String: Any])?["unitsOnOrder"] as? Int == 12)
    }

    @Test func theProposalBecomesDraftsInOneCommand() async throws {
        // Given a demo store, some of whose products are at their reorder level
        let store = try TemporaryStore()
        let path = store.directory.appendingPathComponent("cli.sqlite").path
        let proposal = try Self.json(try await CLI.run(["purchases", "propose", "--store", path, "--json"]))
        let suppliers = try #require(proposal["suppliers"] as? [[String: Any]])

        // When the proposal is turned into drafts
        let drafts = try Self.json(try await CLI.run(["purchases", "propose", "--create", "--store", path, "--json"]))
        let items = try #require(drafts["items"] as? [[String: Any]])

        // Then there is one draft per supplier of the proposal, and the target is the factory default
        #expect(proposal["targetCover"] as? String == "2")
        #expect(!suppliers.isEmpty)
        #expect(items.count == suppliers.count)
        #expect(items.allSatisfy { $0["status"] as? String == "draft" })
    }
}
