import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Northwind
import NorthwindStore
import Testing

@testable import NorthwindTestSupport
@testable import NorthwindWeb

/// Packages through the web app, on loopback: an order downloads from one store and imports into another.
@Suite("Document downloads and uploads")
struct DocumentDownloadTests {
    @Test func anOrderDownloadedAtOneStoreIsCheckedThenImportedAtAnother() async throws {
        // Given an order's package downloaded from one store's order page, and a manager at another store
        let fixture = try await WebFixture.make()
        let other = try await WebFixture.make()
        let number = try await fixture.store.backoffice.orders.create(
            OrderDraft(
                customerCode: "VINET",
                employeeID: fixture.world.nancy.id,
                lines: [OrderLineDraft(productID: fixture.world.chai.key, quantity: 3)]
            )
        ).order.number
        try await fixture.test(live: true) { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let download = try await client.execute(uri: "/orders/\(number)/package", method: .get, headers: rep.headers)
            #expect(download.status == .ok)
            #expect(download.headers[.contentType] == "application/vnd.northwind.order+zip")
            #expect(download.headers[.contentDisposition] == "attachment; filename=\"order-\(number).nwdoc\"")
            let package = download.body
            try await other.test(live: true) { client in
                let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
                var headers = manager.headers
                headers[.contentType] = "application/zip"
                headers[HTTPField.Name("X-CSRF-Token")!] = manager.csrf
                // When they upload it to check it, then to import it
                let checked = try await client.execute(uri: "/documents/import?dryRun=1", method: .post, headers: headers, body: package)
                let ordersBefore = try await other.store.backoffice.orders.list().total
                let imported = try await client.execute(uri: "/documents/import?dryRun=0", method: .post, headers: headers, body: package)
                // Then the check said what it would add and changed nothing; the import added the order under this
                // store's next number, its own kept as the source
                #expect(checked.status == .ok)
                let plan = try json(checked)
                #expect(plan["title"] as? String == "Order \(number)")
                #expect((plan["lines"] as? [String])?.contains { $0.hasPrefix("  add order ") && $0.contains(" (their \(number)) for ") } == true)
                #expect(plan["imported"] as? Bool == false)
                #expect(try json(imported)["imported"] as? Bool == true)
                #expect(try await other.store.backoffice.orders.list().total == ordersBefore + 1)
                let local = try await other.store.store.pool.read { db in
                    try String.fetchOne(db, sql: "SELECT number FROM orders WHERE sourceNumber = ?", arguments: [number])
                }
                #expect(local != nil && local != number)
            }
        }
    }

    @Test func onlyManagersImportAndADamagedUploadIsRefusedSayingWhy() async throws {
        // Given a representative and a manager at a store
        let fixture = try await WebFixture.make()
        try await fixture.test(live: true) { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            func upload(_ session: BrowserSession, _ body: String) async throws -> TestResponse {
                var headers = session.headers
                headers[.contentType] = "application/zip"
                headers[HTTPField.Name("X-CSRF-Token")!] = session.csrf
                return try await client.execute(uri: "/documents/import?dryRun=1", method: .post, headers: headers, body: ByteBuffer(string: body))
            }
            // When the representative uploads something, and the manager uploads something that is not a package
            let refused = try await upload(rep, "PK")
            let damaged = try await upload(manager, "not a zip")
            // Then the first is forbidden and the second refused, with the reason
            #expect(refused.status == .forbidden)
            #expect(damaged.status == .unprocessableContent || damaged.status == .badRequest, "\(damaged.status)")
            #expect((try json(damaged)["detail"] as? String)?.contains("is not a Northwind document: it cannot be read as a ZIP archive.") == true)
        }
    }
}
