import Logging
import Northwind
import ServiceLifecycle
import Synchronization

/// The server's log level as `log.level` says now. Every logger reads it at each message, so a change made on the
/// settings page, by the CLI or in the settings file shows in the very next lines.
final class LiveLogLevel: Sendable {
    private let index: Atomic<Int>

    init(_ level: Logger.Level) { index = Atomic(Self.levels.firstIndex(of: level) ?? 2) }

    var current: Logger.Level { Self.levels[index.load(ordering: .relaxed)] }

    func set(_ level: Logger.Level) { index.store(Self.levels.firstIndex(of: level) ?? 2, ordering: .relaxed) }

    /// Follows `settings` until cancelled.
    func follow(_ settings: Settings) async {
        let updates = settings.updates()
        apply(settings)
        for await _ in updates { apply(settings) }
    }

    private func apply(_ settings: Settings) {
        if let level = (try? settings.value("log.level")).flatMap({ Logger.Level(rawValue: $0.value) }) { set(level) }
    }

    private static let levels = Logger.Level.allCases
}

/// Writes to stderr at the level `LiveLogLevel` holds; a logger's own `logLevel = …` is ignored, since the setting
/// decides.
struct LiveLevelLogHandler: LogHandler {
    var base: StreamLogHandler
    let level: LiveLogLevel

    init(label: String, level: LiveLogLevel) {
        base = StreamLogHandler.standardError(label: label)
        self.level = level
    }

    var logLevel: Logger.Level {
        get { level.current }
        set {}
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) { base.log(event: event) }
}

/// Runs `LiveLogLevel.follow` beside the server.
struct LogLevelService: Service {
    let level: LiveLogLevel
    let settings: Settings
    func run() async throws {
        await cancelWhenGracefulShutdown { await level.follow(settings) }
    }
}
