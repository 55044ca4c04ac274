import Logging
import ServiceLifecycle
import UnixSignals

/// `systemctl reload` (SIGHUP): runs `reload` each time the signal comes, while the server runs, and tells
/// systemd when it is done. Without this service SIGHUP would end the process, as it does by default.
public struct HangupReload: Service {
    let reload: @Sendable () async -> String
    let logger: Logger

    /// `reload` re-reads what can change while the server runs and says what it did, for the log.
    public init(logger: Logger, reload: @escaping @Sendable () async -> String) {
        self.reload = reload
        self.logger = logger
    }

    public func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in signals {
                SystemdNotify.reloading()
                let said = await reload()
                logger.notice("Reloaded on SIGHUP: \(said)")
                SystemdNotify.ready(status: said)
            }
        }
    }
}
