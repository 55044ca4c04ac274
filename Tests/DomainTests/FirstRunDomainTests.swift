import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

/// The first run's rules in the domain: what the form must hold, and that a run cut short leaves nothing half made.
@Suite struct FirstRunDomainTests {
    static let form = FirstRunForm(
        firstName: "Anna",
        lastName: "Kowalska",
        login: "anna.kowalska",
        password: "amber-lantern-ferry-42",
        siteName: "Head office",
        siteCode: "HQ",
        role: .headOffice
    )

    @Test(arguments: [
        ("short1234", "at least 12"),
        ("aaaaaaaaaaaaaa", "too few"),
        ("MyPassword2026!", "most common"),
        ("anna.kowalska-2026", "login or a name"),
        ("kowalska-is-here-1", "login or a name"),
    ])
    func aWeakPasswordIsRefusedWithTheReason(_ password: String, _ reason: String) {
        // Given a password that is short, repetitive, common, or made of the login or a name
        // When it is judged
        let weakness = Setup.weakness(of: password, login: "anna.kowalska", names: ["Anna", "Kowalska", "Head office"])
        // Then it is refused, saying why
        #expect(weakness?.contains(reason) == true, "\(password): \(weakness ?? "accepted")")
    }

    @Test func aFewUnrelatedWordsMakeAnAcceptedPassword() {
        // Given a long password of unrelated words
        // When it is judged
        // Then it passes
        #expect(Setup.weakness(of: "amber-lantern-ferry-42", login: "anna.kowalska", names: ["Anna", "Kowalska"]) == nil)
    }

    @Test func aFirstRunCutShortAfterTheDemoDataLeavesNothingBehindForHeadOffice() async throws {
        // Given a new store into which a first run had begun loading the demo data, cut short before the manager
        let store = try TemporaryStore()
        try await store.backoffice.setup.beginAttempt()
        _ = try DemoData.seed(into: store.store, options: .init())
        #expect(try await store.backoffice.setup.state().pending)
        // When the owner's next attempt chooses head office
        let id = try await store.backoffice.setup.complete(Self.form, title: "Sales Manager")
        // Then the store holds the new manager and nothing of the demo
        #expect(try store.count("SELECT count(*) FROM employees") == 1)
        #expect(try store.count("SELECT count(*) FROM orders") == 0)
        #expect(try store.count("SELECT count(*) FROM employees WHERE id = ? AND title = 'Sales Manager'", [id]) == 1)
        #expect(try await store.backoffice.sync.siteCode() == "HQ")
        #expect(try await store.backoffice.setup.state().pending == false)
    }

    @Test func dataPutInBeforeTheFirstRunIsKeptByHeadOffice() async throws {
        // Given a store filled before its first run (an import with the CLI), with nobody able to sign in yet
        let store = try TemporaryStore(seed: .init())
        let customers = try store.count("SELECT count(*) FROM customers")
        // When the first run makes it head office
        _ = try await store.backoffice.setup.complete(Self.form, title: "Sales Manager")
        // Then every customer is still there
        #expect(customers > 0)
        #expect(try store.count("SELECT count(*) FROM customers") == customers)
    }

    @Test func aDemoOrAShopIsRefusedOnAStoreFilledBeforeTheFirstRun() async throws {
        // Given a store filled before its first run
        let store = try TemporaryStore(seed: .init())
        // When a first run that would fill it (the demo, or joining a company) begins
        let error = await northwindError { try await store.backoffice.setup.beginAttempt() }
        // Then it is refused, naming the choice, and nothing is deleted
        guard case .invalid(let fields) = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(fields.map(\.field) == ["role"])
        #expect(try store.count("SELECT count(*) FROM customers") > 0)
    }

    @Test func theFirstRunIsDoneOnceAndASecondIsRefused() async throws {
        // Given a store whose first run is done
        let store = try TemporaryStore()
        _ = try await store.backoffice.setup.complete(Self.form, title: "Sales Manager")
        // When someone posts the form again, with another login
        var again = Self.form
        again.login = "mallory"
        let error = await northwindError { _ = try await store.backoffice.setup.complete(again, title: "Sales Manager") }
        // Then it is refused, and no second manager exists
        #expect(error?.description.contains("done already") == true, "\(String(describing: error))")
        #expect(try store.count("SELECT count(*) FROM credentials") == 1)
    }

    @Test func aStoreWithAPasswordAlreadyNeedsNoFirstRun() async throws {
        // Given a store from before the first-run page, where a manager already has a password (set with the CLI)
        let store = try TemporaryStore(seed: .init())
        let employee = try #require(try await store.backoffice.records.list(Employee.self, limit: 1).items.first)
        _ = try await store.backoffice.accounts.setPassword(employeeID: employee.id!, password: "amber-lantern-ferry-42", cost: 4)
        // When the first run's state is read
        // Then none is pending: nobody is sent to a first-run page on an upgraded store
        #expect(try await store.backoffice.setup.state().pending == false)
    }

    @Test func aFormWithEveryFieldWrongNamesEachField() {
        // Given an empty form
        // When it is checked
        let error = #expect(throws: NorthwindError.self) { try Setup.validate(FirstRunForm()) }
        // Then each field is named
        guard case .invalid(let fields) = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(Set(fields.map(\.field)) == ["firstName", "lastName", "login", "password", "siteName", "siteCode", "role"])
    }

    @Test(arguments: [
        ("https://hq.example/", "3A:F2", "not a SHA-256 fingerprint"),
        ("https://hq.example/", String(repeating: "ZZ:", count: 31) + "ZZ", "not a SHA-256 fingerprint"),
        ("http://hq.example:8444", String(repeating: "3A:", count: 31) + "3A", "https://"),
    ])
    func aShopsFingerprintThatIsNoneOrIsForPlainHTTPIsRefused(_ server: String, _ fingerprint: String, _ reason: String) {
        // Given a shop's form whose fingerprint is too short, not hexadecimal, or given for an http:// address
        var form = Self.form
        form.role = .shop
        form.server = server
        form.token = "a-token"
        form.fingerprint = fingerprint
        // When it is checked
        let error = #expect(throws: NorthwindError.self) { try Setup.validate(form) }
        // Then the fingerprint alone is named, with the reason
        guard case .invalid(let fields) = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(fields.map(\.field) == ["fingerprint"])
        #expect(fields.first?.message.contains(reason) == true)
    }

    @Test(arguments: [
        "sha256 Fingerprint=3A:F2:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD",
        "3af20011223344556677 8899aabbccddeeff0011223344556677 8899aabbccdd",
    ])
    func aFingerprintIsReadAsConsolesAndOpenSSLPrintIt(_ given: String) {
        // Given a fingerprint in pairs with openssl's prefix, or lowercase in groups
        // When it is read
        let read = CertificateFingerprint.normalised(given)
        // Then it is the same 64 digits, shown back in pairs
        #expect(read == "3af20011223344556677889" + "9aabbccddeeff00112233445566778899aabbccdd")
        #expect(read.map(CertificateFingerprint.display)?.hasPrefix("3A:F2:00:11") == true)
    }
}
