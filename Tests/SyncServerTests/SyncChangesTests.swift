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

/// Fetching changes: pages, tokens, compaction, expiry and checksums.
@Suite("Sync changes")
struct SyncChangesTests {
    @Test(arguments: SyncEngine.all) func pagesResumeFromTheirTokensWithoutLossOrRepeat(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given 1,000 products written in batches of 100
            let (hq, shop) = try await server.company()
            for batch in 0..<10 {
                _ = try await hq.modify((0..<100).map { (.create, record("p\(batch * 100 + $0)")) })
            }
            // When the shop fetches with pages of 150
            let fetched = try await shop.changes("catalog", limit: 150)
            // Then it gets every record exactly once, over several pages, the last saying nothing more is coming
            let names = fetched.pages.flatMap(\.records).map(\.recordName)
            #expect(names.count == 1000)
            #expect(Set(names).count == 1000)
            #expect(fetched.pages.count > 1)
            #expect(fetched.pages.dropLast().allSatisfy { $0.moreComing })
        }
    }

    @Test(arguments: SyncEngine.all) func aPageNeverSplitsOneBatch(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given one batch of 30 records
            let (hq, shop) = try await server.company()
            _ = try await hq.modify((0..<30).map { (.create, record("p\($0)")) })
            // When the shop asks for pages of 10
            let fetched = try await shop.changes("catalog", limit: 10)
            // Then the batch arrives whole, in one page
            #expect(fetched.pages.first?.records.count == 30)
        }
    }

    @Test(arguments: SyncEngine.all) func aTokenBringsOnlyLaterChangesWithDeletions(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop that has fetched p1 and p2
            let (hq, shop) = try await server.company()
            let created = try await hq.modify([(.create, record("p1")), (.create, record("p2"))])
            let token = try #require(try await shop.changes("catalog").pages.last?.syncToken)
            // When head office deletes p1 and adds p3
            let p1 = try #require(created.value?.records[0].record)
            _ = try await hq.modify([(.delete, record("p1", tag: p1.recordChangeTag)), (.create, record("p3"))])
            // Then the shop's next fetch brings p1's deletion and p3, and nothing else
            let records = try await shop.changes("catalog", after: token).pages.flatMap(\.records)
            #expect(records.map(\.recordName).sorted() == ["p1", "p3"])
            #expect(records.first { $0.recordName == "p1" }?.deleted == true)
        }
    }

    @Test(arguments: SyncEngine.all) func aFetchFromScratchHasNoTombstones(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given p1 created and deleted, and p2 live
            let (hq, shop) = try await server.company()
            let created = try await hq.modify([(.create, record("p1")), (.create, record("p2"))])
            _ = try await hq.modify([(.delete, record("p1", tag: created.value?.records[0].record?.recordChangeTag))])
            // When a new installation fetches the zone without a token
            let records = try await shop.changes("catalog").pages.flatMap(\.records)
            // Then it gets the live record only
            #expect(records.map(\.recordName) == ["p2"])
        }
    }

    @Test(arguments: SyncEngine.all) func aTokenOlderThanPurgedDeletionsExpires(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop's token, then a deletion that the server purges
            let (hq, shop) = try await server.company()
            let created = try await hq.modify([(.create, record("p1"))])
            let token = try #require(try await shop.changes("catalog").pages.last?.syncToken)
            _ = try await hq.modify([(.delete, record("p1", tag: created.value?.records[0].record?.recordChangeTag))])
            try await Task.sleep(for: .milliseconds(20))
            _ = try await server.service.purgeTombstones(retention: 0)
            // When the shop fetches with its old token
            let fetched = try await shop.changes("catalog", after: token)
            // Then CHANGE_TOKEN_EXPIRED tells it to fetch the zone again
            #expect(fetched.error?.serverErrorCode == .changeTokenExpired)
        }
    }

    @Test(arguments: SyncEngine.all) func theZoneChecksumMatchesWhatTheClientHolds(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given records created, updated and deleted
            let (hq, shop) = try await server.company()
            let created = try await hq.modify((0..<20).map { (.create, record("p\($0)")) })
            let tags = (created.value?.records ?? []).compactMap(\.record?.recordChangeTag)
            _ = try await hq.modify([(.update, record("p3", tag: tags[3], ["name": .string("x")])), (.delete, record("p4", tag: tags[4]))])
            // When the shop fetches the zone and computes the checksum of what it holds
            let pages = try await shop.changes("catalog").pages
            let held = pages.flatMap(\.records).filter { !$0.deleted }
            let computed = held.reduce(UInt64(0)) { $0 ^ checksum($1.recordName, $1.recordChangeTag ?? "") }
            // Then it equals the server's
            #expect(held.count == 19)
            #expect(pages.last?.checksum == String(format: "%016llx", computed))
        }
    }

    @Test(arguments: SyncEngine.all) func databaseChangesNameTheZonesThatMoved(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given a shop's database token
            let (hq, shop) = try await server.company()
            let path = Operations.DatabaseChanges.Input.Path(container: "acme", database: .shared)
            let token = try await shop.databaseChanges(path: path, body: .json(.init())).ok.body.json.syncToken
            // When head office writes to the catalogue only
            _ = try await hq.modify([(.create, record("p1"))])
            // Then changes/database names the catalogue and nothing else
            let changed = try await shop.databaseChanges(path: path, body: .json(.init(syncToken: token))).ok.body.json.zones
            #expect(changed.map(\.zoneID.zoneName) == ["catalog"])
        }
    }

    @Test(arguments: SyncEngine.all) func aQueryFiltersSortsAndContinues(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given products priced 1 to 10
            let (hq, shop) = try await server.company()
            _ = try await hq.modify((1...10).map { (.create, record("p\($0)", ["price": .decimal("\($0).00")])) })
            // When the shop asks for prices above 4, dearest first, three at a time
            var names: [String] = []
            var marker: String? = nil
            repeat {
                let page = try await shop.queryRecords(
                    path: .init(container: "acme", database: .shared),
                    body: .json(
                        .init(
                            zoneID: ZoneID("catalog"),
                            query: .init(
                                recordType: "Product",
                                filterBy: [.init(fieldName: "price", comparator: .greaterThan, fieldValue: .decimal("4.00"))],
                                sortBy: [.init(fieldName: "price", ascending: false)]
                            ),
                            resultsLimit: 3,
                            continuationMarker: marker
                        )
                    )
                ).ok.body.json
                names += page.records.map(\.recordName)
                marker = page.continuationMarker
            } while marker != nil
            // Then it gets p10 down to p5, across pages
            #expect(names == ["p10", "p9", "p8", "p7", "p6", "p5"])
        }
    }
}

/// The checksum a client computes: the first 8 bytes of SHA-256("recordName\0changeTag"), as docs/sync.md says.
func checksum(_ name: String, _ tag: String) -> UInt64 {
    var bytes = Array(name.utf8)
    bytes.append(0)
    bytes.append(contentsOf: tag.utf8)
    return SHA256.hash(data: bytes).prefix(8).reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
}

/// Assets: content-addressed by SHA-256, verified on upload, stored once.
@Suite("Sync assets")
struct SyncAssetTests {
    static let picture = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    static let hash = SHA256.hash(data: picture).map { String(format: "%02x", $0) }.joined()

    @Test(arguments: SyncEngine.all) func anUploadedAssetDownloadsAsSentAndCanBeReferenced(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given head office, which asks where to upload a picture and uploads it there
            let (hq, shop) = try await server.company()
            let answer = try await hq.requestAssetUploads(
                path: .init(container: "acme"),
                body: .json(.init(assets: [.init(sha256: Self.hash, size: Int64(Self.picture.count))]))
            ).ok.body.json.assets[0]
            #expect(answer.present == false)
            #expect(answer.uploadURL == "/sync/v1/acme/assets/\(Self.hash)")
            _ = try await hq.uploadAsset(path: .init(container: "acme", sha256: Self.hash), body: .binary(HTTPBody(Self.picture))).ok
            // When a category names it and the shop downloads it
            let written = try await hq.modify([
                (.create, record("c1", type: "Category", ["picture": .asset(.init(sha256: Self.hash, size: Int64(Self.picture.count)))]))
            ])
            let body = try await shop.downloadAsset(path: .init(container: "acme", sha256: Self.hash)).ok.body.binary
            // Then the record is accepted and the bytes are the same
            #expect(written.value?.records[0].error == nil)
            #expect(try await Data(collecting: body, upTo: 1_000_000) == Self.picture)
        }
    }

    @Test(arguments: SyncEngine.all) func bytesThatDoNotMatchTheirHashAreRefused(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            // When other bytes are sent to the picture's address
            let answer = try await hq.uploadAsset(path: .init(container: "acme", sha256: Self.hash), body: .binary(HTTPBody(Data("not it".utf8))))
            // Then they are refused and the asset is still missing
            guard case .default(400, let failure) = answer else {
                Issue.record("mismatched bytes were stored")
                return
            }
            #expect(try failure.body.json.reason.contains("hash"))
            let after = try await hq.requestAssetUploads(
                path: .init(container: "acme"),
                body: .json(.init(assets: [.init(sha256: Self.hash, size: 6)]))
            ).ok.body.json.assets[0]
            #expect(after.present == false)
        }
    }

    @Test(arguments: SyncEngine.all) func anAssetAlreadyHeldNeedsNoUpload(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given the picture uploaded by head office
            let (hq, shop) = try await server.company()
            _ = try await hq.uploadAsset(path: .init(container: "acme", sha256: Self.hash), body: .binary(HTTPBody(Self.picture))).ok
            // When the shop asks to upload the same picture
            let answer = try await shop.requestAssetUploads(
                path: .init(container: "acme"),
                body: .json(.init(assets: [.init(sha256: Self.hash, size: Int64(Self.picture.count))]))
            ).ok.body.json.assets[0]
            // Then it is told the server has it
            #expect(answer.present == true)
            #expect(answer.uploadURL == nil)
        }
    }

    @Test(arguments: SyncEngine.all) func anAssetOver50MegabytesExceedsTheLimit(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            // When 51 MB are uploaded
            let big = Data(count: 51 * 1024 * 1024)
            let hash = SHA256.hash(data: big).map { String(format: "%02x", $0) }.joined()
            let answer = try await hq.uploadAsset(path: .init(container: "acme", sha256: hash), body: .binary(HTTPBody(big)))
            // Then LIMIT_EXCEEDED
            guard case .default(400, let failure) = answer else {
                Issue.record("51 MB were stored")
                return
            }
            #expect(try failure.body.json.serverErrorCode == .limitExceeded)
        }
    }

    @Test(arguments: SyncEngine.all) func anAssetPastTheContainersQuotaIsRefused(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine, arguments: ["--asset-quota-mb", "1"]) { server in
            // Given a server allowing 1 MB of assets per container, and 600 KB stored
            let (hq, _) = try await server.company()
            let first = Data(repeating: 1, count: 600 * 1024)
            let second = Data(repeating: 2, count: 600 * 1024)
            let hash = { (data: Data) in SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }
            _ = try await hq.uploadAsset(path: .init(container: "acme", sha256: hash(first)), body: .binary(HTTPBody(first))).ok
            // When 600 KB more are uploaded
            let answer = try await hq.uploadAsset(path: .init(container: "acme", sha256: hash(second)), body: .binary(HTTPBody(second)))
            // Then QUOTA_EXCEEDED (413), while the same bytes again still cost nothing
            guard case .default(413, let failure) = answer else {
                Issue.record("an asset past the quota was stored: \(answer)")
                return
            }
            #expect(try failure.body.json.serverErrorCode == .quotaExceeded)
            _ = try await hq.uploadAsset(path: .init(container: "acme", sha256: hash(first)), body: .binary(HTTPBody(first))).ok
        }
    }

    @Test(arguments: SyncEngine.all) func aRecordNamingAnAssetNeverUploadedIsRefused(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            let (hq, _) = try await server.company()
            // When a category names a picture that was never uploaded
            let answer = try await hq.modify([(.create, record("c1", type: "Category", ["picture": .asset(.init(sha256: Self.hash, size: 1))]))])
            // Then VALIDATING_REFERENCE_ERROR
            #expect(answer.value?.records[0].error?.serverErrorCode == .validatingReferenceError)
        }
    }
}
