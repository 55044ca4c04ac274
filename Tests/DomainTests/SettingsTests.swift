import Foundation
import NorthwindStore
import Synchronization
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

/// Writes `contents` to a settings file in `store`'s folder and returns its path.
private func settingsFile(_ store: TemporaryStore, _ contents: String) throws -> String {
    let path = store.directory.appendingPathComponent("settings-\(UUID().uuidString).json").path
    try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
    return path
}

/// A store with one employee who can sign in as `nancy`.
private func storeWithUser() async throws -> TemporaryStore {
    let store = try TemporaryStore()
    let employee = try await store.backoffice.records.create(Employee(firstName: "Nancy", lastName: "Davolio"))
    _ = try await store.backoffice.accounts.setPassword(employeeID: employee.id ?? 0, password: "nancy-secret", login: "nancy", cost: 4)
    return store
}

/// One layer set to a value for a key: the layers below the store through `SettingsSources`, the store's through the
/// domain, the factory default as it is.
private func set(_ origin: SettingOrigin, _ key: String, _ value: String, sources: inout SettingsSources, store: TemporaryStore) async throws {
    switch origin {
    case .commandLine: sources.commandLine[key] = value
    case .environment: sources.environment[SettingsReference.environmentName(key)] = value
    case .file:
        let parts = key.split(separator: ".")
        sources.file = try settingsFile(store, #"{"\#(parts[0])": {"\#(parts[1])": "\#(value)"}}"#)
    case .installation: try await store.backoffice.settings.set(key, value)
    case .user: try await store.backoffice.settings.set(key, value, user: "nancy")
    case .factory: break
    }
}

@Suite("Settings")
struct SettingsTests {
    /// Every pair of layers that can hold the same key, higher first: an installation key has no user layer, a user
    /// key no installation layer.
    static let layerPairs: [(String, SettingOrigin, SettingOrigin)] = {
        var pairs: [(String, SettingOrigin, SettingOrigin)] = []
        for (key, layers) in [
            ("pages.pageSize", SettingOrigin.allCases.filter { $0 != .user }),
            ("display.density", SettingOrigin.allCases.filter { $0 != .installation }),
        ] {
            for (index, higher) in layers.enumerated() {
                for lower in layers[(index + 1)...] { pairs.append((key, higher, lower)) }
            }
        }
        return pairs
    }()

    @Test(arguments: layerPairs)
    func aHigherLayerWinsOverALowerOne(key: String, higher: SettingOrigin, lower: SettingOrigin) async throws {
        // Given a value for the key in two layers (the factory's is its default)
        let store = try await storeWithUser()
        let setting = try Setting.named(key)
        let (high, low) = key == "pages.pageSize" ? ("40", "60") : ("compact", "comfortable")
        var sources = SettingsSources()
        try await set(lower, key, lower == .factory ? setting.defaultValue : low, sources: &sources, store: store)
        try await set(higher, key, high, sources: &sources, store: store)
        // When the settings are read
        let settings = try await Settings(sources: sources, backoffice: store.backoffice)
        let value = try settings.value(key, user: "nancy")
        // Then the higher layer's value stands, and says where it comes from
        #expect(value.value == high)
        #expect(value.origin == higher)
        let layers = try settings.explain(key, user: "nancy")
        #expect(layers.filter(\.wins).map(\.origin) == [higher])
        #expect(layers.first { $0.origin == lower }?.value == (lower == .factory ? setting.defaultValue : low))
    }

    @Test func resetRemovesTheStoredValueSoTheNextLayerShowsThrough() async throws {
        // Given a page size in the settings file and another stored at this installation
        let store = try TemporaryStore()
        let file = try settingsFile(store, #"{"pages": {"pageSize": 30}}"#)
        try await store.backoffice.settings.set("pages.pageSize", "50")
        try await store.backoffice.settings.set("sync.interval", "120")
        // When both stored values are reset
        try await store.backoffice.settings.remove("pages.pageSize")
        try await store.backoffice.settings.remove("sync.interval")
        // Then the file's value shows for the one, the factory default for the other
        let settings = try await Settings(sources: SettingsSources(file: file), backoffice: store.backoffice)
        #expect(try settings.value("pages.pageSize") == SettingValue(key: "pages.pageSize", value: "30", origin: .file))
        #expect(try settings.value("sync.interval") == SettingValue(key: "sync.interval", value: "60", origin: .factory))
        #expect(try await store.backoffice.settings.installation().isEmpty)
    }

    @Test func aStoredValueThatBreaksARuleIsRefusedNamingTheKeyAndTheRule() async throws {
        // Given a store
        let store = try TemporaryStore()
        // When a page size beyond the maximum, a word for a number and an unknown choice are stored
        let tooLarge = await northwindError { try await store.backoffice.settings.set("pages.pageSize", "500") }
        let word = await northwindError { try await store.backoffice.settings.set("sync.interval", "often") }
        let choice = await northwindError { try await store.backoffice.settings.set("log.level", "loud") }
        // Then each is refused with the key and the rule, and nothing is stored
        #expect(tooLarge == .invalid([.init("pages.pageSize", "must be at most 200")]))
        #expect(word == .invalid([.init("sync.interval", "must be a whole number from 1 to 86400, not 'often'")]))
        #expect(choice == .invalid([.init("log.level", "must be one of trace, debug, info, notice, warning, error, critical, not 'loud'")]))
        #expect(try await store.backoffice.settings.installation().isEmpty)
    }

    @Test func aValueIsStoredInItsCanonicalForm() async throws {
        // Given a store
        let store = try TemporaryStore()
        // When a bool, a decimal and a number with spaces are stored
        let cookies = try await store.backoffice.settings.set("server.secureCookies", "No")
        let freight = try await store.backoffice.settings.set("orders.defaultFreight", "12.5")
        let size = try await store.backoffice.settings.set("pages.pageSize", " 40 ")
        // Then each is kept as the catalogue writes it
        #expect([cookies, freight, size] == ["false", "12.50", "40"])
    }

    @Test func aUserKeyNeedsAUserAndAnInstallationKeyRefusesOne() async throws {
        // Given a store with a user
        let store = try await storeWithUser()
        // When a user key is stored without a user, an installation key for one, and a user key for nobody known
        let noUser = await northwindError { try await store.backoffice.settings.set("display.density", "compact") }
        let withUser = await northwindError { try await store.backoffice.settings.set("pages.pageSize", "40", user: "nancy") }
        let unknown = await northwindError { try await store.backoffice.settings.set("display.density", "compact", user: "nobody") }
        // Then each is refused, saying what to do
        #expect(noUser == .invalid([.init("display.density", "is each user's own: name the user (--user LOGIN)")]))
        #expect(withUser == .invalid([.init("pages.pageSize", "is this installation's, not a user's: leave out the user")]))
        #expect(unknown == .notFound(entity: "User", key: "nobody"))
    }

    @Test func theStorePathCannotBeStoredInTheStore() async throws {
        // Given a store
        let store = try TemporaryStore()
        // When its own path is stored in it
        let error = await northwindError { try await store.backoffice.settings.set("store.path", "/tmp/other.sqlite") }
        // Then it is refused, saying where it can be set
        guard case .invalid(let fields) = error else {
            Issue.record("expected a field error, got \(String(describing: error))")
            return
        }
        #expect(fields.first?.message.contains("command line, in the environment or in the settings file") == true)
    }

    @Test func aUsersValueIsTheirsAlone() async throws {
        // Given a store with two users, one of whom chose the compact density
        let store = try await storeWithUser()
        let andrew = try await store.backoffice.records.create(Employee(firstName: "Andrew", lastName: "Fuller"))
        _ = try await store.backoffice.accounts.setPassword(employeeID: andrew.id ?? 0, password: "andrew-secret", login: "andrew", cost: 4)
        try await store.backoffice.settings.set("display.density", "compact", user: "Nancy")
        // When each user's density is read
        let settings = try await Settings(sources: SettingsSources(), backoffice: store.backoffice)
        // Then Nancy (whatever the case of her login) has hers, and Andrew the default
        #expect(try settings.value("display.density", user: "nancy").value == "compact")
        #expect(try settings.value("display.density", user: "andrew") == SettingValue(key: "display.density", value: "comfortable", origin: .factory))
    }

    @Test(arguments: [SettingOrigin.commandLine, .environment, .file])
    func aBadValueAboveTheStoreIsIgnoredAndTheNextLayerWins(origin: SettingOrigin) async throws {
        // Given a valid page size stored here, and a bad one in a layer above
        let store = try TemporaryStore()
        try await store.backoffice.settings.set("pages.pageSize", "40")
        var sources = SettingsSources()
        try await set(origin, "pages.pageSize", "9000", sources: &sources, store: store)
        let warnings = WarningLog()
        // When the settings are read
        let settings = try await Settings(sources: sources, backoffice: store.backoffice, warn: warnings.append)
        let value = try settings.value("pages.pageSize")
        // Then the stored value wins, and the bad one is reported, naming the layer, the key and the rule
        #expect(value == SettingValue(key: "pages.pageSize", value: "40", origin: .installation))
        #expect(try settings.explain("pages.pageSize").first { $0.origin == origin }?.problem?.contains("must be at most 200") == true)
        #expect(warnings.lines.contains { $0.hasPrefix(origin.rawValue) && $0.contains("pages.pageSize must be at most 200; that value is ignored") })
    }

    @Test func aMalformedSettingsFileIsLeftOutAndSaysSo() async throws {
        // Given a settings file that is not JSON, and a value stored here
        let store = try TemporaryStore()
        let file = try settingsFile(store, #"{"pages": {"pageSize": 30"#)
        try await store.backoffice.settings.set("pages.pageSize", "40")
        let warnings = WarningLog()
        // When the settings are read
        let settings = try await Settings(sources: SettingsSources(file: file), backoffice: store.backoffice, warn: warnings.append)
        // Then the stored value stands, and the file's problem is told
        #expect(try settings.value("pages.pageSize").origin == .installation)
        #expect(settings.fileProblem?.contains(file) == true)
        #expect(warnings.lines.count == 1)
    }

    @Test func theEnvironmentKnowsTheOldNamesOfTheStorePathAndTheSQLLog() async throws {
        // Given the environment variables these had before they were settings
        let sources = SettingsSources(environment: ["NORTHWIND_STORE": "/tmp/shop.sqlite", "NORTHWIND_SQL_DEBUG": "1"])
        // When the settings are read without a store
        let settings = try await Settings(sources: sources, backoffice: nil)
        // Then both are read under their new keys
        #expect(try settings.value("store.path") == SettingValue(key: "store.path", value: "/tmp/shop.sqlite", origin: .environment))
        #expect(try settings.value("log.sqlDebug").value == "true")
    }

    @Test func theReferencePageInTheDocsIsTheCataloguesOwn() throws {
        // Given the reference page committed in docs/
        var root = URL(fileURLWithPath: #filePath)
        while !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) { root.deleteLastPathComponent() }
        let committed = try String(contentsOf: root.appendingPathComponent("docs/settings.md"), encoding: .utf8)
        // When it is compared with the catalogue
        // Then it names every key with its environment variable, and is exactly what the catalogue makes now
        for setting in Setting.all {
            #expect(committed.contains("`\(setting.key)`") && committed.contains(SettingsReference.environmentName(setting.key)), "\(setting.key)")
        }
        #expect(committed == SettingsReference.markdown(), "docs/settings.md is stale: run `northwind settings reference > docs/settings.md`")
    }

    @Test func everyFactoryDefaultPassesItsOwnRules() throws {
        // Given the catalogue
        // When each default is checked as a value someone typed
        // Then each is accepted as it stands (a default shown but refused is the Settings.bundle bug, turned round)
        for setting in Setting.all {
            #expect(try setting.canonical(setting.defaultValue) == setting.defaultValue, "\(setting.key)")
        }
    }
}

/// Warnings the settings gave, in order.
final class WarningLog: Sendable {
    private let storage = Mutex<[String]>([])
    var lines: [String] { storage.withLock { $0 } }
    var append: @Sendable (String) -> Void { { [self] line in self.storage.withLock { $0.append(line) } } }
}

/// Whether `updates` yields within `timeout`.
private func nextUpdate(_ updates: AsyncStream<Void>, within timeout: Duration) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            var iterator = updates.makeAsyncIterator()
            return await iterator.next() != nil
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}

/// Replaces the file at `path` as an editor does: a new file renamed over the old one.
private func rewrite(_ path: String, _ contents: String) throws {
    try Data(contents.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
}

@Suite("Settings, live")
struct LiveSettingsTests {
    /// The settings over `store` and `file`, watched (the file every 50 ms) until the test ends.
    func watched(_ store: TemporaryStore, file: String?, _ body: (Settings) async throws -> Void) async throws {
        let settings = try await Settings(sources: SettingsSources(file: file), backoffice: store.backoffice)
        let feed = try ChangeFeed(store: store.store, pollInterval: .milliseconds(50))
        let watcher = Task { await settings.watch(feed: feed, fileInterval: .milliseconds(50)) }
        defer {
            watcher.cancel()
            feed.close()
        }
        try await body(settings)
    }

    @Test func anEditedSettingsFileTakesEffectWithoutARestart() async throws {
        // Given a server's settings read from a file that sets the page size
        let store = try TemporaryStore()
        let file = store.directory.appendingPathComponent("settings.json").path
        try rewrite(file, #"{"pages": {"pageSize": 30}}"#)
        try await watched(store, file: file) { settings in
            let updates = settings.updates()
            // When an operator edits the file
            try rewrite(file, #"{"pages": {"pageSize": 40}}"#)
            // Then the new value stands (the file is looked at every 50 ms here), from the file
            #expect(await nextUpdate(updates, within: .seconds(10)))
            #expect(try settings.value("pages.pageSize") == SettingValue(key: "pages.pageSize", value: "40", origin: .file))
        }
    }

    @Test func aMalformedEditKeepsTheLastGoodSettingsAndSaysSo() async throws {
        // Given settings read from a good file
        let store = try TemporaryStore()
        let file = store.directory.appendingPathComponent("settings.json").path
        try rewrite(file, #"{"pages": {"pageSize": 30}}"#)
        let warnings = Mutex<[String]>([])
        let settings = try await Settings(
            sources: SettingsSources(file: file),
            backoffice: store.backoffice,
            warn: { message in warnings.withLock { $0.append(message) } }
        )
        let feed = try ChangeFeed(store: store.store, pollInterval: .milliseconds(50))
        let watcher = Task { await settings.watch(feed: feed, fileInterval: .milliseconds(50)) }
        defer {
            watcher.cancel()
            feed.close()
        }
        let updates = settings.updates()
        // When the file is saved half-written
        try rewrite(file, #"{"pages": {"pageSize": 4"#)
        // Then the last good value stands, and the problem is said once, naming the file
        #expect(await nextUpdate(updates, within: .seconds(10)))
        #expect(try settings.value("pages.pageSize") == SettingValue(key: "pages.pageSize", value: "30", origin: .file))
        let problem = try #require(settings.fileProblem)
        #expect(problem.contains(file) && problem.contains("last good settings"))
        #expect(warnings.withLock { $0 } == [problem])
    }

    @Test func aFileMalformedAtTheStartIsReadOnceItIsMended() async throws {
        // Given a server that started with a malformed settings file
        let store = try TemporaryStore()
        let file = store.directory.appendingPathComponent("settings.json").path
        try rewrite(file, "{ pages: pageSize = 30")
        try await watched(store, file: file) { settings in
            #expect(settings.fileProblem != nil)
            let updates = settings.updates()
            // When the operator mends it
            try rewrite(file, #"{"pages": {"pageSize": 30}}"#)
            // Then its value stands and the problem is gone
            #expect(await nextUpdate(updates, within: .seconds(10)))
            #expect(try settings.value("pages.pageSize").origin == .file)
            #expect(settings.fileProblem == nil)
        }
    }

    @Test func aValueStoredByAnotherProcessShowsWithoutARestart() async throws {
        // Given a server's settings over a store
        let store = try TemporaryStore()
        try await watched(store, file: nil) { settings in
            let updates = settings.updates()
            // When the CLI, with a handle of its own on the same file, stores a value
            let cli = Backoffice(store: try Store(StoreConfiguration(path: store.path)))
            try await cli.settings.set("stock.lowStockMargin", "5")
            // Then the server's settings show it, as this installation's value
            #expect(await nextUpdate(updates, within: .seconds(10)))
            #expect(
                try settings.value("stock.lowStockMargin") == SettingValue(key: "stock.lowStockMargin", value: "5", origin: .installation)
            )
        }
    }

    @Test func settingsReadBeforeTheStoreWasOpenFollowItOnceReadFromIt() async throws {
        // Given settings made before the store was opened (as `serve` makes them, to find the store), then read from it
        let store = try TemporaryStore()
        let settings = try await Settings(sources: SettingsSources(), backoffice: nil)
        try await settings.reload(from: store.backoffice)
        let feed = try ChangeFeed(store: store.store, pollInterval: .milliseconds(50))
        let watcher = Task { await settings.watch(feed: feed) }
        defer {
            watcher.cancel()
            feed.close()
        }
        let updates = settings.updates()
        // When a value is stored
        try await store.backoffice.settings.set("log.level", "debug")
        // Then the settings follow
        #expect(await nextUpdate(updates, within: .seconds(10)))
        #expect(try settings.value("log.level").value == "debug")
    }

    @Test func aResetByAnotherProcessShowsWithoutARestart() async throws {
        // Given a stored value the server's settings show
        let store = try TemporaryStore()
        try await store.backoffice.settings.set("pages.pageSize", "50")
        try await watched(store, file: nil) { settings in
            #expect(try settings.value("pages.pageSize").value == "50")
            let updates = settings.updates()
            // When another process resets it
            let cli = Backoffice(store: try Store(StoreConfiguration(path: store.path)))
            try await cli.settings.remove("pages.pageSize")
            // Then the factory default shows again
            #expect(await nextUpdate(updates, within: .seconds(10)))
            #expect(try settings.value("pages.pageSize") == SettingValue(key: "pages.pageSize", value: "25", origin: .factory))
        }
    }

    @Test func theLowStockMarginCountsProductsJustAboveTheirReorderLevelAsLow() async throws {
        // Given a product two units above its reorder level, which the classic rule does not call low
        let store = try TemporaryStore()
        let product = try await store.backoffice.catalogue.create(Product(name: "Chai", unitsInStock: 12, reorderLevel: 10))
        var query = ProductQuery()
        query.lowStock = true
        #expect(try await store.backoffice.catalogue.list(query).total == 0)
        // When the shop sets a margin of five units and its settings are read (which puts it in force)
        try await store.backoffice.settings.set("stock.lowStockMargin", "5")
        _ = try await Settings(sources: SettingsSources(), backoffice: store.backoffice)
        // Then the product is low everywhere the rule is asked: the filtered list, the row, and the summary
        #expect(try await store.backoffice.catalogue.list(query).items.map(\.product.id) == [product.id])
        #expect(try store.backoffice.catalogue.product(id: product.id ?? 0).isLowStock)
        #expect(try await store.backoffice.reports.summary().lowStockProducts == 1)
    }

    @Test func aMarginFromAHigherLayerWinsOverTheStoredOne() async throws {
        // Given a stored margin of five and an environment that sets none
        let store = try TemporaryStore()
        let product = try await store.backoffice.catalogue.create(Product(name: "Chai", unitsInStock: 12, reorderLevel: 10))
        try await store.backoffice.settings.set("stock.lowStockMargin", "5")
        // When the environment sets the margin to zero
        _ = try await Settings(sources: SettingsSources(environment: ["NORTHWIND_STOCK_LOW_STOCK_MARGIN": "0"]), backoffice: store.backoffice)
        // Then the product is not low
        #expect(try store.backoffice.catalogue.product(id: product.id ?? 0).isLowStock == false)
    }

    @Test func theReorderListTakesTheLowStockMarginToo() async throws {
        // Given a product two units above its reorder level, with a supplier to order from
        let store = try TemporaryStore()
        let supplier = try await store.backoffice.records.create(Supplier(companyName: "Exotic Liquids"))
        _ = try await store.backoffice.catalogue.create(Product(name: "Chai", supplierID: supplier.id, unitsInStock: 12, reorderLevel: 10))
        #expect(try await store.backoffice.reports.run("reorder_list").rows.isEmpty)
        // When the shop's margin is five units
        try await store.backoffice.settings.set("stock.lowStockMargin", "5")
        _ = try await Settings(sources: SettingsSources(), backoffice: store.backoffice)
        // Then the reorder list names it, as the dashboard counts it
        let rows = try await store.backoffice.reports.run("reorder_list").rows
        #expect(rows.count == 1)
        #expect(try await store.backoffice.reports.summary().lowStockProducts == 1)
    }
}
