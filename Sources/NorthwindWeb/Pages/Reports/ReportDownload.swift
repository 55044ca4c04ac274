import Foundation
import Hummingbird
import Northwind
import NorthwindStore
import OpenAPIRuntime
import Synchronization

/// A report as a CSV download of every row, sent while it is read: the first bytes leave within milliseconds, and a
/// 60 MB listing never sits in memory whole. The rows are read on a thread of their own, since the store's reads are
/// synchronous, and at most `window` chunks run ahead of the client, so a slow client slows the reading instead of
/// filling memory. A parameter mistake is thrown before the response starts, so it still gets its 422.
enum ReportDownload {
    static let chunkBytes = 64 * 1024
    static let window = 4

    /// The rows as CSV chunks, read on a thread of their own; returns once the first chunk is ready (or the report
    /// failed). Each chunk taken must be given back with `flow.release()` once sent.
    static func start(
        _ backoffice: Backoffice,
        report: ReportDefinition,
        parameters: [String: String]
    ) async throws -> (chunks: AsyncThrowingStream<ByteBuffer, any Error>, flow: FlowControl) {
        let (chunks, continuation) = AsyncThrowingStream.makeStream(of: ByteBuffer.self)
        let flow = FlowControl(window: window)
        continuation.onTermination = { _ in flow.stop() }
        try await withCheckedThrowingContinuation { (started: CheckedContinuation<Void, any Error>) in
            Thread.detachNewThread {
                var bytes: [UInt8] = []
                var hasStarted = false
                do throws(NorthwindError) {
                    try backoffice.reports.stream(report.name, parameters: parameters) { columns in
                        ReportTable.appendCSV(columns.map(ReportValue.text), to: &bytes)
                        hasStarted = true
                        started.resume()
                    } row: { values in
                        ReportTable.appendCSV(values, to: &bytes)
                        if bytes.count >= chunkBytes {
                            guard flow.acquire() else { throw CancellationError() }
                            continuation.yield(ByteBuffer(bytes: bytes))
                            bytes.removeAll(keepingCapacity: true)
                        }
                    }
                    if flow.acquire() { continuation.yield(ByteBuffer(bytes: bytes)) }
                    continuation.finish()
                } catch {
                    if hasStarted {
                        // Mid-way, the status has gone: the client sees the connection close early, never a short file
                        // that looks whole.
                        continuation.finish(throwing: error)
                    } else {
                        started.resume(throwing: error)
                    }
                }
            }
        }
        return (chunks, flow)
    }

    /// The download page's answer.
    static func csv(_ backoffice: Backoffice, report: ReportDefinition, parameters: [String: String]) async throws -> Response {
        let (chunks, flow) = try await start(backoffice, report: report, parameters: parameters)
        var headers = HTTPFields()
        headers[.contentType] = "text/csv; charset=utf-8"
        headers[.contentDisposition] = "attachment; filename=\"\(report.name).csv\""
        headers[.cacheControl] = "no-store"
        return Response(
            status: .ok,
            headers: headers,
            body: ResponseBody { writer in
                defer { flow.stop() }
                for try await chunk in chunks {
                    try await writer.write(chunk)
                    flow.release()
                }
                try await writer.finish(nil)
            }
        )
    }

    /// The API's body. A chunk's credit comes back when the transport asks for the next one, so the sent one has
    /// gone to the client.
    static func body(_ backoffice: Backoffice, report: ReportDefinition, parameters: [String: String]) async throws -> HTTPBody {
        let (chunks, flow) = try await start(backoffice, report: report, parameters: parameters)
        return HTTPBody(
            chunks.map { @Sendable chunk in
                flow.handOut()
                return ArraySlice(chunk.readableBytesView)
            },
            length: .unknown,
            iterationBehavior: .single
        )
    }
}

/// Credits for the reading thread: it takes one per chunk and waits when none is left; the writer gives one back per
/// chunk sent. `stop` (the client went away, or the response ended) wakes the reader for good, so it never waits on
/// a client that is gone and its read transaction ends.
final class FlowControl: Sendable {
    private let credits: DispatchSemaphore
    private let stopped = Atomic<Bool>(false)
    private let handedOut = Atomic<Int>(0)
    private let window: Int

    init(window: Int) {
        self.window = window
        credits = DispatchSemaphore(value: window)
    }

    /// Waits for a credit; false once stopped.
    func acquire() -> Bool {
        if stopped.load(ordering: .acquiring) { return false }
        credits.wait()
        return !stopped.load(ordering: .acquiring)
    }

    func release() { credits.signal() }

    /// A chunk goes out: the one before it has been sent, so its credit comes back.
    func handOut() {
        if handedOut.add(1, ordering: .relaxed).oldValue > 0 { release() }
    }

    func stop() {
        if stopped.exchange(true, ordering: .acquiringAndReleasing) { return }
        for _ in 0..<window + 1 { credits.signal() }
    }
}
