import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport
@testable import NorthwindWeb

@Suite("Accounts") struct AccountTests {
    @Test func passwordsAreHashedAndLoginsUnique() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        #expect(
            await northwindError { _ = try await b.accounts.setPassword(employeeID: w.nancy.id ?? 0, password: "short", cost: 4) }
                == .invalid("password", "A password needs at least 8 characters.")
        )
        let login = try await b.accounts.setPassword(employeeID: w.nancy.id ?? 0, password: "a long secret", cost: 4)
        #expect(login == "nancy.davolio")
        let stored = try await store.store.pool.read { db in try String.fetchOne(db, sql: "SELECT passwordHash FROM credentials") }
        #expect(stored?.hasPrefix("$2b$04$") == true)
        #expect(stored?.contains("a long secret") == false)
        #expect(
            await northwindError {
                _ = try await b.accounts.setPassword(
                    employeeID: w.andrew.id ?? 0,
                    password: "another secret",
                    login: "NANCY.davolio",
                    cost: 4
                )
            }
                == .invalid("login", "The login NANCY.davolio belongs to employee \(w.nancy.id ?? 0).")
        )
        #expect(
            await northwindError { _ = try await b.accounts.signIn(login: "nancy.davolio", password: "wrong one") }
                == .invalid("password", "That login and password do not match.")
        )
        let (token, signedIn) = try await b.accounts.signIn(login: "Nancy.Davolio", password: "a long secret")
        #expect(signedIn.employee.id == w.nancy.id)
        #expect(try b.accounts.authenticate(token: token, kind: .session)?.employee.id == w.nancy.id)
        #expect(try b.accounts.authenticate(token: token, kind: .api) == nil)
        // A new password ends existing sessions.
        _ = try await b.accounts.setPassword(employeeID: w.nancy.id ?? 0, password: "a newer secret", cost: 4)
        #expect(try b.accounts.authenticate(token: token) == nil)
        let tokenCount = try store.count("SELECT count(*) FROM access_tokens WHERE tokenHash = ?", [token])
        #expect(tokenCount == 0, "only hashes of tokens are stored")
    }

    @Test func demoCredentialsAreMadeOnceForAManagerAndARep() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let b = store.backoffice
        let demo = try await b.accounts.provisionDemoCredentials(cost: 4)
        #expect(demo.map(\.login) == ["andrew.fuller", "nancy.davolio"])
        _ = try await b.accounts.signIn(login: demo[0].login, password: demo[0].password)
        #expect(try await b.accounts.provisionDemoCredentials(cost: 4).isEmpty)
        #expect(w.andrew.title == "Vice President, Sales")
    }
}

@Suite("Change feed") struct ChangeFeedTests {
    @Test func reportsChangesFromThisProcessAndFromAnotherConnection() async throws {
        let store = try TemporaryStore()
        let w = try await World.make(store.backoffice)
        let feed = try ChangeFeed(store: store.store, pollInterval: .milliseconds(50))
        var changes = feed.subscribe().makeAsyncIterator()
        #expect(feed.subscriberCount == 1)

        _ = try await store.backoffice.stock.receive(productID: w.chai.key, quantity: 5)
        let local = try #require(await changes.next())
        #expect(local.tables.contains("products"))
        #expect(local.tables.contains("stock_movements"))
        #expect(local.recordIDs.contains(w.chai.recordID))

        // Another handle on the file stands in for the CLI in another process: GRDB cannot see its commits.
        let other = try store.reopen()
        var customer = w.vinet
        customer.city = "Paris"
        _ = try await other.records.update(customer)
        let remote = try #require(await changes.next())
        #expect(remote.tables == ["customers"])
        #expect(remote.recordIDs == [w.vinet.recordID])
        #expect(remote.seq > local.seq)
        feed.close()
        #expect(await changes.next() == nil)
    }
}
