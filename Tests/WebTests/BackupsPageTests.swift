import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Northwind
import Testing

@testable import NorthwindTestSupport
@testable import NorthwindWeb

/// The Backups page, served on loopback: managers see the backups and take one; others may not.
@Suite("Backups page")
struct BackupsPageTests {
    /// The app on loopback over a demo store, its backups going to `place`.
    static func serve(backupsIn place: BackupPlace, _ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let fixture = try await WebFixture.make()
        let settings = try await Settings(
            sources: SettingsSources(commandLine: ["backup.directory": place.folder.url.path]),
            backoffice: fixture.store.backoffice
        )
        let app = try await WebApp.build(backoffice: fixture.store.backoffice, options: WebOptions(port: 0), settings: settings)
        try await app.test(.live, body)
    }

    @Test func aManagerTakesABackupAndSeesItListedAsChecked() async throws {
        // Given a manager, and backups going to a folder of their own
        let place = BackupPlace()
        try await Self.serve(backupsIn: place) { client in
            let manager = try await BrowserSession.signIn(client, login: "andrew.fuller", password: "manager-secret")
            let before = try await client.execute(uri: "/backups", method: .get, headers: manager.headers)
            // When they press Back up now
            let after = try await manager.post(client, "/backups", [])
            // Then the page said there were none, and now names the new one, taken by hand and checked
            #expect(String(buffer: before.body).contains("No backups yet."))
            #expect(after.status == .ok)
            let html = String(buffer: after.body)
            let made = try #require(place.folder.list().first)
            #expect(html.contains("Backed up to \(made.name), and checked."))
            #expect(html.contains("<td data-label=\"Why\">manual</td>"))
            #expect(html.contains("<td data-label=\"Checked\">verified</td>"))
        }
    }

    @Test func anEmployeeWhoIsNotAManagerMayNotTakeABackup() async throws {
        // Given a sales representative
        let place = BackupPlace()
        try await Self.serve(backupsIn: place) { client in
            let rep = try await BrowserSession.signIn(client, login: "nancy.davolio", password: "rep-secret-1")
            // When they try to take a backup
            let response = try await rep.post(client, "/backups", [])
            // Then they are refused, and no backup is made
            #expect(response.status == .forbidden)
            #expect(place.folder.list().isEmpty)
        }
    }
}
