import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SyncProtocol

/// Answers the two operations that carry hundreds of records with JSON written once, instead of the generated
/// handlers' typed answers, which encode every record again (measured with `northwind-sync-bench`):
/// - `records/modify` sends the answer its batch stored for replays;
/// - `changes/zone` sends the records' JSON as stored, spliced into a typed envelope.
/// Any request it does not take (another path, another content type, a database name the contract does not know)
/// goes on to the generated handler, which gives the same answer typed. The tests read these answers through the
/// client generated from the contract.
struct RawResponder<Context: RequestContext>: RouterMiddleware {
    let service: SyncService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .post, let (container, database, operation) = Self.route(request.uri.path),
            request.headers[.contentType]?.hasPrefix("application/json") == true
        else { return try await next(request, context) }
        var request = request
        let body = Data(try await request.collectBody(upTo: SyncLimits.bytesPerRequest).readableBytesView)
        let caller = try SyncRequest.requireCaller()
        let scope = try service.scope(caller, container: container, database: database, user: SyncRequest.user)
        let answer: ByteBuffer
        if operation == "modify" {
            let batch = try Components.Schemas.ModifyRequest.decode(body)
            let json = try await service.modifyRecords(caller, container: container, scope: scope, request: batch, bodySize: SyncRequest.bodySize)
            answer = ByteBuffer(string: json)
        } else {
            let query = try JSONDecoder().decode(Components.Schemas.ZoneChangesRequest.self, from: body)
            answer = try Self.encode(try await service.zoneChanges(caller, container: container, scope: scope, queries: query.zones))
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: answer))
    }

    /// `/sync/v1/{container}/{shared|private}/records/modify` or `…/changes/zone`: the container, the database and
    /// `modify` or `changes`; nil for any other path.
    static func route(_ path: String) -> (String, String, String)? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 7, parts[1] == "sync", parts[2] == "v1", parts[4] == "shared" || parts[4] == "private",
            let container = String(parts[3]).removingPercentEncoding
        else { return nil }
        switch (parts[5], parts[6]) {
        case ("records", "modify"): return (container, String(parts[4]), "modify")
        case ("changes", "zone"): return (container, String(parts[4]), "changes")
        default: return nil
        }
    }

    /// `{"zones":[…]}`, each zone's envelope encoded as the generated server would, its empty `"records":[]` then
    /// filled with the stored records. (The marker cannot occur inside a string: a quote there is escaped.)
    static func encode(_ pages: [ZoneChangesPage]) throws -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let marker = Data(#""records":[]"#.utf8)
        var out = ByteBuffer()
        out.writeString(#"{"zones":["#)
        for (index, page) in pages.enumerated() {
            if index > 0 { out.writeString(",") }
            let envelope = try encoder.encode(page.envelope)
            guard let at = envelope.range(of: marker) else { throw SyncError(.internalError, "no records in a changes envelope") }
            out.writeBytes(envelope[..<at.lowerBound])
            out.writeString(#""records":["#)
            for (position, record) in page.records.enumerated() {
                if position > 0 { out.writeString(",") }
                out.writeString(record.body)
            }
            out.writeString("]")
            out.writeBytes(envelope[at.upperBound...])
        }
        out.writeString("]}")
        return out
    }
}
