import ArgumentParser
import Foundation
import Testing

@testable import NorthwindTestSupport
@testable import northwind

@Suite("Shipments on the command line", .serialized)
struct ShipmentCommandTests {
    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    @Test func aShortOrderShipsWhatIsAvailableThenTheRestFromTheBackorderQueue() async throws {
        // Given a demo store and an order for 12 of a product counted down to 5
        let store = try TemporaryStore()
        let path = store.directory.appendingPathComponent("cli.sqlite").path
        _ = try await CLI.run(["products", "list", "--store", path, "--limit", "1"])
        _ = try await CLI.run(["products", "adjust", "3", "5", "--store", path])
        let customers = try await CLI.run(["customers", "list", "--store", path, "--json", "--limit", "1"])
        let code = try #require((try json(customers.stdout)["items"] as? [[String: Any]])?.first?["code"] as? String)
        let created = try await CLI.run(["orders", "new", "--customer", code, "--line", "3:12", "--store", path, "--json"])
        let number = try #require(try json(created.stdout)["number"] as? String, "\(created.stderr)")
        // When what is available ships, and the queue is read
        let first = try await CLI.run(["shipments", "ship", number, "--available", "--store", path, "--json"])
        let queue = try await CLI.run(["shipments", "backorders", "--store", path])
        // Then 5 left, the order is partly shipped, and the queue names the 7 still to ship
        #expect(first.status == 0, "\(first.stderr)")
        let shipment = try json(first.stdout)
        #expect(shipment["orderStatus"] as? String == "partlyShipped")
        #expect((shipment["lines"] as? [[String: Any]])?.map { $0["quantity"] as? Int } == [5])
        #expect(queue.stdout.contains(number), "\(queue.stdout)")
        #expect(queue.stdout.contains("1 backordered line(s)"), "\(queue.stdout)")
        // And shipping more than the shelf holds names the line and changes nothing
        let tooMany = try await CLI.run(["shipments", "ship", number, "--line", "3:7", "--store", path])
        #expect(tooMany.status != 0)
        #expect(tooMany.stderr.contains("lines[0].quantity"), "\(tooMany.stderr)")
        let state = try await CLI.run(["shipments", "show", number, "--store", path, "--json"])
        #expect((try json(state.stdout)["shipments"] as? [Any])?.count == 1)
    }

    @Test(.enabled(if: FaultSwitches.compiledIn, "crash points are in debug builds only"), arguments: ["shipment-written", "shipment-committed"])
    func aShipmentKilledAtAnyStepAndSentAgainShipsOnce(point: String) async throws {
        // Given a demo store and an order for 12 of a product counted down to 5
        let store = try TemporaryStore()
        let path = store.directory.appendingPathComponent("cli.sqlite").path
        _ = try await CLI.run(["products", "adjust", "3", "5", "--store", path])
        let customers = try await CLI.run(["customers", "list", "--store", path, "--json", "--limit", "1"])
        let code = try #require((try json(customers.stdout)["items"] as? [[String: Any]])?.first?["code"] as? String)
        let created = try await CLI.run(["orders", "new", "--customer", code, "--line", "3:12", "--store", path, "--json"])
        let number = try #require(try json(created.stdout)["number"] as? String, "\(created.stderr)")
        // When "ship available" is killed with SIGKILL at this step, then sent again with the same key
        let ship = ["shipments", "ship", number, "--available", "--key", "pack-1", "--store", path, "--json"]
        let killed = try await CLI.run(ship, environment: ["NORTHWIND_CRASH_AT": point])
        let again = try await CLI.run(ship)
        // Then the second run answers with one shipment of 5, and the shelf went down by 5 once
        #expect(killed.crashed, "the shipment was to be killed at \(point): \(killed.stderr)")
        #expect(again.status == 0, "\(again.stderr)")
        #expect((try json(again.stdout)["sequence"] as? Int) == 1)
        let state = try await CLI.run(["shipments", "show", number, "--store", path, "--json"])
        #expect((try json(state.stdout)["shipments"] as? [Any])?.count == 1)
        #expect((try json(state.stdout)["lines"] as? [[String: Any]])?.first?["inStock"] as? Int == 0)
        // And one invoice was issued, the first of the series: a killed issue took no number
        let invoices = try await CLI.run(["invoices", "list", "--store", path, "--json"])
        let numbers = (try json(invoices.stdout)["items"] as? [[String: Any]])?.compactMap { $0["number"] as? String }
        #expect(numbers?.count == 1)
        #expect(numbers?.first?.hasSuffix("/000001") == true, "\(invoices.stdout)")
    }

    @Test(.enabled(if: FaultSwitches.compiledIn, "crash points are in debug builds only"), arguments: ["return-written", "return-committed"])
    func aReturnKilledAtAnyStepAndSentAgainIsBookedAndCreditedOnce(point: String) async throws {
        // Given a demo store and a shipment of 5 units of product 3
        let store = try TemporaryStore()
        let path = store.directory.appendingPathComponent("cli.sqlite").path
        _ = try await CLI.run(["products", "adjust", "3", "5", "--store", path])
        let customers = try await CLI.run(["customers", "list", "--store", path, "--json", "--limit", "1"])
        let code = try #require((try json(customers.stdout)["items"] as? [[String: Any]])?.first?["code"] as? String)
        let created = try await CLI.run(["orders", "new", "--customer", code, "--line", "3:5", "--store", path, "--json"])
        let number = try #require(try json(created.stdout)["number"] as? String, "\(created.stderr)")
        _ = try await CLI.run(["shipments", "ship", number, "--available", "--store", path])
        // When a return of 2 is killed with SIGKILL at this step, then sent again with the same key
        let take = ["returns", "take", number, "1", "--line", "3:2", "--key", "back-1", "--store", path, "--json"]
        let killed = try await CLI.run(take, environment: ["NORTHWIND_CRASH_AT": point])
        let again = try await CLI.run(take)
        // Then there is one return with one credit note, the first of its series, and 2 units are back once
        #expect(killed.crashed, "the return was to be killed at \(point): \(killed.stderr)")
        #expect(again.status == 0, "\(again.stderr)")
        let credit = try json(again.stdout)["creditNoteNumber"] as? String
        #expect(credit?.contains("/CN/") == true && credit?.hasSuffix("/000001") == true, "\(again.stdout)")
        let returns = try await CLI.run(["returns", "list", number, "--store", path, "--json"])
        #expect((try json(returns.stdout)["items"] as? [Any])?.count == 1)
        let product = try await CLI.run(["products", "show", "3", "--store", path, "--json"])
        #expect((try json(product.stdout)["product"] as? [String: Any])?["unitsInStock"] as? Int == 2, "\(product.stdout)")
    }

    @Test func shipTakesEitherAvailableOrLines() async throws {
        // Given nothing but the command line
        // When both, or neither, are given
        // Then the command refuses before touching a store
        #expect(throws: (any Error).self) { try NorthwindCommand.parseAsRoot(["shipments", "ship", "831", "--available", "--line", "3:1"]) }
        #expect(throws: (any Error).self) { try NorthwindCommand.parseAsRoot(["shipments", "ship", "831"]) }
        #expect(try NorthwindCommand.parseAsRoot(["shipments", "ship", "831", "--available"]) is ShipmentsCommand.Ship)
    }
}
