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
