import Foundation
import Hummingbird
import OpenAPIRuntime
import ServerOperations
import SyncAPI
import SyncProtocol

/// The caller of the request being handled, bound by `SyncGate` for the generated handlers, which see only the
/// OpenAPI input.
enum SyncRequest {
    @TaskLocal static var caller: Installation?
    @TaskLocal static var bodySize: Int = 0
    /// The `Sync-User` header: the user whose private database a `private` request reads or writes.
    @TaskLocal static var user: String?

    static func requireCaller() throws(SyncError) -> Installation {
        guard let caller else { throw SyncError(.authenticationFailed, "send Authorization: Bearer CREDENTIAL") }
        return caller
    }
}

/// Every protocol operation: the routes and bodies are generated from openapi.yaml (`APIProtocol`); each method
/// only calls `SyncService`.
struct SyncHandler: APIProtocol {
    let service: SyncService
    /// How often an event stream pings (and polls).
    var ping: Duration = .seconds(15)

    func enroll(_ input: Operations.Enroll.Input) async throws -> Operations.Enroll.Output {
        guard case .json(let body) = input.body else { throw SyncError(.badRequest, "send a JSON body") }
        return .ok(.init(body: .json(try await service.enroll(token: body.token, siteCode: body.siteCode))))
    }

    func checkEnrollment(_ input: Operations.CheckEnrollment.Input) async throws -> Operations.CheckEnrollment.Output {
        guard case .json(let body) = input.body else { throw SyncError(.badRequest, "send a JSON body") }
        return .ok(.init(body: .json(try await service.checkEnrollment(token: body.token))))
    }

    func rotateCredential(_ input: Operations.RotateCredential.Input) async throws -> Operations.RotateCredential.Output {
        let caller = try SyncRequest.requireCaller()
        return .ok(.init(body: .json(try await service.rotateCredential(caller, container: input.path.container))))
    }

    private func scope(_ container: String, _ database: Components.Parameters.Database) throws -> (Installation, DatabaseScope) {
        let caller = try SyncRequest.requireCaller()
        return (caller, try service.scope(caller, container: container, database: database.rawValue, user: SyncRequest.user))
    }

    func listZones(_ input: Operations.ListZones.Input) async throws -> Operations.ListZones.Output {
        let (caller, scope) = try scope(input.path.container, input.path.database)
        let caughtUp: String? =
            switch input.body {
            case .json(let request): request.caughtUpEpoch
            case .none: nil
            }
        return .ok(
            .init(body: .json(try await service.listZones(caller, container: input.path.container, scope: scope, caughtUpEpoch: caughtUp)))
        )
    }

    func modifyZones(_ input: Operations.ModifyZones.Input) async throws -> Operations.ModifyZones.Output {
        let (caller, scope) = try scope(input.path.container, input.path.database)
        guard case .json(let body) = input.body else { throw SyncError(.badRequest, "send a JSON body") }
        let results = try await service.modifyZones(caller, container: input.path.container, scope: scope, operations: body.operations)
        return .ok(.init(body: .json(.init(zones: results))))
    }

    func modifyRecords(_ input: Operations.ModifyRecords.Input) async throws -> Operations.ModifyRecords.Output {
        let (caller, scope) = try scope(input.path.container, input.path.database)
        guard case .json(let body) = input.body else { throw SyncError(.badRequest, "send a JSON body") }
        let response = try await service.modifyRecords(
            caller,
            container: input.path.container,
            scope: scope,
            request: body,
            bodySize: SyncRequest.bodySize
        )
        // The answer its batch stored for replays, sent as written (`RawAnswer`).
        return .ok(.init(body: .json(try RawAnswer.send(Array(response.utf8), standIn: .init(records: [], replayed: false)))))
    }

    func lookupRecords(_ input: Operations.LookupRecords.Input) async throws -> Operations.LookupRecords.Output {
        let (caller, scope) = try scope(input.path.container, input.path.database)
        guard case .json(let body) = input.body else { throw SyncError(.badRequest, "send a JSON body") }
        let records = try await service.lookup(caller, container: input.path.container, scope: scope, keys: body.records)
        return .ok(.init(body: .json(.init(records: records))))
    }

    func queryRecords(_ input: Operations.QueryRecords.Input) async throws -> Operations.QueryRecords.Output {
        let (caller, scope) = try scope(input.path.container, input.path.database)
        guard case .json(let body) = input.body else { throw SyncError(.badRequest, "send a JSON body") }
        return .ok(.init(body: .json(try await service.query(caller, container: input.path.container, scope: scope, request: body))))
    }

    func databaseChanges(_ input: Operations.DatabaseChanges.Input) async throws -> Operations.DatabaseChanges.Output {
        let (caller, scope) = try scope(input.path.container, input.path.database)
        var token: String? = nil
        if case .json(let body) = input.body { token = body.syncToken }
        return .ok(.init(body: .json(try await service.databaseChanges(caller, container: input.path.container, scope: scope, token: token))))
    }

    func zoneChanges(_ input: Operations.ZoneChanges.Input) async throws -> Operations.ZoneChanges.Output {
        let (caller, scope) = try scope(input.path.container, input.path.database)
        guard case .json(let body) = input.body else { throw SyncError(.badRequest, "send a JSON body") }
        let pages = try await service.zoneChanges(caller, container: input.path.container, scope: scope, queries: body.zones)
        // The records' JSON as stored, spliced into the typed envelope (`RawAnswer`).
        return .ok(.init(body: .json(try RawAnswer.send(ZoneChangesJSON.encode(pages), standIn: .init(zones: [])))))
    }

    func modifySubscriptions(_ input: Operations.ModifySubscriptions.Input) async throws -> Operations.ModifySubscriptions.Output {
        let (caller, scope) = try scope(input.path.container, input.path.database)
        guard case .json(let body) = input.body else { throw SyncError(.badRequest, "send a JSON body") }
        let results = try await service.modifySubscriptions(caller, container: input.path.container, scope: scope, operations: body.operations)
        return .ok(.init(body: .json(.init(subscriptions: results))))
    }

    func listSubscriptions(_ input: Operations.ListSubscriptions.Input) async throws -> Operations.ListSubscriptions.Output {
        let (caller, scope) = try scope(input.path.container, input.path.database)
        let subscriptions = try await service.listSubscriptions(caller, container: input.path.container, scope: scope)
        return .ok(.init(body: .json(.init(subscriptions: subscriptions))))
    }

    func events(_ input: Operations.Events.Input) async throws -> Operations.Events.Output {
        let (caller, scope) = try scope(input.path.container, input.path.database)
        let events = try await service.events(
            caller,
            container: input.path.container,
            scope: scope,
            lastEventID: input.headers.lastEventID,
            ping: ping
        )
        return .ok(.init(body: .textEventStream(HTTPBody(events.asEncodedServerSentEvents(), length: .unknown, iterationBehavior: .single))))
    }

    func getSchema(_ input: Operations.GetSchema.Input) async throws -> Operations.GetSchema.Output {
        .ok(.init(body: .json(try await service.schema(try SyncRequest.requireCaller(), container: input.path.container))))
    }

    func putSchema(_ input: Operations.PutSchema.Input) async throws -> Operations.PutSchema.Output {
        guard case .json(let body) = input.body else { throw SyncError(.badRequest, "send a JSON body") }
        let stored = try await service.putSchema(try SyncRequest.requireCaller(), container: input.path.container, schema: body)
        return .ok(.init(body: .json(stored)))
    }

    func requestAssetUploads(_ input: Operations.RequestAssetUploads.Input) async throws -> Operations.RequestAssetUploads.Output {
        guard case .json(let body) = input.body else { throw SyncError(.badRequest, "send a JSON body") }
        let answers = try await service.requestUploads(try SyncRequest.requireCaller(), container: input.path.container, assets: body.assets)
        return .ok(.init(body: .json(.init(assets: answers))))
    }

    func uploadAsset(_ input: Operations.UploadAsset.Input) async throws -> Operations.UploadAsset.Output {
        guard case .binary(let body) = input.body else { throw SyncError(.badRequest, "send the bytes as application/octet-stream") }
        let data = try await Data(collecting: body, upTo: SyncLimits.bytesPerAsset)
        let asset = try await service.upload(try SyncRequest.requireCaller(), container: input.path.container, sha256: input.path.sha256, data: data)
        return .ok(.init(body: .json(asset)))
    }

    func downloadAsset(_ input: Operations.DownloadAsset.Input) async throws -> Operations.DownloadAsset.Output {
        let data = try await service.download(try SyncRequest.requireCaller(), container: input.path.container, sha256: input.path.sha256)
        return .ok(.init(body: .binary(HTTPBody(data))))
    }
}
