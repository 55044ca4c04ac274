import ArgumentParser
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SyncProtocol
import SyncServer

/// The sync server's benchmark: the real server process over HTTP on loopback, beside a bare baseline doing the same
/// writes in the same run (the SQLite C API, or plain PostgresNIO INSERTs), with the ratio printed.
@main
struct SyncBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "northwind-sync-bench",
        abstract: "Measure sync: the server against bare baselines (the default), or shops end to end.",
        subcommands: [ServerBench.self, ShopBench.self, CompanyBench.self],
        defaultSubcommand: ServerBench.self
    )
}

/// The server alone, against the bare SQLite C API or plain PostgresNIO doing the same writes.
struct ServerBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "server",
        abstract: "Measure the sync server on SQLite or PostgreSQL against a bare baseline doing the same writes."
    )

    @Option(help: "A folder for SQLite files (default: a temporary one), or a postgres:// URL of a server to create databases on.")
    var database: String?
    @Option(help: "Records to write, then to catch up on.") var records = 100_000
    @Option(help: "Commits to time from commit to event notice.") var notices = 200
    @Option(help: "Event streams to hold open while measuring the server's memory.") var streams = 100
    @Option(help: "The northwind-sync-server binary (default: beside this one).") var server: String?
    @Option(help: "Clients writing at once, for the concurrent measure.") var writers = 2

    /// Sends the batches from `writers` clients at once; answers the records stored a second.
    static func send(_ batches: [Data], records count: Int, as caller: Caller, writers: Int) async throws -> Double {
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for body in stride(from: writer, to: batches.count, by: writers).map({ batches[$0] }) {
                        let answer = try ModifyProbe.read(try await caller.send("records/modify", body: body))
                        if let failed = answer.records.firstIndex(where: { $0.error != nil }) {
                            throw ValidationError("operation \(failed) failed")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        return Double(count) / (ContinuousClock.now - started).seconds
    }

    /// 2. changes/zone: a client catching up on everything from scratch.
    func benchCatchUp(_ hq: Caller) async throws {
        let catchUp = ContinuousClock.now
        var token: String? = nil
        var fetched = 0
        while true {
            var query: [String: Any] = ["zoneID": ["zoneName": "catalog"], "resultsLimit": SyncLimits.recordsPerChangesPage]
            if let token { query["syncToken"] = token }
            let answer = try await hq.send("changes/zone", body: try JSONSerialization.data(withJSONObject: ["zones": [query]]))
            let zone = try JSONDecoder().decode(ChangesProbe.self, from: answer).zones[0]
            fetched += zone.records.count
            token = zone.syncToken
            if !zone.moreComing { break }
        }
        let catchUpRate = Double(fetched) / (ContinuousClock.now - catchUp).seconds
        say(label("changes/zone, catching up") + String(format: "%10.0f records/s (%d records; goal ≥ 50,000/s on SQLite)", catchUpRate, fetched))

    }

    /// 3. From a commit on one instance to the notice on another (the same one on SQLite, which has one).
    func benchNotices(_ hq: Caller, listeningOn other: Instance, sameInstance: Bool) async throws {
        try await hq.post(
            "subscriptions/modify",
            [
                "operations": [
                    [
                        "operationType": "save",
                        "subscription": ["subscriptionID": "catalog", "subscriptionType": "zone", "zoneID": ["zoneName": "catalog"]],
                    ]
                ]
            ]
        )
        let listener = try await EventCounter.open(other.client(credential: hq.credential))
        var latencies: [Double] = []
        for index in 0..<notices {
            let seen = await listener.count
            let sent = ContinuousClock.now
            _ = try await hq.post("records/modify", body: Workload.batch(from: records + index, count: 1))
            while await listener.count == seen {
                if ContinuousClock.now - sent > .seconds(10) { throw ValidationError("no notice 10 s after commit \(index)") }
                try await Task.sleep(for: .microseconds(200))
            }
            latencies.append((await listener.lastArrival! - sent).seconds * 1000)
        }
        listener.close()
        latencies.sort()
        let where_ = sameInstance ? "the same instance" : "another instance"
        say(
            label("commit → notice on \(where_)")
                + String(
                    format: "p50 %.1f ms, p99 %.1f ms (goal p99 < 100 ms on PostgreSQL)",
                    latencies[latencies.count / 2],
                    latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
                )
        )

    }

    /// 4. Memory with many event streams open.
    func benchStreams(_ hq: Caller, on other: Instance) async throws {
        let before = other.residentMegabytes()
        // A client of its own: the shared one holds few connections per host.
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: streams + 8)
        let streamClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        var open: [EventCounter] = []
        for _ in 0..<streams { open.append(try await EventCounter.open(other.client(credential: hq.credential), using: streamClient)) }
        try await Task.sleep(for: .seconds(1))
        let after = other.residentMegabytes()
        for stream in open { stream.close() }
        try? await streamClient.shutdown()
        say(label("server memory, \(streams) event streams open") + String(format: "%.0f MB resident (%.0f MB before them)", after, before))
    }

    func run() async throws {
        let binary =
            server ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("northwind-sync-server").path
        let target = try await Target.make(database)
        say("northwind-sync-bench on \(target.engine), \(records) records in batches of \(SyncLimits.operationsPerRequest)")

        // 1. records/modify against the bare baseline.
        let bare = try await target.bareRates(records: records)
        say(label("bare, record rows only (records/s)") + String(format: "%10.0f", bare.rows))
        say(label("bare, the same writes (records/s)") + String(format: "%10.0f  (rows, zone counter, stored answer)", bare.same))
        let ours = try await Instance.start(binary: binary, database: try await target.freshDatabase())
        defer { ours.stop() }
        let hq = try await ours.enrol("HQ")
        try await hq.post("zones/modify", ["operations": [["operationType": "create", "zoneID": ["zoneName": "catalog"]]]])
        _ = try await hq.post("records/modify", body: Workload.categories())
        // The batches are encoded first: the measure is the server's, not this client's JSON encoder. Half go one
        // at a time from one client; the other half from `writers` clients at once, as several shops would send.
        let batches = stride(from: 0, to: records, by: SyncLimits.operationsPerRequest).map {
            Workload.batch(from: $0, count: min(SyncLimits.operationsPerRequest, records - $0))
        }
        let half = batches.count / 2
        // The last batch may be short: count the records each half really holds.
        let firstRecords = min(half * SyncLimits.operationsPerRequest, records)
        // The rates move with the machine's load from run to run; the server's CPU per record moves far less.
        let meter = CPUMeter(servers: [ours.process.processIdentifier], postgres: target.engine == "PostgreSQL")
        let start = meter.read()
        let single = try await Self.send(Array(batches[..<half]), records: firstRecords, as: hq, writers: 1)
        let between = meter.read()
        let concurrent = try await Self.send(Array(batches[half...]), records: records - firstRecords, as: hq, writers: writers)
        let end = meter.read()
        say(row("records/modify, 1 client (records/s)", ours: single, bare: bare.same, goal: "≥ 25% of bare"))
        say(row("records/modify, \(writers) clients at once (records/s)", ours: concurrent, bare: bare.same, goal: "≥ 25% of bare"))
        say(label("") + String(format: "(%.0f%% of the bare rate for the record rows only)", concurrent / bare.rows * 100))
        for (name, usage, count) in [("1 client", between - start, firstRecords), ("\(writers) clients", end - between, records - firstRecords)]
        where count > 0 {
            let written = Double(count)
            let engine = target.engine == "PostgreSQL" ? String(format: ", PostgreSQL %.1f µs", usage.postgres / written * 1e6) : ""
            say(label("server CPU a record, \(name)") + String(format: "%10.1f µs", usage.servers / written * 1e6) + engine)
        }

        try await benchCatchUp(hq)
        // 3 and 4 on another instance on PostgreSQL; SQLite has one.
        let other = target.engine == "PostgreSQL" ? try await Instance.start(binary: binary, database: ours.database) : ours
        defer { if other !== ours { other.stop() } }
        try await benchNotices(hq, listeningOn: other, sameInstance: other === ours)
        try await benchStreams(hq, on: other)
    }

    private func row(_ name: String, ours: Double, bare: Double, goal: String) -> String {
        label(name) + String(format: "%10.0f vs bare %10.0f = %4.0f%% ", ours, bare, ours / bare * 100) + "(\(goal))"
    }

    private func label(_ name: String) -> String { "  " + name.padding(toLength: 46, withPad: " ", startingAt: 0) }
}

/// The records every measure writes: a product-like record of six fields.
enum Workload {
    static func record(_ index: Int) -> SyncRecord {
        SyncRecord(
            recordName: "p\(index)",
            recordType: "Product",
            zoneID: ZoneID("catalog"),
            fields: [
                "name": .string("Product number \(index)"),
                "quantityPerUnit": .string("10 boxes x 20 bags"),
                "unitPrice": .decimal("\(index % 100).25"),
                "unitsInStock": .int64(Int64(index % 120)),
                "discontinued": .int64(0),
                "category": .reference(RecordReference(recordName: "c\(index % 8)")),
            ]
        )
    }

    /// A records/modify body of products.
    static func batch(from start: Int, count: Int) -> Data {
        body((start..<start + count).map(record))
    }

    /// What the server stores per batch for replays: each operation's result with its record.
    static func answer(_ rows: [(SyncRecord, String)]) -> String {
        var writer = JSONWriter()
        writer.raw("{\"records\":[")
        for (index, (record, body)) in rows.enumerated() {
            writer.raw(index > 0 ? ",{" : "{")
            writer.key("opID")
            writer.string(record.recordName)
            writer.raw(",")
            writer.key("recordName")
            writer.string(record.recordName)
            writer.raw(",\"record\":" + body + "}")
        }
        writer.raw("],\"replayed\":false}")
        return writer.text
    }

    /// The eight categories the products refer to, written first.
    static func categories() -> Data {
        body(
            (0..<8).map {
                SyncRecord(recordName: "c\($0)", recordType: "Category", zoneID: ZoneID("catalog"), fields: ["name": .string("Category \($0)")])
            }
        )
    }

    private static func body(_ records: [SyncRecord]) -> Data {
        let operations = records.map { Operation(opID: $0.recordName, operationType: "create", record: $0) }
        return try! JSONEncoder().encode(Request(clientID: "bench", batchID: UUID().uuidString, operations: operations))
    }

    struct Operation: Encodable {
        var opID: String
        var operationType: String
        var record: SyncRecord
    }

    struct Request: Encodable {
        var clientID: String
        var batchID: String
        var operations: [Operation]
    }
}

/// A server process under measurement.
final class Instance: Sendable {
    let process: Process
    let port: Int
    let database: String

    private init(process: Process, port: Int, database: String) {
        self.process = process
        self.port = port
        self.database = database
    }

    static func start(binary: String, database: String) async throws -> Instance {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--database", database, "--port", "0", "--rate", "1000000"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var seen = ""
        while seen.firstMatch(of: /listening on [0-9.]+:([0-9]+)\n/) == nil {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { throw ValidationError("the sync server stopped before listening: \(seen)") }
            seen += String(decoding: chunk, as: UTF8.self)
        }
        errors.fileHandleForReading.readabilityHandler = { handle in _ = handle.availableData }
        let port = Int(seen.firstMatch(of: /listening on [0-9.]+:([0-9]+)\n/)!.1)!
        return Instance(process: process, port: port, database: database)
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }

    func enrol(_ siteCode: String) async throws -> Caller {
        let service = try await SyncService.open(database: database)
        let token = try await service.createEnrollment(container: "bench", role: .hq)
        await service.close()
        let answer = try await client(credential: "").post(
            path: "/sync/v1/enroll",
            body: try JSONSerialization.data(withJSONObject: ["token": token, "siteCode": siteCode])
        )
        return client(credential: answer["credential"] as! String)
    }

    func client(credential: String) -> Caller { Caller(port: port, credential: credential) }

    var url: String { "http://127.0.0.1:\(port)" }

    /// A one-time enrolment token for an installation of `role`, as `northwind-sync-server enroll` makes it.
    func token(role: Role) async throws -> String {
        let service = try await SyncService.open(database: database)
        do {
            let token = try await service.createEnrollment(container: "bench", role: role)
            await service.close()
            return token
        } catch {
            await service.close()
            throw error
        }
    }

    /// The server's resident memory, from /proc.
    func residentMegabytes() -> Double {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
    }
}

/// Calls the protocol as one installation, with plain JSON (the bench measures the server, not a client).
struct Caller: Sendable {
    let port: Int
    let credential: String

    @discardableResult
    func post(_ operation: String, _ body: [String: Any]) async throws -> [String: Any] {
        try await post(path: "/sync/v1/bench/shared/\(operation)", body: try JSONSerialization.data(withJSONObject: body))
    }

    @discardableResult
    func post(_ operation: String, body: Data) async throws -> [String: Any] {
        try await post(path: "/sync/v1/bench/shared/\(operation)", body: body)
    }

    /// The answer's bytes, unparsed.
    func send(_ operation: String, body: Data) async throws -> Data {
        try await send(path: "/sync/v1/bench/shared/\(operation)", body: body)
    }

    func post(path: String, body: Data) async throws -> [String: Any] {
        (try JSONSerialization.jsonObject(with: try await send(path: path, body: body))) as? [String: Any] ?? [:]
    }

    func send(path: String, body: Data) async throws -> Data {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if !credential.isEmpty { request.headers.add(name: "Authorization", value: "Bearer \(credential)") }
        request.body = .bytes(body)
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(120))
        let data = Data(try await response.body.collect(upTo: 64 * 1024 * 1024).readableBytesView)
        guard response.status == .ok else { throw ValidationError("\(path) answered \(response.status): \(String(decoding: data, as: UTF8.self))") }
        return data
    }
}

/// An open event stream that counts `change` events and notes when the last one arrived.
final class EventCounter: Sendable {
    private let reader: Task<Void, Never>
    private let state: State

    actor State {
        var count = 0
        var lastArrival: ContinuousClock.Instant?
        func arrived(_ changes: Int) {
            count += changes
            lastArrival = .now
        }
    }

    private init(reader: Task<Void, Never>, state: State) {
        self.reader = reader
        self.state = state
    }

    static func open(_ caller: Caller, using client: HTTPClient = .shared) async throws -> EventCounter {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(caller.port)/sync/v1/bench/shared/events")
        request.headers.add(name: "Authorization", value: "Bearer \(caller.credential)")
        let response = try await client.execute(request, timeout: .hours(1))
        guard response.status == .ok else { throw ValidationError("events answered \(response.status)") }
        let state = State()
        let reader = Task {
            do {
                for try await chunk in response.body {
                    let changes = String(buffer: chunk).components(separatedBy: "event: change").count - 1
                    if changes > 0 { await state.arrived(changes) }
                }
            } catch {}
        }
        return EventCounter(reader: reader, state: state)
    }

    var count: Int { get async { await state.count } }
    var lastArrival: ContinuousClock.Instant? { get async { await state.lastArrival } }
    func close() { reader.cancel() }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// Prints at once, so progress shows when the output is a pipe.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Only what the bench reads of an answer, so that its own decoding costs little.
struct ModifyProbe: Decodable {
    struct Result: Decodable { var error: Skipped? }
    var records: [Result]

    /// Read as a shop would read it, with `JSONReader` (JSONDecoder would add 1.5 ms a batch to the measure).
    static func read(_ answer: Data) throws -> ModifyProbe {
        let read = JSONReader.read(answer) { reader throws(JSONReader.Mismatch) in
            var records: [Result] = []
            try reader.object { key, reader throws(JSONReader.Mismatch) in
                guard key == "records" else { return try reader.skipValue() }
                try reader.array { reader throws(JSONReader.Mismatch) in
                    var failed = false
                    try reader.object { key, reader throws(JSONReader.Mismatch) in
                        if key == "error" { failed = true }
                        try reader.skipValue()
                    }
                    records.append(Result(error: failed ? Skipped() : nil))
                }
            }
            return ModifyProbe(records: records)
        }
        return try read ?? JSONDecoder().decode(ModifyProbe.self, from: answer)
    }
}

struct ChangesProbe: Decodable {
    struct Zone: Decodable {
        var syncToken: String
        var moreComing: Bool
        var records: [Skipped]
    }
    var zones: [Zone]
}

/// A value the bench does not look into.
struct Skipped: Decodable {
    init() {}
    init(from decoder: any Decoder) throws {}
}
