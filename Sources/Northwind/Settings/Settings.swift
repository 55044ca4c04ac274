import Configuration
import Foundation
import NorthwindStore
import Synchronization
import SystemPackage

/// Where a setting's value comes from: the layers, highest first. The first layer with a value the catalogue
/// accepts wins; the factory default always answers.
public enum SettingOrigin: String, Sendable, CaseIterable, Codable {
    case commandLine = "command line"
    case environment
    case file = "settings file"
    case installation = "this installation"
    case user
    case factory = "factory default"

    /// Layers set outside the store: a value there shows read-only on the page, since a change below it does nothing.
    public var isOverride: Bool { [.commandLine, .environment, .file].contains(self) }
}

/// A setting's value as it stands, and where it comes from.
public struct SettingValue: Sendable, Equatable, Codable {
    public var key: String
    /// Canonical text; a secret shows as "(set)" or "".
    public var value: String
    public var origin: SettingOrigin

    public init(key: String, value: String, origin: SettingOrigin) {
        self.key = key
        self.value = value
        self.origin = origin
    }
}

/// One layer's answer for a setting, for `settings explain`.
public struct SettingLayer: Sendable, Equatable, Codable {
    public var origin: SettingOrigin
    /// The layer's value, if it has one that the catalogue accepts.
    public var value: String?
    /// Why the layer's value was passed over (it breaks a rule), if it was.
    public var problem: String?
    public var wins: Bool
}

/// Where the layers above the store come from.
public struct SettingsSources: Sendable {
    /// Values given on the command line, by key (`--port 8081` as `server.port: "8081"`).
    public var commandLine: [String: String]
    /// The process environment: `NORTHWIND_SERVER_PORT` sets `server.port`.
    public var environment: [String: String]
    /// The settings file (JSON, nested by group or with dotted keys), or nil for none.
    public var file: String?

    public init(commandLine: [String: String] = [:], environment: [String: String] = [:], file: String? = nil) {
        self.commandLine = commandLine
        self.environment = environment
        self.file = file
    }

    /// `$NORTHWIND_SETTINGS`, else `northwind/settings.json` in the config folder (`$XDG_CONFIG_HOME`, else
    /// `~/.config`); it need not exist. When it does not and the machine's `/etc/northwind/settings.json` does (the
    /// Debian package's), that one: so `runuser -u northwind -- northwind …` on a server finds the service's store.
    public static func defaultFile(environment: [String: String], system: String = "/etc/northwind/settings.json") -> String {
        if let path = environment["NORTHWIND_SETTINGS"], !path.isEmpty { return path }
        let home = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        let own = home + "/northwind/settings.json"
        if !FileManager.default.fileExists(atPath: own) && FileManager.default.fileExists(atPath: system) { return system }
        return own
    }
}

/// Northwind's settings: the layers over the catalogue, after UserDefaults (command line, environment, settings
/// file, this installation's stored values, the user's, factory defaults), read through swift-configuration.
public final class Settings: Sendable {
    public let problems: SettingProblems
    private let layers: [(origin: SettingOrigin, provider: any ConfigProvider)]
    private let installation: StoredSettingsProvider
    private let users: StoredSettingsProvider
    private let reader: ConfigReader
    private let file: SettingsFile?
    private let warn: @Sendable (String) -> Void
    /// The store the stored layers were last read from, and the change log's position at that read.
    private let backoffice = Mutex<Backoffice?>(nil)
    private let readAt = Mutex<Int64>(-1)
    /// Values as resolved through the layers, until a layer changes: pages read several settings per request, and
    /// a read through every layer costs about 0.2 ms (northwind-bench, "setting read").
    private let resolved = Mutex<[String: SettingValue]>([:])
    private let subscribers = Mutex<[UUID: AsyncStream<Void>.Continuation]>([:])

    /// The layers from `sources`, over the values stored in `backoffice`'s store (none when nil: a store that is
    /// not opened yet). `warn` hears each value passed over, once, and a settings file that could not be read.
    public init(sources: SettingsSources, backoffice: Backoffice?, warn: @escaping @Sendable (String) -> Void = { _ in }) async throws(NorthwindError)
    {
        let problems = SettingProblems(onNew: warn)
        self.problems = problems
        var environment = sources.environment
        // The names these two had before they were settings.
        for (old, new) in [("NORTHWIND_STORE", "NORTHWIND_STORE_PATH"), ("NORTHWIND_SQL_DEBUG", "NORTHWIND_LOG_SQL_DEBUG")] {
            if let value = environment[old], environment[new] == nil { environment[new] = value }
        }
        let installation = StoredSettingsProvider(origin: .installation)
        let users = StoredSettingsProvider(origin: .user)
        (self.installation, self.users) = (installation, users)
        // guide: begin settings-layers-code
        var layers: [(origin: SettingOrigin, provider: any ConfigProvider)] = [
            (
                .commandLine,
                CheckedProvider(
                    upstream: InMemoryProvider(name: "command line", values: Self.values(sources.commandLine)),
                    origin: .commandLine,
                    problems: problems
                )
            ),
            (
                .environment,
                CheckedProvider(
                    upstream: EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: "northwind"),
                    origin: .environment,
                    problems: problems
                )
            ),
        ]
        if let path = sources.file {
            let file = SettingsFile(path: path)
            _ = await file.reloadIfChanged()
            if let problem = file.problem { warn(problem) }
            layers.append((.file, CheckedProvider(upstream: file.values, origin: .file, problems: problems)))
            self.file = file
        } else {
            file = nil
        }
        layers.append((.installation, installation))
        layers.append((.user, users))
        let factory = InMemoryProvider(name: SettingOrigin.factory.rawValue, values: Self.values(Setting.factoryDefaults))
            .mapKeys { AbsoluteConfigKey($0.components) }
        layers.append((.factory, factory))
        self.layers = layers
        reader = ConfigReader(providers: layers.map(\.1))
        // guide: end settings-layers-code
        self.warn = warn
        if let backoffice { try await reload(from: backoffice) }
    }

    /// Set while the settings file's latest version is malformed: the last good values stand, and this says why.
    public var fileProblem: String? { file?.problem }

    /// Yields each time a value may have changed: the settings file was edited, or the store's settings were (from
    /// this process, another tab or the CLI). Readers then read what they need again.
    public func updates() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.subscribers.withLock { _ = $0.removeValue(forKey: id) } }
        return stream
    }

    /// Keeps the settings current until cancelled: looks at the settings file every `fileInterval`, and reads the
    /// stored layers again whenever `feed` shows a change to them.
    public func watch(feed: ChangeFeed, fileInterval: Duration = .seconds(1)) async {
        await withTaskGroup(of: Void.self) { group in
            if let file {
                group.addTask { [self] in
                    while !Task.isCancelled {
                        try? await Task.sleep(for: fileInterval)
                        guard await file.reloadIfChanged() else { continue }
                        if let problem = file.problem { warn(problem) }
                        resolved.withLock { $0 = [:] }
                        announce()
                    }
                }
            }
            if let backoffice = backoffice.withLock({ $0 }) {
                let changes = feed.subscribe()
                group.addTask { [self] in
                    // Once now, for what was written before the subscription began; then after every batch. The
                    // feed keeps only the newest batches for a slow reader, so the one naming a settings table may
                    // be skipped: a later one still brings a read, and the read finds whatever changed.
                    await reloadAndAnnounce(from: backoffice)
                    for await _ in changes { await reloadAndAnnounce(from: backoffice) }
                }
            }
            await group.waitForAll()
        }
    }

    /// Reads the settings file now, as `systemctl reload` (SIGHUP) asks, rather than at the next look; says what
    /// stands, for the log.
    public func reloadFile() async -> String {
        guard let file else { return "no settings file to read" }
        if await file.reloadIfChanged() {
            if let problem = file.problem { warn(problem) }
            resolved.withLock { $0 = [:] }
            announce()
        }
        return file.problem ?? "the settings file \(file.path) is in force"
    }

    private func reloadAndAnnounce(from backoffice: Backoffice) async {
        do {
            if try await reloadStored(from: backoffice) { announce() }
        } catch {
            warn("The stored settings could not be read again (\(error)); the last ones read stay in force.")
        }
    }

    private func announce() {
        backoffice.withLock { $0 }?.rules.update(from: self)
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield() }
    }

    /// Reads the stored layers again (after a change in the store, from this process or another).
    public func reload(from backoffice: Backoffice) async throws(NorthwindError) {
        try await reloadStored(from: backoffice)
    }

    /// Reads the stored layers, and puts them in force unless a later read already has (reads from the page and
    /// from the watcher may overtake each other). Returns whether a value changed.
    @discardableResult
    private func reloadStored(from backoffice: Backoffice) async throws(NorthwindError) -> Bool {
        let (position, installationValues, userValues) = try await backoffice.read { db in
            (
                try ShopSettings.changeLogPosition(db), try ShopSettings.storedSettings(db, login: nil).mapValues(\.value),
                try ShopSettings.everyUsersSettings(db)
            )
        }
        self.backoffice.withLock { $0 = backoffice }
        let changed = readAt.withLock { readAt -> Bool in
            guard position >= readAt else { return false }
            readAt = position
            let installationChanged = installation.replace(with: ["": installationValues])
            let changed = users.replace(with: userValues) || installationChanged
            if changed { resolved.withLock { $0 = [:] } }
            return changed
        }
        backoffice.rules.update(from: self)
        return changed
    }

    /// The value that stands for `key` (for `login`, when it is a user key), and where it comes from.
    public func value(_ key: String, user login: String? = nil) throws(NorthwindError) -> SettingValue {
        let setting = try Setting.named(key)
        let cacheKey = setting.scope == .user ? key + "|" + ShopSettings.canonicalLogin(login ?? "") : key
        if let known = resolved.withLock({ $0[cacheKey] }) { return known }
        let configKey = Self.configKey(setting, login: login)
        let value = reader.string(forKey: configKey, isSecret: setting.kind == .secret) ?? setting.defaultValue
        let origin = explain(setting, login: login).first(where: \.wins)?.origin ?? .factory
        let answer = SettingValue(key: key, value: setting.display(value), origin: origin)
        resolved.withLock { $0[cacheKey] = answer }
        return answer
    }

    /// A secret's value itself, for the code that uses it; never show or log it. Empty when no layer sets it.
    public func secret(_ key: String) throws(NorthwindError) -> String {
        let setting = try Setting.named(key)
        return reader.string(forKey: Self.configKey(setting, login: nil), isSecret: true) ?? setting.defaultValue
    }

    /// Every setting's value and origin, in catalogue order; user keys only with a `login`.
    public func all(user login: String? = nil) -> [SettingValue] {
        Setting.all.filter { $0.scope != .user || login != nil }.compactMap { try? value($0.key, user: login) }
    }

    /// The values `origin` sets that break a rule, each naming its key and the rule ("server.port must be at most
    /// 65535"), after reading every key.
    public func problems(in origin: SettingOrigin) -> [String] {
        Setting.all.compactMap { setting in
            _ = explain(setting, login: nil)
            return problems.problem(setting.key, origin: origin)
        }
    }

    /// Every layer's answer for `key`, highest first, and which one wins.
    public func explain(_ key: String, user login: String? = nil) throws(NorthwindError) -> [SettingLayer] {
        explain(try Setting.named(key), login: login)
    }

    private func explain(_ setting: Setting, login: String?) -> [SettingLayer] {
        let key = AbsoluteConfigKey(Self.configKey(setting, login: login))
        var found = false
        return layers.compactMap { origin, provider in
            if origin == .user, setting.scope != .user { return nil }
            if origin == .installation, setting.scope == .user { return nil }
            let value: String? =
                if case .string(let text)? = (try? provider.value(forKey: key, type: .string))?.value?.content { text } else { nil }
            let wins = value != nil && !found
            if value != nil { found = true }
            return SettingLayer(
                origin: origin,
                value: value.map(setting.display),
                problem: problems.problem(setting.key, origin: origin),
                wins: wins
            )
        }
    }

    private static func configKey(_ setting: Setting, login: String?) -> ConfigKey {
        let context: [String: ConfigContextValue] =
            if let login, setting.scope == .user { ["user": .string(ShopSettings.canonicalLogin(login))] } else { [:] }
        return ConfigKey(setting.key.split(separator: ".").map(String.init), context: context)
    }

    private static func values(_ texts: [String: String]) -> [AbsoluteConfigKey: ConfigValue] {
        Dictionary(
            uniqueKeysWithValues: texts.map { key, value in
                (AbsoluteConfigKey(key.split(separator: ".").map(String.init)), ConfigValue(.string(value), isSecret: false))
            }
        )
    }
}
