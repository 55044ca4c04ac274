import Foundation
import GRDB
import OpenAPIRuntime
import SyncAPI
import SyncProtocol
import SyncServer
import Testing

@testable import NorthwindTestSupport

/// The server's side of "sync loses nothing": replays that are not replays, tokens from a past the server no longer
/// has, zones that hold a ledger, and restores from a backup.
@Suite("Sync server: trust")
struct SyncTrustTests {
    @Test(arguments: SyncEngine.all) func aBatchIDSentAgainWithOtherContentIsRefusedAndChangesNothing(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a batch applied once (as a store reverted to an older copy sent it before)
            let (hq, _) = try await server.company()
            _ = try await hq.modify([(.create, record("p1", ["name": .string("Chai")]))], batchID: "HQ-1-2")
            let before = try await hq.changes("catalog").pages.last?.syncToken
            // When the same batch ID arrives with other content
            let reused = try await hq.modify([(.create, record("p2", ["name": .string("Chang")]))], batchID: "HQ-1-2")
            // Then it is refused with its own code, and the zone did not move
            #expect(reused.failure?.serverErrorCode == .batchReused)
            #expect(try await hq.changes("catalog").pages.last?.syncToken == before)
        }
    }

    @Test(arguments: SyncEngine.all) func aBatchIDIsRememberedPerDatabase(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a batch applied to the installation's private database
            let (hq, _) = try await server.company()
            _ = try await hq.createZones(["settings"], database: ._private)
            _ = try await hq.modify([(.create, record("s1", type: "Setting", zone: "settings"))], batchID: "b-1", database: ._private)
            // When a batch with the same ID and other records goes to the shared database
            let shared = try await hq.modify([(.create, record("p1"))], batchID: "b-1")
            // Then it is applied there, not answered with the private batch's answer
            #expect(shared.value?.replayed == false)
            #expect(shared.value?.records.first?.record?.recordName == "p1")
            #expect(try await hq.changes("catalog").pages.last?.records.map(\.recordName) == ["p1"])
        }
    }

    @Test(arguments: SyncEngine.all) func aStoreBehindWhatTheServerTookFromItsSiteIsRefusedUntilItTakesTheSiteOver(
        _ engine: SyncEngine
    ) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop whose client has had two batches taken
            let (_, shop) = try await server.company()
            _ = try await shop.modify([(.create, record("o1", type: "Order", zone: "site-OXF"))], clientID: "copy-a", sequence: 1)
            _ = try await shop.modify([(.create, record("o2", type: "Order", zone: "site-OXF"))], clientID: "copy-a", sequence: 2)
            // When the same client sends a new batch as its second again (its store put back to an older copy), and
            // another client sends as the site's third (a copy of the store)
            let reverted = try await shop.modify([(.create, record("o3", type: "Order", zone: "site-OXF"))], clientID: "copy-a", sequence: 2)
            let copied = try await shop.modify([(.create, record("o4", type: "Order", zone: "site-OXF"))], clientID: "copy-b", sequence: 3)
            // and then the copy takes the site over
            let resumed = try await shop.modify(
                [(.create, record("o5", type: "Order", zone: "site-OXF"))],
                clientID: "copy-b",
                sequence: 3,
                takeOver: true
            )
            let old = try await shop.modify([(.create, record("o6", type: "Order", zone: "site-OXF"))], clientID: "copy-a", sequence: 3)
            // Then both are refused with their own code and change nothing; after the take-over, the other copy is
            // refused
            #expect(reverted.failure?.serverErrorCode == .storeDiverged)
            #expect(copied.failure?.serverErrorCode == .storeDiverged)
            #expect(resumed.value?.records.first?.record != nil)
            #expect(old.failure?.serverErrorCode == .storeDiverged)
            let names = try await shop.changes("site-OXF").pages.flatMap(\.records).map(\.recordName).sorted()
            #expect(names == ["o1", "o2", "o5"])
        }
    }

    @Test(arguments: SyncEngine.all) func aTokenAheadOfItsZonesChangesExpiresAndIsNotRewound(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop whose token is ahead of the zone's changes (as after a restore by other tools, which left
            // the epoch as it was)
            let (hq, shop) = try await server.company()
            _ = try await hq.modify([(.create, record("p1"))])
            let token = try #require(try await shop.changes("catalog").pages.last?.syncToken)
            let ahead = try Self.advanced(token, by: 5)
            // When the shop fetches with it, and head office writes more
            let answer = try await shop.changes("catalog", after: ahead)
            _ = try await hq.modify([(.create, record("p2"))])
            // Then the token expired, rather than be answered "nothing new" and skip what comes next
            #expect(answer.error?.serverErrorCode == .changeTokenExpired)
        }
    }

    /// A zone token's change number moved on by `steps`: its JSON, base64url, as the server writes it.
    static func advanced(_ token: String, by steps: Int64) throws -> String {
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        let data = try #require(Data(base64Encoded: base64))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let seq = try #require(object["seq"] as? NSNumber).int64Value
        object["seq"] = seq + steps
        let encoded = try JSONSerialization.data(withJSONObject: object, options: .sortedKeys)
        return encoded.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test(arguments: SyncEngine.all) func aClockFarAheadOfTheServersIsRefusedAndChangesNothing(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a record whose field clock is a day ahead of the server's time
            let (hq, _) = try await server.company()
            let ahead = Int64((Date().timeIntervalSince1970 + 86_400) * 1000)
            let clocks = "{\"name\":\"\(String(format: "%015lld", ahead)).HQ\"}"
            // When it is sent
            let answer = try await hq.modify([(.create, record("p1", ["name": .string("Chai"), "~clocks": .string(clocks)]))])
            // Then the batch is refused with its own code, and nothing was written
            #expect(answer.failure?.serverErrorCode == .clockSkew)
            #expect(try await hq.changes("catalog").pages.flatMap(\.records).isEmpty)
        }
    }

    @Test(arguments: SyncEngine.postgresOnly) func aPurgeRacingADeleteNeverDropsATombstoneBelowTheZonesFloor(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given an old deletion in the catalogue, and a shop's token from before a second record is deleted
            let (hq, shop) = try await server.company()
            _ = try await hq.modify([(.create, record("p1")), (.create, record("p2"))])
            let p1 = try #require(try await shop.changes("catalog").pages.last?.records.first { $0.recordName == "p1" })
            _ = try await hq.modify([(.delete, record("p1", tag: p1.recordChangeTag))])
            let token = try #require(try await shop.changes("catalog").pages.last?.syncToken)
            try await Self.psql(server.database, "UPDATE records SET modified = 0 WHERE recordname = 'p1'")
            // When a writer (here a plain PostgreSQL session, holding the zone as the server's writers do) deletes p2
            // and commits while a purge of old deletions runs
            let writer = try ChildProcess(
                "/usr/bin/psql",
                [
                    server.database, "-v", "ON_ERROR_STOP=1", "-c",
                    """
                    BEGIN;
                    SELECT 1 FROM zones WHERE zonename = 'catalog' FOR UPDATE;
                    UPDATE zones SET seq = seq + 1 WHERE zonename = 'catalog';
                    UPDATE records SET deleted = true, modified = 0, seq = (SELECT seq FROM zones WHERE zonename = 'catalog')
                      WHERE recordname = 'p2';
                    SELECT pg_sleep(1.5);
                    COMMIT;
                    """,
                ]
            )
            try await Task.sleep(for: .milliseconds(500))
            let purge = try await CLI.run(["purge", "--database", server.database, "--days", "0"], program: "northwind-sync-server")
            let written = writer.waitUntilExit()
            // Then the shop's token expired: the purge raised the floor past every deletion it removed, so the
            // shop fetches again rather than keep p2 for good
            #expect(written.status == 0)
            #expect(purge.status == 0, "\(purge.stderr)")
            #expect(try await shop.changes("catalog", after: token).error?.serverErrorCode == .changeTokenExpired)
        }
    }

    /// Runs SQL on a PostgreSQL database with `psql`, which must succeed.
    static func psql(_ url: String, _ sql: String) async throws {
        let (termination, _, errors) = try await ChildProcess.runOffPool("/usr/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-c", sql])
        guard termination.status == 0 else { throw CLIError(description: "psql failed: \(errors)") }
    }

    @Test(arguments: SyncEngine.all) func aRecordHoldingANULIsRefusedRatherThanStoredCutShort(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            // When a record whose text holds a NUL is sent (SQLite would keep "a", PostgreSQL refuses it)
            let answer = try await hq.modify([(.create, record("p1", ["name": .string("a\u{0}b")]))])
            // Then it is refused naming the character, and nothing was written
            #expect(answer.value?.records.first?.error?.serverErrorCode == .badRequest)
            #expect(answer.value?.records.first?.error?.reason.contains("NUL") == true)
            #expect(try await hq.changes("catalog").pages.flatMap(\.records).isEmpty)
        }
    }

    @Test(arguments: SyncEngine.all) func aRecordWithNoTypeIsRefused(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            // When a record with an empty recordType is sent
            let answer = try await hq.modify([(.create, record("p1", type: ""))])
            // Then it is refused, and nothing was written
            #expect(answer.value?.records.first?.error?.serverErrorCode == .badRequest)
            #expect(try await hq.changes("catalog").pages.flatMap(\.records).isEmpty)
        }
    }

    /// A record as an installation sends it again after the server's restore: with the server's time of its version.
    static func putBack(_ record: SyncRecord, heldSince: Int64) -> SyncRecord {
        var record = record
        record.modified = Stamp(timestamp: heldSince, site: "HQ")
        return record
    }

    @Test(arguments: SyncEngine.all) func aVersionSentAgainIsRefusedOverADeletionTheServerTookAfterIt(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a product written, then deleted
            let (hq, _) = try await server.company()
            let written = try #require(try await hq.modify([(.create, record("p1", ["name": .string("Chai")]))]).value?.records.first?.record)
            _ = try await hq.modify([(.delete, record("p1", tag: written.recordChangeTag))])
            let before = try await hq.changes("catalog").pages.last?.syncToken
            // When an installation that held the written version sends it again, with that version's server time
            let heldSince = try #require(written.modified?.timestamp)
            let answer = try await hq.modify([(.create, Self.putBack(record("p1", ["name": .string("Chai")]), heldSince: heldSince))])
            // Then it is refused as deleted, and the deletion stands
            #expect(answer.value?.records.first?.error?.serverErrorCode == .notFound, "\(answer)")
            #expect(try await hq.changes("catalog").pages.last?.syncToken == before)
        }
    }

    @Test(arguments: SyncEngine.all) func aVersionSentAgainThatIsNewerThanTheDeletionIsTaken(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a product written, then deleted
            let (hq, _) = try await server.company()
            let written = try #require(try await hq.modify([(.create, record("p1", ["name": .string("Chai")]))]).value?.records.first?.record)
            let deleted = try #require(
                try await hq.modify([(.delete, record("p1", tag: written.recordChangeTag))]).value?.records.first?.record
            )
            // When an installation sends again a version the server took after that deletion (and then lost)
            let heldSince = try #require(deleted.modified?.timestamp) + 1
            let answer = try await hq.modify([(.create, Self.putBack(record("p1", ["name": .string("Chai again")]), heldSince: heldSince))])
            // Then the server takes it back
            #expect(answer.value?.records.first?.record?.fields["name"] == .string("Chai again"), "\(answer)")
        }
    }

    @Test(arguments: SyncEngine.all) func headOfficePutsBackIntoASitesZoneOnlyARecordTheZoneLacksFromBeforeTheRestore(
        _ engine: SyncEngine
    ) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop's zone holding one order, and the database then restored (a new epoch)
            let (hq, shop) = try await server.company()
            let o1 = try await shop.modify([(.create, record("o1", type: "Order", zone: "site-OXF", ["number": .string("1")]))])
            let heldSince = try #require(o1.value?.records.first?.record?.modified?.timestamp)
            try await Task.sleep(for: .milliseconds(5))
            try await server.service.startNewEpoch()
            // When head office puts back an order the zone lacks, and one it holds, both from before the restore; then
            // one from long before the data the restore kept, and writes there as usual
            func order(_ name: String) -> SyncRecord { record(name, type: "Order", zone: "site-OXF") }
            let lacked = try await hq.modify([(.create, Self.putBack(order("o2"), heldSince: heldSince))])
            let held = try await hq.modify([(.create, Self.putBack(order("o1"), heldSince: heldSince))])
            let older = try await hq.modify([(.create, Self.putBack(order("o3"), heldSince: 1))])
            let written = try await hq.modify([(.create, order("o4"))])
            // and the shop puts back into head office's own zone
            let byTheShop = try await shop.modify([(.create, Self.putBack(record("x1", zone: "prices"), heldSince: heldSince))])
            // Then only the order the zone lacked, from between its data and the restore, is taken; the one it holds is
            // answered with the zone's own
            #expect(lacked.value?.records.first?.record != nil, "\(lacked)")
            #expect(held.value?.records.first?.error?.serverErrorCode == .exists)
            #expect(held.value?.records.first?.error?.serverRecord?.fields["number"] == .string("1"))
            #expect(older.value?.records.first?.error?.serverErrorCode == .accessDenied)
            #expect(written.value?.records.first?.error?.serverErrorCode == .accessDenied)
            #expect(byTheShop.value?.records.first?.error?.serverErrorCode == .accessDenied)
            #expect(try await shop.changes("site-OXF").pages.flatMap(\.records).map(\.recordName).sorted() == ["o1", "o2"])
        }
    }

    @Test(arguments: SyncEngine.all) func aForcedDeletionOfARecordTheServerLacksStopsALaterPutBack(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a product the server lacks (lost in a restore), deleted by an installation that held it
            let (hq, _) = try await server.company()
            let deleted = try await hq.modify([(.forceDelete, record("p1"))])
            // When another installation puts back the version it held, from before that deletion
            let putBack = try await hq.modify([(.create, Self.putBack(record("p1", ["name": .string("Chai")]), heldSince: 1))])
            // Then the deletion left a tombstone, and the put-back is refused as deleted
            #expect(deleted.value?.records.first?.record?.deleted == true, "\(deleted)")
            #expect(putBack.value?.records.first?.error?.serverErrorCode == .notFound, "\(putBack)")
            #expect(try await hq.changes("catalog").pages.flatMap(\.records).allSatisfy(\.deleted))
        }
    }

    /// Head office's schema for the tests: movements, whose location is bound to the zone's owner, and products.
    static let schema = Components.Schemas.ContainerSchema(recordTypes: [
        .init(name: "Product", fields: [.init(name: "name", _type: .string, required: true)]),
        .init(
            name: "Movement",
            appendOnly: true,
            fields: [
                .init(name: "productID", _type: .reference, required: true, referenceType: "Product"),
                .init(name: "delta", _type: .int64, required: true),
                .init(name: "location", _type: .string, ownerBound: true),
            ]
        ),
    ])

    @Test(arguments: SyncEngine.all) func recordsThatBreakTheContainersSchemaAreRefusedAndChangeNothing(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given head office's schema and a product
            let (hq, shop) = try await server.company()
            _ = try await hq.putSchema(path: .init(container: "acme"), body: .json(Self.schema)).ok
            _ = try await hq.modify([(.create, record("p1", ["name": .string("Chai")]))])
            let product = FieldValue.reference(RecordReference(recordName: "p1", zoneName: "catalog"))
            func movement(_ name: String, _ fields: [String: FieldValue]) -> SyncRecord {
                record(name, type: "Movement", zone: "site-OXF", fields)
            }
            // When the shop sends a good movement, then one naming head office's shelf, one naming none, one of a type
            // not declared, one with a mistyped field, and one naming a movement as its product
            let good = try await shop.modify([(.append, movement("m6", ["productID": product, "delta": .int64(5), "location": .string("OXF")]))])
            let answers = [
                try await shop.modify([(.append, movement("m1", ["productID": product, "delta": .int64(-5), "location": .string("HQ")]))]),
                try await shop.modify([(.append, movement("m2", ["productID": product, "delta": .int64(-5)]))]),
                try await shop.modify([(.append, record("m3", type: "Forged", zone: "site-OXF"))]),
                try await shop.modify([(.append, movement("m4", ["productID": product, "delta": .string("-5"), "location": .string("OXF")]))]),
                try await shop.modify([
                    (
                        .append,
                        movement(
                            "m5",
                            [
                                "productID": .reference(RecordReference(recordName: "m6", zoneName: "site-OXF")), "delta": .int64(1),
                                "location": .string("OXF"),
                            ]
                        )
                    )
                ]),
            ]
            let declaredByShop = try await shop.putSchema(path: .init(container: "acme"), body: .json(Self.schema))
            // Then each bad one is refused with its own code, the good one is written, and the shop cannot declare
            for answer in answers {
                #expect(answer.value?.records.first?.error?.serverErrorCode == .schemaViolation, "\(answer)")
            }
            #expect(good.value?.records.first?.record != nil)
            #expect(try await shop.changes("site-OXF").pages.flatMap(\.records).map(\.recordName) == ["m6"])
            if case .default(let status, _) = declaredByShop { #expect(status == 403) } else { Issue.record("a shop declared the schema") }
        }
    }

    @Test(arguments: SyncEngine.all) func aRevokedSitesOpenStreamEndsWithinASecondWhateverThePing(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine, ping: 60) { server in
            // Given a shop listening on a server that pings once a minute
            let (_, shop) = try await server.company()
            let events = try await EventListener.open(shop)
            defer { events.close() }
            // When the administrator revokes it
            try await server.service.revoke(container: "acme", siteCode: "OXF")
            // Then its stream ends within about a second, not at the next ping a minute away. The slack is for CI, where
            // two cores run this server, the test and dozens of other tests at once (2.5 s was once too little there).
            #expect(try await events.ends(within: .seconds(6)))
        }
    }

    @Test(arguments: SyncEngine.all) func aTokenForAChosenSiteEnrolsThatSiteAndCheckingItDoesNotSpendIt(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a token the administrator made for site KRK
            let token = try await server.service.createEnrollment(container: "acme", role: .shop, site: "KRK")
            // When it is checked, then redeemed by an installation that calls itself ABC
            let checked = try await server.anonymous.checkEnrollment(body: .json(.init(token: token))).ok.body.json
            let enrolled = try await server.anonymous.enroll(body: .json(.init(token: token, siteCode: "ABC"))).ok.body.json
            // Then the check named KRK and left the token good, and the installation is KRK
            #expect(checked.siteCode == "KRK")
            #expect(enrolled.siteCode == "KRK")
        }
    }

    @Test(arguments: SyncEngine.all) func aRevokedSiteGetsANewCredentialOnlyFromATokenThatReplacesIt(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given site OXF, enrolled and revoked
            let old = try await server.enrolCredential("OXF", role: .shop)
            try await server.service.revoke(container: "acme", siteCode: "OXF")
            // When a plain token, then a token that replaces its credential, enrol OXF
            let plain = try await server.service.createEnrollment(container: "acme", role: .shop)
            let refused = try await server.anonymous.enroll(body: .json(.init(token: plain, siteCode: "OXF")))
            let replacing = try await server.service.createEnrollment(container: "acme", role: .shop, site: "OXF", replace: true)
            let fresh = try await server.anonymous.enroll(body: .json(.init(token: replacing, siteCode: "OXF"))).ok.body.json.credential
            // Then the plain one is refused as EXISTS; the new credential works and the old one does not
            if case .default(let status, _) = refused { #expect(status == 409) } else { Issue.record("a plain token took an enrolled site") }
            let zones = try await server.client(credential: fresh).listZones(path: .init(container: "acme", database: .shared), body: .json(.init()))
            #expect((try? zones.ok) != nil)
            let stale = try await server.client(credential: old).listZones(path: .init(container: "acme", database: .shared), body: .json(.init()))
            if case .default(let status, _) = stale { #expect(status == 401) } else { Issue.record("the old credential still works") }
        }
    }

    /// Sets when a site's credential was issued, as if it were issued `days` ago, with the engine's own tools.
    static func ageCredential(of site: String, days: Int64, on server: SyncHarness) async throws {
        let issued = Int64(Date().timeIntervalSince1970 * 1000) - days * 86_400_000
        if server.database.hasPrefix("postgres") {
            try await psql(server.database, "UPDATE installations SET credentialissued = \(issued) WHERE sitecode = '\(site)'")
        } else {
            let queue = try DatabaseQueue(path: server.database)
            try await queue.write { db in
                try db.execute(sql: "UPDATE installations SET credentialIssued = ? WHERE siteCode = ?", arguments: [issued, site])
            }
            try queue.close()
        }
    }

    static func status(_ client: Client) async throws -> Int {
        switch try await client.listZones(path: .init(container: "acme", database: .shared), body: .json(.init())) {
        case .ok: 200
        case .default(let status, _): status
        }
    }

    @Test(arguments: SyncEngine.all) func aRotatedCredentialReplacesTheOldOneAtItsFirstUseAndNotBefore(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop's credential
            let old = try await server.enrolCredential("OXF", role: .shop)
            // When it rotates it, twice (as if the first answer were lost)
            let lost = try await server.client(credential: old).rotateCredential(path: .init(container: "acme")).ok.body.json.credential
            let rotated = try await server.client(credential: old).rotateCredential(path: .init(container: "acme")).ok.body.json
            // Then the old one still works until the new one is used, the lost one never works, and the new one
            // retires the old one at its first use
            #expect(try await Self.status(server.client(credential: old)) == 200)
            #expect(try await Self.status(server.client(credential: lost)) == 401)
            #expect(try await Self.status(server.client(credential: rotated.credential)) == 200)
            #expect(try await Self.status(server.client(credential: old)) == 401)
            #expect(try await Self.status(server.client(credential: rotated.credential)) == 200)
            #expect(rotated.expires != nil)
        }
    }

    @Test(arguments: SyncEngine.all) func anExpiredCredentialIsRefusedSayingWhatToDo(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop whose credential was issued 366 days ago, on a server whose credentials last 365 days
            let credential = try await server.enrolCredential("OXF", role: .shop)
            try await Self.ageCredential(of: "OXF", days: 366, on: server)
            // When it calls
            let answer = try await server.client(credential: credential).listZones(
                path: .init(container: "acme", database: .shared),
                body: .json(.init())
            )
            // Then it is refused as expired, with the way back, and rotating is refused too
            guard case .default(let status, let body) = answer else {
                Issue.record("an expired credential was taken")
                return
            }
            #expect(status == 401)
            let reason = try body.body.json.reason
            #expect(reason.contains("expired") && reason.contains("enroll --site OXF --replace"), "\(reason)")
            let rotate = try await server.client(credential: credential).rotateCredential(path: .init(container: "acme"))
            if case .default(let status, _) = rotate { #expect(status == 401) } else { Issue.record("an expired credential rotated") }
        }
    }

    @Test(arguments: SyncEngine.all) func zonesListSaysWhenTheCallersCredentialExpires(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine, arguments: ["--credential-days", "30"]) { server in
            // Given a shop enrolled on a server whose credentials last 30 days
            let credential = try await server.enrolCredential("OXF", role: .shop)
            // When it lists zones
            let listed = try await server.client(credential: credential).listZones(
                path: .init(container: "acme", database: .shared),
                body: .json(.init())
            ).ok.body.json
            // Then it learns when its credential was issued and that it expires 30 days after
            let issued = try #require(listed.credentialIssued)
            #expect(listed.credentialExpires == issued + 30 * 86_400_000)
        }
    }

    @Test func unusedTokensAreListedAndRevokedByTheirID() async throws {
        try await SyncHarness.with(.sqlite) { server in
            // Given two tokens, one of them used
            let unused = try await server.service.createEnrollment(container: "acme", role: .shop, site: "KRK")
            _ = try await server.enrolCredential("OXF", role: .shop)
            // When the administrator lists them and revokes the unused one by its id
            let listed = try await CLI.run(
                ["tokens", "list", "--database", server.database, "--container", "acme"],
                program: "northwind-sync-server"
            )
            let id = try #require(listed.stdout.split(separator: "\n").first { $0.contains("KRK") }?.split(separator: " ").first)
            let revoked = try await CLI.run(
                ["tokens", "revoke", "--database", server.database, "--container", "acme", String(id)],
                program: "northwind-sync-server"
            )
            let redeemed = try await server.anonymous.enroll(body: .json(.init(token: unused, siteCode: "KRK")))
            // Then the list showed both (one used by OXF), never the tokens themselves, and the revoked one enrols nobody
            #expect(listed.stdout.contains("used by OXF") && listed.stdout.contains("unused"), "\(listed.stdout)")
            #expect(!listed.stdout.contains(unused))
            #expect(revoked.status == 0, "\(revoked.stderr)")
            if case .default(let status, _) = redeemed { #expect(status == 401) } else { Issue.record("a revoked token enrolled a site") }
        }
    }

    @Test func aShopCannotDeleteItsSiteZoneWhichHoldsItsLedger() async throws {
        try await SyncHarness.with(.sqlite) { server in
            // Given a shop with a stock movement in its zone
            let (_, shop) = try await server.company()
            _ = try await shop.modify([(.append, record("m1", type: "stock_movements", zone: "site-OXF", ["delta": .int64(5)]))])
            // When the shop deletes its zone
            let answer = try await shop.modifyZones(
                path: .init(container: "acme", database: .shared),
                body: .json(.init(operations: [.init(operationType: .delete, zoneID: ZoneID("site-OXF"))]))
            ).ok.body.json.zones
            // Then it is refused, and the movement is still there
            #expect(answer.first?.error?.serverErrorCode == .accessDenied)
            #expect(try await shop.changes("site-OXF").pages.last?.records.map(\.recordName) == ["m1"])
        }
    }

    @Test func aRestoredBackupStartsANewEpochSoEveryEarlierTokenExpires() async throws {
        try await SyncHarness.with(.sqlite) { server in
            // Given a backup taken after one product, and a shop that fetched a second one
            let (hq, shop) = try await server.company()
            _ = try await hq.modify([(.create, record("p1"))])
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-backup-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let made = try await CLI.run(["backup", "create", "--database", server.database, folder], program: "northwind-sync-server")
            _ = try await hq.modify([(.create, record("p2"))])
            let token = try #require(try await shop.changes("catalog").pages.last?.syncToken)
            // When the backup is verified and restored over the server's data
            let verified = try await CLI.run(["backup", "verify", folder], program: "northwind-sync-server")
            let restored = try await CLI.run(["backup", "restore", "--database", server.database, folder], program: "northwind-sync-server")
            // Then each command succeeded, the shop's token expired, and the server holds the backup's one product
            #expect(made.status == 0, "\(made.stderr)")
            #expect(verified.status == 0 && verified.stdout.contains("1 records"), "\(verified.stdout)\(verified.stderr)")
            #expect(restored.status == 0, "\(restored.stderr)")
            #expect(try await shop.changes("catalog", after: token).error?.serverErrorCode == .changeTokenExpired)
            #expect(try await shop.changes("catalog").pages.flatMap(\.records).map(\.recordName) == ["p1"])
        }
    }

    @Test func aRestoreKeepsCredentialsRotatedOrRevokedAndTokensSpentSinceTheBackup() async throws {
        try await SyncHarness.with(.sqlite) { server in
            // Given a backup, then a shop's credential rotated (and the new one used), another site revoked, and a
            // token spent
            let old = try await server.enrolCredential("OXF", role: .shop)
            let revoked = try await server.enrolCredential("KRK", role: .shop)
            let token = try await server.service.createEnrollment(container: "acme", role: .shop, site: "WAW")
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-backup-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: folder) }
            _ = try await CLI.run(["backup", "create", "--database", server.database, folder], program: "northwind-sync-server")
            let new = try await server.client(credential: old).rotateCredential(path: .init(container: "acme")).ok.body.json.credential
            #expect(try await Self.status(server.client(credential: new)) == 200)
            try await server.service.revoke(container: "acme", siteCode: "KRK")
            _ = try await server.anonymous.enroll(body: .json(.init(token: token, siteCode: "WAW"))).ok.body.json
            // When the backup is restored
            let restored = try await CLI.run(["backup", "restore", "--database", server.database, folder], program: "northwind-sync-server")
            let again = try await server.anonymous.enroll(body: .json(.init(token: token, siteCode: "WAW")))
            // Then the rotated credential works and the old one does not, the revoked site stays revoked, and the
            // spent token enrols nobody: who may sync was not rolled back with the data
            #expect(restored.status == 0 && restored.stdout.contains("were kept"), "\(restored.stdout)\(restored.stderr)")
            #expect(try await Self.status(server.client(credential: new)) == 200)
            #expect(try await Self.status(server.client(credential: old)) == 401)
            #expect(try await Self.status(server.client(credential: revoked)) == 403)
            if case .default(let status, _) = again { #expect(status == 401) } else { Issue.record("a spent token enrolled again") }
        }
    }

    @Test(arguments: SyncEngine.all) func aStreamOpenedWithARotatedCredentialEndsOnceTheNewOneIsUsed(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine, ping: 60) { server in
            // Given a shop listening with its credential
            let old = try await server.enrolCredential("OXF", role: .shop)
            let events = try await EventListener.open(server.client(credential: old))
            defer { events.close() }
            // When it rotates the credential and uses the new one
            let new = try await server.client(credential: old).rotateCredential(path: .init(container: "acme")).ok.body.json.credential
            #expect(try await Self.status(server.client(credential: new)) == 200)
            // Then the stream opened with the old one ends within about a second (pings come each minute, so only the
            // watcher can end it; the bound allows for a loaded machine)
            #expect(try await events.ends(within: .seconds(10)))
        }
    }

    @Test(arguments: ["UPDATE records SET body = '{}' WHERE rowid = (SELECT min(rowid) FROM records)", "DELETE FROM records WHERE NOT deleted"])
    func aBackupWhoseRecordsWereDamagedOrRemovedIsRefused(_ damage: String) async throws {
        try await SyncHarness.with(.sqlite) { server in
            // Given a backup of a server with a record, then damaged inside its records (SQLite's structure intact)
            let (hq, _) = try await server.company()
            _ = try await hq.modify([(.create, record("p1"))])
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-backup-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: folder) }
            _ = try await CLI.run(["backup", "create", "--database", server.database, folder], program: "northwind-sync-server")
            let queue = try DatabaseQueue(path: folder + "/sync.sqlite")
            try await queue.write { db in try db.execute(sql: damage) }
            try queue.close()
            // When it is verified, and restored
            let verified = try await CLI.run(["backup", "verify", folder], program: "northwind-sync-server")
            let restored = try await CLI.run(["backup", "restore", "--database", server.database, folder], program: "northwind-sync-server")
            // Then both refuse it, saying the records are damaged or missing, and the server still has its record
            #expect(verified.status != 0 && restored.status != 0)
            #expect(verified.stderr.contains("damaged record") || verified.stderr.contains("checksum differs"), "\(verified.stderr)")
            #expect(try await hq.changes("catalog").pages.flatMap(\.records).map(\.recordName) == ["p1"])
        }
    }

    @Test func aDamagedBackupIsRefusedByVerifyAndRestore() async throws {
        try await SyncHarness.with(.sqlite) { server in
            // Given a backup whose database file was damaged
            let (hq, _) = try await server.company()
            _ = try await hq.modify([(.create, record("p1"))])
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sync-backup-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: folder) }
            _ = try await CLI.run(["backup", "create", "--database", server.database, folder], program: "northwind-sync-server")
            let file = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/sync.sqlite"))
            try file.seek(toOffset: 4096)
            try file.write(contentsOf: Data(repeating: 0xA5, count: 8192))
            try file.close()
            // When it is verified and restored
            let verified = try await CLI.run(["backup", "verify", folder], program: "northwind-sync-server")
            let restored = try await CLI.run(["backup", "restore", "--database", server.database, folder], program: "northwind-sync-server")
            // Then both refuse, and the server still answers with its data
            #expect(verified.status != 0)
            #expect(restored.status != 0)
            #expect(try await hq.changes("catalog").pages.flatMap(\.records).map(\.recordName) == ["p1"])
        }
    }
}
