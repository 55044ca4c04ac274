import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import OpenAPIRuntime
import SyncAPI
import SyncProtocol
import SyncServer
import Testing

@testable import NorthwindTestSupport

/// The protocol through a real server on loopback and a client generated from the same contract.
@Suite("Sync protocol")
struct SyncProtocolTests {
    // MARK: Enrolment and credentials

    @Test(arguments: SyncEngine.all) func aWrittenRecordReachesAnotherInstallation(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given head office and a shop
            let (hq, shop) = try await server.company()
            // When head office writes a product
            let written = try await hq.modify([(.create, record("p1", ["name": .string("Chai"), "price": .decimal("18.00")]))])
            // Then the shop fetches it from the catalogue's changes, as written
            let changes = try await shop.changes("catalog")
            let fetched = try #require(changes.pages.last?.records.first)
            #expect(fetched.fields["name"] == .string("Chai"))
            #expect(fetched.fields["price"] == .decimal("18.00"))
            #expect(fetched.recordChangeTag == written.value?.records[0].record?.recordChangeTag)
            #expect(fetched.created?.site == "HQ")
        }
    }

    @Test(arguments: SyncEngine.all) func anEnrolmentTokenWorksOnce(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a token already exchanged
            let token = try await server.service.createEnrollment(container: "acme", role: .shop)
            _ = try await server.anonymous.enroll(body: .json(.init(token: token, siteCode: "OXF"))).ok
            // When it is used again
            let again = try await server.anonymous.enroll(body: .json(.init(token: token, siteCode: "CAM")))
            // Then it is refused
            guard case .default(let status, let failure) = again else {
                Issue.record("a spent token enrolled again")
                return
            }
            #expect(status == 401)
            #expect(try failure.body.json.serverErrorCode == .authenticationFailed)
        }
    }

    @Test(arguments: SyncEngine.all) func aSiteCodeInUseIsRefused(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given OXF enrolled
            _ = try await server.enrol("OXF", role: .shop)
            // When a second installation claims OXF
            let token = try await server.service.createEnrollment(container: "acme", role: .shop)
            let answer = try await server.anonymous.enroll(body: .json(.init(token: token, siteCode: "OXF")))
            // Then it is refused with EXISTS
            guard case .default(let status, let failure) = answer else {
                Issue.record("a second OXF enrolled")
                return
            }
            #expect(status == 409)
            #expect(try failure.body.json.serverErrorCode == .exists)
        }
    }

    @Test(arguments: SyncEngine.all) func aRequestWithoutCredentialIsRefused(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // When a zone list is asked for without a credential
            let (status, _, error) = try await server.raw("/sync/v1/acme/shared/zones/list", body: Data("{}".utf8))
            // Then it is refused, saying what to send
            #expect(status == 401)
            #expect(error?.serverErrorCode == .authenticationFailed)
        }
    }

    @Test(arguments: SyncEngine.all) func aRevokedShopIsRefusedAtOnce(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop that has synced
            let (_, shop) = try await server.company()
            _ = try await shop.changes("catalog")
            // When the administrator revokes it
            try await server.service.revoke(container: "acme", siteCode: "OXF")
            // Then its next request is refused
            let answer = try await shop.listZones(path: .init(container: "acme", database: .shared), body: .json(.init()))
            guard case .default(let status, let failure) = answer else {
                Issue.record("a revoked shop was served")
                return
            }
            #expect(status == 403)
            #expect(try failure.body.json.serverErrorCode == .accessDenied)
        }
    }

    // MARK: Writing

    @Test(arguments: SyncEngine.all) func aStaleUpdateConflictsAndCarriesTheServerRecord(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a product both sites hold at change tag T, which head office then edits
            let (hq, shop) = try await server.company()
            let tag = try #require(
                try await hq.modify([(.create, record("p1", ["name": .string("Chai")]))]).value?.records[0].record?.recordChangeTag
            )
            _ = try await hq.modify([(.update, record("p1", tag: tag, ["name": .string("Chai tea")]))])
            // When the shop updates from T
            let answer = try await shop.modify([(.update, record("p1", tag: tag, ["name": .string("Chai (loose)")]))])
            // Then it gets CONFLICT with the server's current record, and nothing changes
            let error = try #require(answer.value?.records[0].error)
            #expect(error.serverErrorCode == .conflict)
            #expect(error.serverRecord?.fields["name"] == .string("Chai tea"))
        }
    }

    @Test(arguments: SyncEngine.all) func anUpdateChangesOnlyTheFieldsSent(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a product with a name and a price
            let (hq, _) = try await server.company()
            let tag = try #require(
                try await hq.modify([(.create, record("p1", ["name": .string("Chai"), "price": .decimal("18.00")]))]).value?.records[0].record?
                    .recordChangeTag
            )
            // When only the price is sent
            let answer = try await hq.modify([(.update, record("p1", tag: tag, ["price": .decimal("19.00")]))])
            // Then the name stays
            let updated = try #require(answer.value?.records[0].record)
            #expect(updated.fields == ["name": .string("Chai"), "price": .decimal("19.00")])
            #expect(updated.recordChangeTag != tag)
        }
    }

    @Test(arguments: SyncEngine.all) func anUpdateNeedNotResendTheRecordsReferences(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a category, and a product that refers to it
            let (hq, _) = try await server.company()
            _ = try await hq.modify([(.create, record("c1", type: "Category", ["name": .string("Teas")]))])
            let created = try await hq.modify([
                (.create, record("p1", ["name": .string("Chai"), "category": .reference(RecordReference(recordName: "c1"))]))
            ])
            let tag = try #require(created.value?.records[0].record?.recordChangeTag)
            // When an update sends only the name
            let answer = try await hq.modify([(.update, record("p1", tag: tag, ["name": .string("Chai tea")]))])
            // Then it is saved, the reference kept
            #expect(answer.value?.records[0].error == nil)
            #expect(answer.value?.records[0].record?.fields["category"] == .reference(RecordReference(recordName: "c1")))
        }
    }

    @Test(arguments: SyncEngine.all) func aNullFieldInAnUpdateRemovesTheField(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a product with a name and a note
            let (hq, shop) = try await server.company()
            let tag = try #require(
                try await hq.modify([(.create, record("p1", ["name": .string("Chai"), "note": .string("fragile")]))]).value?.records[0].record?
                    .recordChangeTag
            )
            // When the note is cleared with NULL
            let answer = try await hq.modify([(.update, record("p1", tag: tag, ["note": .null]))])
            // Then the record, as answered and as another installation reads it, has no note and keeps its name
            #expect(answer.value?.records[0].record?.fields == ["name": .string("Chai")])
            let fetched = try #require(try await shop.changes("catalog").pages.flatMap(\.records).first { $0.recordName == "p1" })
            #expect(fetched.fields == ["name": .string("Chai")])
        }
    }

    @Test(arguments: SyncEngine.all) func creatingAnExistingRecordAnswersExists(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            _ = try await hq.modify([(.create, record("p1"))])
            // When the same record is created again
            let answer = try await hq.modify([(.create, record("p1"))])
            // Then EXISTS
            #expect(answer.value?.records[0].error?.serverErrorCode == .exists)
        }
    }

    @Test(arguments: SyncEngine.all) func updatingAMissingRecordAnswersNotFound(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            // When a record that was never created is updated
            let answer = try await hq.modify([(.update, record("ghost", tag: "1"))])
            // Then NOT_FOUND
            #expect(answer.value?.records[0].error?.serverErrorCode == .notFound)
        }
    }

    @Test(arguments: SyncEngine.all) func writingToAMissingZoneAnswersZoneNotFound(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            // When a record is written to a zone never created
            let answer = try await hq.modify([(.create, record("p1", zone: "nowhere"))])
            // Then ZONE_NOT_FOUND
            #expect(answer.value?.records[0].error?.serverErrorCode == .zoneNotFound)
        }
    }

    @Test(arguments: SyncEngine.all) func forceUpdateAndForceDeleteSkipTheTag(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, shop) = try await server.company()
            _ = try await hq.modify([(.create, record("p1", ["name": .string("Chai")]))])
            // When the shop force-updates and then force-deletes without a tag
            let updated = try await shop.modify([(.forceUpdate, record("p1", ["name": .string("Chai!")]))])
            let deleted = try await shop.modify([(.forceDelete, record("p1"))])
            // Then both apply
            #expect(updated.value?.records[0].record?.fields["name"] == .string("Chai!"))
            #expect(deleted.value?.records[0].record?.deleted == true)
        }
    }

    // MARK: Ownership

    @Test(arguments: SyncEngine.all) func aShopCannotWriteAnotherSitesZone(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given OXF's zone and a second shop
            let (_, oxf) = try await server.company()
            _ = try await oxf.modify([(.create, record("o1", type: "Order", zone: "site-OXF"))])
            let cam = try await server.enrol("CAM", role: .shop)
            // When CAM writes to site-OXF
            let answer = try await cam.modify([(.create, record("o2", type: "Order", zone: "site-OXF"))])
            // Then ACCESS_DENIED
            #expect(answer.value?.records[0].error?.serverErrorCode == .accessDenied)
        }
    }

    @Test(arguments: SyncEngine.all) func aShopCannotCreateAnotherSitesZone(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (_, oxf) = try await server.company()
            // When OXF creates CAM's zone
            let results = try await oxf.createZones(["site-CAM"])
            // Then ACCESS_DENIED
            #expect(results[0].error?.serverErrorCode == .accessDenied)
        }
    }

    @Test(arguments: SyncEngine.all) func aHeadOfficeZoneRefusesShops(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, shop) = try await server.company()
            // When the shop writes to a zone written by head office only, and head office does too
            let refused = try await shop.modify([(.create, record("price1", zone: "prices"))])
            let accepted = try await hq.modify([(.create, record("price1", zone: "prices"))])
            // Then the shop is refused and head office is not
            #expect(refused.value?.records[0].error?.serverErrorCode == .accessDenied)
            #expect(accepted.value?.records[0].error == nil)
        }
    }

    @Test(arguments: SyncEngine.all) func anotherContainerIsOutOfReach(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            // When head office of acme asks for another company's zones
            let answer = try await hq.listZones(path: .init(container: "globex", database: .shared), body: .json(.init()))
            // Then ACCESS_DENIED
            guard case .default(403, let failure) = answer else {
                Issue.record("another container was served")
                return
            }
            #expect(try failure.body.json.serverErrorCode == .accessDenied)
        }
    }

    @Test(arguments: SyncEngine.all) func privateDatabasesAreApart(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given each site's private zone `settings`, and a record in head office's
            let (hq, shop) = try await server.company()
            _ = try await hq.createZones(["settings"], database: ._private)
            _ = try await shop.createZones(["settings"], database: ._private)
            _ = try await hq.modify([(.create, record("theme", type: "Setting", zone: "settings"))], database: ._private)
            // When the shop looks the record up in its private database
            let found = try await shop.lookupRecords(
                path: .init(container: "acme", database: ._private),
                body: .json(.init(records: [.init(recordName: "theme", zoneID: ZoneID("settings"))]))
            ).ok.body.json.records
            // Then it is not there
            #expect(found[0].error?.serverErrorCode == .notFound)
        }
    }

    // MARK: Atomic batches, replays, references

    @Test(arguments: SyncEngine.all) func anAtomicBatchAcrossZonesIsAllOrNothing(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop whose batch writes its own zone and the catalogue, with one stale operation
            let (hq, shop) = try await server.company()
            _ = try await hq.modify([(.create, record("p1"))])
            // When it sends the batch
            let answer = try await shop.modify([
                (.create, record("o1", type: "Order", zone: "site-OXF")), (.update, record("p1", tag: "999", ["name": .string("x")])),
            ])
            // Then the stale operation conflicts, the other says ATOMIC_ERROR, and neither zone changed
            let results = try #require(answer.value?.records)
            #expect(results[0].error?.serverErrorCode == .atomicError)
            #expect(results[1].error?.serverErrorCode == .conflict)
            #expect(try await shop.changes("site-OXF").pages.flatMap(\.records).isEmpty)
        }
    }

    @Test(arguments: SyncEngine.all) func aNonAtomicBatchKeepsWhatSucceeded(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            _ = try await hq.modify([(.create, record("p1"))])
            // When a non-atomic batch creates p2 and p1 again
            let answer = try await hq.modify([(.create, record("p2")), (.create, record("p1"))], atomic: false)
            // Then p2 is written and p1 answers EXISTS
            let results = try #require(answer.value?.records)
            #expect(results[0].record != nil)
            #expect(results[1].error?.serverErrorCode == .exists)
        }
    }

    @Test(arguments: SyncEngine.all) func aReplayedBatchReturnsTheStoredAnswerAndChangesNothing(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a batch applied once
            let (hq, _) = try await server.company()
            let first = try await hq.modify([(.create, record("p1"))], batchID: "b-1")
            let before = try await hq.changes("catalog").pages.last?.syncToken
            // When the same batch arrives again (the answer was lost on the way)
            let replay = try await hq.modify([(.create, record("p1"))], batchID: "b-1")
            // Then it answers as the first time, marked replayed, and the zone did not move
            #expect(replay.value?.replayed == true)
            #expect(replay.value?.records == first.value?.records)
            #expect(try await hq.changes("catalog").pages.last?.syncToken == before)
        }
    }

    @Test(arguments: SyncEngine.all) func aReferenceToAMissingRecordIsRefused(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            // When a product names a category that does not exist
            let answer = try await hq.modify([(.create, record("p1", ["category": .reference(.init(recordName: "c404"))]))])
            // Then VALIDATING_REFERENCE_ERROR
            #expect(answer.value?.records[0].error?.serverErrorCode == .validatingReferenceError)
        }
    }

    @Test(arguments: SyncEngine.all) func aChildMayComeBeforeItsParentInOneAtomicBatch(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            // When a product and its category arrive in one batch, the product first
            let answer = try await hq.modify([
                (.create, record("p1", ["category": .reference(.init(recordName: "c1"))])), (.create, record("c1", type: "Category")),
            ])
            // Then both are written
            #expect(answer.value?.records.allSatisfy { $0.error == nil } == true)
        }
    }

    @Test(arguments: SyncEngine.all) func aLedgerRecordIsAppendedOnceAndNeverChanged(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a stock movement appended, then appended again (a retry)
            let (_, shop) = try await server.company()
            let movement = record("m1", type: "StockMovement", zone: "site-OXF", ["quantity": .int64(-3)])
            let first = try await shop.modify([(.append, movement)])
            let again = try await shop.modify([(.append, movement)])
            // When it is then updated
            let tag = try #require(first.value?.records[0].record?.recordChangeTag)
            var edited = movement
            edited.recordChangeTag = tag
            edited.fields["quantity"] = .int64(-30)
            let update = try await shop.modify([(.update, edited)])
            // Then the retry answered the same record, and the update is refused
            #expect(again.value?.records[0].record?.recordChangeTag == tag)
            #expect(update.value?.records[0].error?.serverErrorCode == .accessDenied)
        }
    }

    // MARK: Limits

    @Test(arguments: SyncEngine.all) func moreThan400OperationsExceedTheLimit(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            // When 401 operations are sent at once
            let answer = try await hq.modify((0...400).map { (.create, record("p\($0)")) })
            // Then LIMIT_EXCEEDED, stating the limits
            let error = try #require(answer.failure)
            #expect(error.serverErrorCode == .limitExceeded)
            #expect(error.reason.contains("400 operations"))
        }
    }

    @Test(arguments: SyncEngine.all) func aRecordOverOneMegabyteExceedsTheLimit(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            // When one record carries 1.1 MB of text
            let answer = try await hq.modify([(.create, record("big", ["notes": .string(String(repeating: "x", count: 1_100_000))]))])
            // Then LIMIT_EXCEEDED
            #expect(answer.value?.records[0].error?.serverErrorCode == .limitExceeded)
        }
    }

    @Test(arguments: SyncEngine.all) func aBodyOverTwoMegabytesExceedsTheLimit(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            _ = hq
            let credential = try await server.service.createEnrollment(container: "acme", role: .shop)
            let enrolled = try await server.anonymous.enroll(body: .json(.init(token: credential, siteCode: "BIG"))).ok.body.json
            // When 2.5 MB arrive in one request
            let body = Data(
                ("{\"clientID\":\"c\",\"batchID\":\"b\",\"operations\":[],\"pad\":\"" + String(repeating: "x", count: 2_500_000) + "\"}").utf8
            )
            let (status, _, error) = try await server.raw("/sync/v1/acme/shared/records/modify", body: body, credential: enrolled.credential)
            // Then LIMIT_EXCEEDED, before anything is read
            #expect(status == 400)
            #expect(error?.serverErrorCode == .limitExceeded)
        }
    }

    // MARK: Bad input

    @Test(arguments: SyncEngine.all) func malformedJSONIsABadRequest(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let token = try await server.service.createEnrollment(container: "acme", role: .hq)
            let enrolled = try await server.anonymous.enroll(body: .json(.init(token: token, siteCode: "HQ"))).ok.body.json
            // When the body is cut short
            let (status, _, error) = try await server.raw(
                "/sync/v1/acme/shared/records/modify",
                body: Data("{\"clientID\":".utf8),
                credential: enrolled.credential
            )
            // Then 400 BAD_REQUEST
            #expect(status == 400)
            #expect(error?.serverErrorCode == .badRequest)
        }
    }

    @Test(arguments: SyncEngine.all) func anUnknownFieldTypeIsABadRequestThatNamesIt(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let token = try await server.service.createEnrollment(container: "acme", role: .hq)
            let enrolled = try await server.anonymous.enroll(body: .json(.init(token: token, siteCode: "HQ"))).ok.body.json
            // When a field's type is not one of the protocol's
            let body = Data(
                #"{"clientID":"c","batchID":"b","operations":[{"opID":"1","operationType":"create","record":{"recordName":"p","recordType":"P","zoneID":{"zoneName":"catalog"},"fields":{"x":{"type":"COLOUR","value":"red"}}}}]}"#
                    .utf8
            )
            let (status, _, error) = try await server.raw("/sync/v1/acme/shared/records/modify", body: body, credential: enrolled.credential)
            // Then 400, naming the type
            #expect(status == 400)
            #expect(error?.reason.contains("COLOUR") == true)
        }
    }

    @Test(arguments: SyncEngine.all) func anUndeclaredMethodAnswers405WithAllow(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // When enrolment is asked for with GET
            var request = HTTPClientRequest(url: server.baseURL.absoluteString + "/sync/v1/enroll")
            request.method = .GET
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
            // Then 405 names the method it takes
            #expect(response.status.code == 405)
            #expect(response.headers["Allow"].first == "POST")
        }
    }

    @Test func aChunkedBodyPastTheLimitIsRefusedAsTooLargeNotAsAServerFault() async throws {
        try await SyncHarness.with(.sqlite) { server in
            // When 3 MB are sent to the enrolment endpoint in chunks, with no Content-Length
            var request = HTTPClientRequest(url: server.baseURL.absoluteString + "/sync/v1/enroll")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            let chunks = AsyncStream<ByteBuffer> { continuation in
                for _ in 0..<48 { continuation.yield(ByteBuffer(repeating: UInt8(ascii: "x"), count: 65_536)) }
                continuation.finish()
            }
            request.body = .stream(chunks, length: .unknown)
            // (Generous: under the whole suite's load the answer once took past 30 s, on 2026-11-28; alone, 0.1 s.)
            let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
            // Then it is LIMIT_EXCEEDED, a client's fault, not a 500
            #expect(response.status.code < 500, "\(response.status)")
            let body = String(buffer: try await response.body.collect(upTo: 1 << 20))
            #expect(body.contains("LIMIT_EXCEEDED"), "\(body)")
        }
    }

    @Test(arguments: SyncEngine.all) func anotherProtocolVersionIsIncompatible(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let token = try await server.service.createEnrollment(container: "acme", role: .hq)
            let enrolled = try await server.anonymous.enroll(body: .json(.init(token: token, siteCode: "HQ"))).ok.body.json
            // When a client speaking version 0 calls
            let old = server.client(credential: enrolled.credential, protocolVersion: "0")
            let answer = try await old.listZones(path: .init(container: "acme", database: .shared), body: .json(.init()))
            // Then 426 INCOMPATIBLE_VERSION
            guard case .default(426, let failure) = answer else {
                Issue.record("an old client was served")
                return
            }
            #expect(try failure.body.json.serverErrorCode == .incompatibleVersion)
        }
    }

    @Test(arguments: SyncEngine.all) func tooManyRequestsAreThrottledWithRetryAfter(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine, requestsPerSecond: 1.0 / 60, burst: 2) { server in
            let token = try await server.service.createEnrollment(container: "acme", role: .hq)
            let enrolled = try await server.anonymous.enroll(body: .json(.init(token: token, siteCode: "HQ"))).ok.body.json
            // When a site sends more requests than its burst, at the slowest rate the server takes (one a minute)
            var statuses: [Int] = []
            var retryAfter: String? = nil
            for _ in 0..<5 {
                let (status, headers, _) = try await server.raw(
                    "/sync/v1/acme/shared/zones/list",
                    body: Data("{}".utf8),
                    credential: enrolled.credential
                )
                statuses.append(status)
                if status == 429 { retryAfter = headers["retry-after"] }
            }
            // Then the excess answers 429 with Retry-After
            #expect(statuses.contains(429))
            #expect(retryAfter != nil)
        }
    }
}
