import Foundation
@_spi(SyncEngine) import Northwind
import NorthwindStore
import NorthwindSync
import SyncAPI
import SyncProtocol
import Testing

@testable import NorthwindTestSupport
@testable import SyncServer

extension Company {
    /// Lets the demo data's first employee (the same person everywhere, by record id) sign in at `name` as `nancy`,
    /// as `northwind set-password` does.
    func letNancySignIn(at name: String, login: String = "nancy") async throws -> Backoffice {
        let backoffice = try open(name)
        let first = try #require(try await open("hq").records.list(Employee.self, limit: 1).items.first)
        let nancy = try #require(try await backoffice.records.list(Employee.self, limit: 1000).items.first { $0.recordID == first.recordID })
        _ = try await backoffice.accounts.setPassword(employeeID: nancy.id ?? 0, password: "nancy-secret", login: login, cost: 4)
        return backoffice
    }
}

/// A user's own settings follow them between installations, through their private database on the sync server.
@Suite("Users' settings follow them", .serialized)
struct UserSettingsSyncTests {
    @Test func aPreferenceSetAtOneInstallationShowsAtAnotherAfterSync() async throws {
        // Given head office and a shop, where Nancy signs in at both
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try await company.letNancySignIn(at: "hq")
        let shop = try await company.letNancySignIn(at: "oxf")
        // When she chooses compact lists at head office, and both sync
        try await hq.settings.set("display.density", "compact", user: "nancy")
        let sent = try await company.sync("hq")
        let received = try await company.sync("oxf")
        // Then the shop shows compact lists for her, brought by the first sync of her settings there
        #expect(sent.userSettingsUploaded == 1)
        #expect(received.userSettingsDownloaded == 1)
        #expect(try await shop.settings.user(login: "nancy")["display.density"]?.value == "compact")
        #expect(try await shop.settings.syncStates(login: "nancy")["display.density"]?.reason == .initialSync)

        // When she then picks her start page at the shop
        try await shop.settings.set("display.startPage", "orders", user: "nancy")
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then head office has it too, as a change from the server
        #expect(try await hq.settings.user(login: "nancy")["display.startPage"]?.value == "orders")
        #expect(try await hq.settings.syncStates(login: "nancy")["display.startPage"]?.reason == .serverChange)
    }

    @Test func aLoginWithCapitalsSyncsAsTheSameUser() async throws {
        // Given a user who signs in as "Nancy.D" at both installations
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try await company.letNancySignIn(at: "hq", login: "Nancy.D")
        let shop = try await company.letNancySignIn(at: "oxf", login: "Nancy.D")
        // When she chooses compact lists at head office, and both sync
        try await hq.settings.set("display.density", "compact", user: "Nancy.D")
        try await company.sync("hq")
        try await company.sync("oxf")
        // Then the shop has it, whichever way her login is written
        #expect(try await shop.settings.user(login: "nancy.d")["display.density"]?.value == "compact")
        #expect(try await hq.userSettingsSync.pending(login: "Nancy.D").isEmpty)
    }

    @Test func twoInstallationsEditingTheSameSettingAgreeOnTheLaterEdit() async throws {
        // Given Nancy at both installations, in sync
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try await company.letNancySignIn(at: "hq")
        let shop = try await company.letNancySignIn(at: "oxf")
        try await company.sync("hq")
        try await company.sync("oxf")
        // When head office sets one number format and, a moment later, the shop another, before either syncs
        try await hq.settings.set("display.numberFormat", "de", user: "nancy")
        try await Task.sleep(for: .milliseconds(20))
        try await shop.settings.set("display.numberFormat", "ch", user: "nancy")
        try await company.sync("hq")
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then both keep the later one
        #expect(try await hq.settings.user(login: "nancy")["display.numberFormat"]?.value == "ch")
        #expect(try await shop.settings.user(login: "nancy")["display.numberFormat"]?.value == "ch")
        #expect(try await hq.userSettingsSync.pending(login: "nancy").isEmpty)
        #expect(try await shop.userSettingsSync.pending(login: "nancy").isEmpty)
    }

    @Test func aResetFollowsTheUserToo() async throws {
        // Given a density Nancy chose at head office, which the shop has
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try await company.letNancySignIn(at: "hq")
        let shop = try await company.letNancySignIn(at: "oxf")
        try await hq.settings.set("display.density", "compact", user: "nancy")
        try await company.sync("hq")
        try await company.sync("oxf")
        // When she resets it at the shop, and both sync
        try await shop.settings.remove("display.density", user: "nancy")
        try await company.sync("oxf")
        try await company.sync("hq")
        // Then head office shows the default again
        #expect(try await hq.settings.user(login: "nancy")["display.density"] == nil)
    }

    @Test func aUserWhoseServerDatabaseIsFullKeepsTheirChangeHereAndIsTold() async throws {
        // Given Nancy, whose private database on the server already holds its quota of 1,024 records
        let company = try Company()
        try await company.start(shops: ["oxf"])
        let hq = try await company.letNancySignIn(at: "hq")
        try await company.sync("hq")
        let service = try await SyncService.open(database: company.database)
        let caller = try #require(try await service.installations(container: "acme").first { $0.role == .hq })
        for batch in stride(from: 0, to: SyncLimits.recordsPerUser, by: SyncLimits.operationsPerRequest) {
            let operations = (batch..<min(batch + SyncLimits.operationsPerRequest, SyncLimits.recordsPerUser)).map { index in
                Components.Schemas.RecordOperation(
                    opID: String(index),
                    operationType: .create,
                    record: SyncRecord(recordName: "other.\(index)", recordType: "UserSetting", zoneID: ZoneID("settings"))
                )
            }
            let request = Components.Schemas.ModifyRequest(clientID: "filler", batchID: UUID().uuidString, operations: operations)
            _ = try await service.modifyRecords(caller, container: "acme", scope: .user("nancy"), request: request, bodySize: 0)
        }
        await service.close()
        // When she changes a setting at head office and it syncs
        try await hq.settings.set("display.density", "compact", user: "nancy")
        let report = try await company.sync("hq")
        // Then the change stays here, pending, and says why
        #expect(report.usersOverQuota == ["nancy"])
        let state = try #require(try await hq.settings.syncStates(login: "nancy")["display.density"])
        #expect(state.pending && state.reason == .quotaViolation)
        #expect(try await hq.settings.user(login: "nancy")["display.density"]?.value == "compact")
    }

    @Test func aRecordForAKeyThatDoesNotSyncIsPassedOver() async throws {
        // Given a store where Nancy signs in
        let store = try TemporaryStore()
        let employee = try await store.backoffice.records.create(Employee(firstName: "Nancy", lastName: "Davolio"))
        _ = try await store.backoffice.accounts.setPassword(employeeID: employee.id ?? 0, password: "nancy-secret", login: "nancy", cost: 4)
        // When her private database sends a record for an installation key, and one for a value no rule allows
        let records = [
            SyncRecord(
                recordName: "server.port",
                recordType: "UserSetting",
                zoneID: ZoneID("settings"),
                fields: ["value": .string("9999"), "clock": .string("001795460000000.HQ")]
            ),
            SyncRecord(
                recordName: "display.density",
                recordType: "UserSetting",
                zoneID: ZoneID("settings"),
                fields: ["value": .string("enormous"), "clock": .string("001795460000000.HQ")]
            ),
        ]
        let changed = try await store.backoffice.userSettingsSync.apply(login: "nancy", records: records, token: nil, reason: .serverChange)
        // Then neither is written
        #expect(changed.isEmpty)
        #expect(try await store.backoffice.settings.user(login: "nancy").isEmpty)
        #expect(try await store.backoffice.settings.installation().isEmpty)
    }
}

extension ShopSyncEndToEndTests {
    @Test func aMovedSyncServerIsReachedThroughTheSyncServerSetting() async throws {
        // Given a shop that joined through an address that no longer answers
        let company = try Company()
        try await company.start(shops: ["oxf"])
        company.cutNetwork()
        defer { company.restoreNetwork() }
        let failed = try await CLI.run(["sync", "now", "--store", company.store("oxf")])
        #expect(failed.status != 0)
        // When the operator gives the server's new address in the environment, and syncs
        let synced = try await CLI.run(
            ["sync", "now", "--store", company.store("oxf")],
            environment: ["NORTHWIND_SYNC_SERVER": "http://127.0.0.1:\(company.server.port)"]
        )
        // Then the sync goes through
        #expect(synced.status == 0, "\(synced.stderr)")
    }
}

extension ShopSyncEndToEndTests {
    @Test func aShopWithAnEnrolmentTokenInItsSettingsJoinsWhenItFirstServes() async throws {
        // Given head office on a sync server, and a new, empty shop whose environment holds the server and a token
        let company = try Company()
        try await company.start(shops: [])
        let token = try await company.token(role: .shop)
        guard let binary = CLI.binary("northwind") else { throw CLIError(description: "no northwind binary: build it first") }
        // When the shop's server first starts
        let process = try ChildProcess(
            binary.path,
            ["serve", "--store", company.store("oxf"), "--empty", "--port", "0"],
            environment: ["NORTHWIND_SYNC_SERVER": company.url, "NORTHWIND_SYNC_ENROLMENT_TOKEN": token],
            output: .pipe,
            errors: .toOutput
        )
        defer {
            if !process.stop(within: .seconds(20)) { Issue.record("northwind serve was still running 20 s after SIGTERM") }
        }
        let seen = process.read(process.output!, until: { $0.contains("Syncing with") })
        drain(process.output!)
        // Then it joins, says so, syncs, and never prints the token
        #expect(seen.contains("Joined container acme at \(company.url)"), "\(seen)")
        #expect(seen.contains("Syncing with \(company.url)"))
        #expect(!seen.contains(token))
    }
}
