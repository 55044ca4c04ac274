import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SyncProtocol

/// Answers `changes/zone` with the records' JSON as stored, spliced into a typed envelope, instead of decoding every
/// record and encoding it again: a client catching up is sent hundreds of thousands of them. Any request it does not
/// take (another path, another content type, a database name the contract does not know) goes on to the generated
/// handler, which gives the same answer typed. The tests read these answers through the generated client.
struct ChangesResponder<Context: RequestContext>: RouterMiddleware {
    let service: SyncService

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .post, let (container, database) = Self.route(request.uri.path),
            request.headers[.contentType]?.hasPrefix("application/json") == true
        else { return try await next(request, context) }
        var request = request
        let body = try await request.collectBody(upTo: SyncLimits.bytesPerRequest)
        let query = try JSONDecoder().decode(Components.Schemas.ZoneChangesRequest.self, from: Data(body.readableBytesView))
        let caller = try SyncRequest.requireCaller()
        let scope = try service.scope(caller, container: container, database: database)
        let pages = try await service.zoneChanges(caller, container: container, scope: scope, queries: query.zones)
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: try Self.encode(pages)))
    }

    /// `/sync/v1/{container}/{shared|private}/changes/zone`, or nil.
    static func route(_ path: String) -> (String, String)? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 7, parts[1] == "sync", parts[2] == "v1", parts[5] == "changes", parts[6] == "zone",
            parts[4] == "shared" || parts[4] == "private", let container = String(parts[3]).removingPercentEncoding
        else { return nil }
        return (container, String(parts[4]))
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
