import Foundation
import SyncAPI
import SyncProtocol
import Testing

@testable import NorthwindTestSupport
@testable import SyncServer

extension Client {
    /// Creates zones in `user`'s private database.
    func createUserZones(_ names: [String], user: String) async throws -> [Components.Schemas.ZoneResult] {
        try await modifyZones(
            path: .init(container: "acme", database: ._private),
            headers: .init(syncUser: user),
            body: .json(.init(operations: names.map { .init(operationType: .create, zoneID: ZoneID($0)) }))
        ).ok.body.json.zones
    }

    /// Sends one batch to `user`'s private database.
    func modifyUser(
        _ operations: [(Components.Schemas.RecordOperation.OperationTypePayload, SyncRecord)],
        user: String
    ) async throws -> Result<Components.Schemas.ModifyResponse, SyncError> {
        let body = Components.Schemas.ModifyRequest(
            clientID: "test",
            batchID: UUID().uuidString,
            operations: operations.enumerated().map { .init(opID: "op\($0.offset)", operationType: $0.element.0, record: $0.element.1) }
        )
        switch try await modifyRecords(path: .init(container: "acme", database: ._private), headers: .init(syncUser: user), body: .json(body)) {
        case .ok(let ok): return .success(try ok.body.json)
        case .default(_, let failure): return .failure(try failure.body.json)
        }
    }

    /// The records `user`'s private zone holds now, page after page.
    func userRecords(_ zone: String, user: String) async throws -> [SyncRecord] {
        var records: [SyncRecord] = []
        var token: String?
        while true {
            let page = try await zoneChanges(
                path: .init(container: "acme", database: ._private),
                headers: .init(syncUser: user),
                body: .json(.init(zones: [.init(zoneID: ZoneID(zone), syncToken: token)]))
            ).ok.body.json.zones[0]
            records += page.records
            token = page.syncToken
            if !page.moreComing { return records }
        }
    }
}

/// A user's private database: every installation of the container reads and writes it for the user, within
/// iCloud's key-value quotas.
@Suite("A user's private database")
struct UserDatabaseTests {
    @Test(arguments: SyncEngine.all) func whatOneInstallationSavesForAUserAnotherReads(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given head office, which saves Nancy's density in her private database
            let (hq, shop) = try await server.company()
            _ = try await hq.createUserZones(["settings"], user: "nancy")
            let saved = try await hq.modifyUser([(.create, record("display.density", type: "Setting", zone: "settings"))], user: "nancy")
            #expect(saved.value != nil)
            // When the shop reads Nancy's database, and its own
            let nancys = try await shop.userRecords("settings", user: "nancy")
            let own = try await shop.lookupRecords(
                path: .init(container: "acme", database: ._private),
                body: .json(.init(records: [.init(recordName: "display.density", zoneID: ZoneID("settings"))]))
            ).ok.body.json.records
            // Then Nancy's holds the record, and the shop's own database does not
            #expect(nancys.map(\.recordName) == ["display.density"])
            #expect(own[0].error != nil)
        }
    }

    @Test(arguments: SyncEngine.all) func goingOverAUsersRecordQuotaIsRefusedAndKeepsWhatWasThere(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a user whose database holds 1,024 records, its quota
            let (hq, _) = try await server.company()
            _ = try await hq.createUserZones(["settings"], user: "nancy")
            for batch in stride(from: 0, to: SyncLimits.recordsPerUser, by: SyncLimits.operationsPerRequest) {
                let names = (batch..<min(batch + SyncLimits.operationsPerRequest, SyncLimits.recordsPerUser)).map { "key.\($0)" }
                let saved = try await hq.modifyUser(names.map { (.create, record($0, type: "Setting", zone: "settings")) }, user: "nancy")
                #expect(saved.value != nil, "\(String(describing: saved.failure))")
            }
            // When one more is saved, beside a change to one that exists
            let refused = try await hq.modifyUser(
                [(.create, record("key.more", type: "Setting", zone: "settings"))],
                user: "nancy"
            )
            let update = try await hq.modifyUser(
                [(.forceUpdate, record("key.0", type: "Setting", zone: "settings", ["value": .string("changed")]))],
                user: "nancy"
            )
            // Then the new record is refused with a message naming the quota, and changing one that exists is fine
            let error = try #require(refused.failure)
            #expect(error.serverErrorCode == .quotaExceeded)
            #expect(error.reason.contains("1025 records") && error.reason.contains("quota is 1024 records and 1 MB"))
            #expect(update.value != nil)
            #expect(try await hq.userRecords("settings", user: "nancy").count == SyncLimits.recordsPerUser)
        }
    }

    @Test(arguments: SyncEngine.all) func goingOverAUsersByteQuotaIsRefused(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a user whose database holds one record of 600 KB
            let (hq, _) = try await server.company()
            _ = try await hq.createUserZones(["settings"], user: "nancy")
            let large = String(repeating: "x", count: 600 * 1024)
            let first = try await hq.modifyUser([(.create, record("a", type: "Setting", zone: "settings", ["v": .string(large)]))], user: "nancy")
            #expect(first.value != nil)
            // When a second one as large is saved
            let second = try await hq.modifyUser([(.create, record("b", type: "Setting", zone: "settings", ["v": .string(large)]))], user: "nancy")
            // Then it is refused: together they would pass 1 MB
            #expect(second.failure?.serverErrorCode == .quotaExceeded)
        }
    }

    @Test(arguments: SyncEngine.all) func aUserHeaderOnTheSharedDatabaseIsRefused(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop
            let (_, shop) = try await server.company()
            // When it names a user on the shared database
            let answer = try await shop.zoneChanges(
                path: .init(container: "acme", database: .shared),
                headers: .init(syncUser: "nancy"),
                body: .json(.init(zones: [.init(zoneID: ZoneID("catalog"))]))
            )
            // Then the request is refused, saying the header belongs with private
            guard case .default(_, let failure) = answer else {
                Issue.record("a user header on the shared database was taken")
                return
            }
            let error = try failure.body.json
            #expect(error.serverErrorCode == .badRequest && error.reason.contains("private only"))
        }
    }
}
