import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import Logging
import Mustache
import Northwind
import NorthwindStore
import ServiceLifecycle

/// Ends the change feed's subscriptions when the server shuts down, so open event streams close.
struct FeedService: Service {
    let feed: ChangeFeed
    func run() async throws {
        try? await gracefulShutdown()
        feed.close()
    }
}

/// Keeps the settings current while the server runs: the settings file, and the store's values when the CLI or
/// another tab changes them.
struct SettingsService: Service {
    let settings: Settings
    let feed: ChangeFeed
    func run() async throws {
        await withDiscardingTaskGroup { group in
            group.addTask { await settings.watch(feed: feed) }
            try? await gracefulShutdown()
            group.cancelAll()
        }
    }
}
