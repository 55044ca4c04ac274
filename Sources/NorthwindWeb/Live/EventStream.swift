import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// `GET /events`: server-sent events, one `change` event per committed change batch, so open pages refresh the
/// parts that show changed tables. A comment every 15 s keeps proxies from closing an idle stream.
struct EventStream: Sendable {
    let feed: ChangeFeed
    static let keepAlive: Duration = .seconds(15)

    // guide: begin event-stream
    @Sendable func stream(_ request: Request, context: WebContext) async throws -> Response {
        let changes = feed.subscribe()
        let body = ResponseBody { writer in
            try await writer.write(ByteBuffer(string: "retry: 2000\n: connected\n\n"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                let (ticks, tick) = AsyncStream.makeStream(of: String.self)
                group.addTask {
                    for await batch in changes {
                        guard let data = try? JSONEncoder().encode(batch) else { continue }
                        tick.yield("id: \(batch.seq)\nevent: change\ndata: \(String(decoding: data, as: UTF8.self))\n\n")
                    }
                    tick.finish()
                }
                group.addTask {
                    while !Task.isCancelled {
                        try await Task.sleep(for: Self.keepAlive)
                        tick.yield(": keep-alive\n\n")
                    }
                }
                // One writer: the two producers feed it in turn.
                for await text in ticks {
                    try await writer.write(ByteBuffer(string: text))
                }
                group.cancelAll()
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: Self.headers, body: body)
    }
    // guide: end event-stream

    static let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-store"]
}
