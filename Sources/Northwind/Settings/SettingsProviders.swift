import Configuration
import Foundation
import NorthwindStore
import Synchronization

/// A layer set from outside (the command line, the environment, the settings file), through which only values the
/// catalogue accepts pass, in canonical text. A bad value is noted (`problems`) and passed over, so that the next
/// layer wins instead of a value nobody can use; keys the catalogue does not declare are not read at all.
struct CheckedProvider<Upstream: ConfigProvider>: ConfigProvider {
    let upstream: Upstream
    let origin: SettingOrigin
    let problems: SettingProblems

    var providerName: String { origin.rawValue }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        checked(key, in: upstream.snapshot())
    }

    func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        checked(key, in: upstream.snapshot())
    }

    func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
    ) async throws -> Return {
        try await upstream.watchSnapshot { snapshots in
            try await updatesHandler(
                ConfigUpdatesAsyncSequence(snapshots.map { snapshot -> Result<LookupResult, any Error> in .success(self.checked(key, in: snapshot)) })
            )
        }
    }

    func snapshot() -> any ConfigSnapshot { CheckedSnapshot(provider: self, upstream: upstream.snapshot()) }

    func watchSnapshot<Return: ~Copyable>(
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        try await upstream.watchSnapshot { snapshots in
            try await updatesHandler(
                ConfigUpdatesAsyncSequence(snapshots.map { CheckedSnapshot(provider: self, upstream: $0) as any ConfigSnapshot })
            )
        }
    }

    /// The layer's value for `key`, read in whichever type it was written (a JSON number, an environment string).
    func checked(_ key: AbsoluteConfigKey, in snapshot: any ConfigSnapshot) -> LookupResult {
        let name = key.components.joined(separator: ".")
        guard let setting = Setting.byKey[name] else { return LookupResult(encodedKey: name, value: nil) }
        let text = SettingsFile.text(AbsoluteConfigKey(key.components), in: snapshot)
        guard let text else { return LookupResult(encodedKey: name, value: nil) }
        do {
            let value = try setting.canonical(text)
            problems.clear(name, origin: origin)
            return LookupResult(encodedKey: name, value: ConfigValue(.string(value), isSecret: setting.kind == .secret))
        } catch {
            var rule = "\(error)"
            if case let .invalid(fields) = error { rule = fields.map(\.message).joined(separator: "; ") }
            problems.note(name, origin: origin, "\(name) \(rule)")
            return LookupResult(encodedKey: name, value: nil)
        }
    }
}

private struct CheckedSnapshot<Upstream: ConfigProvider>: ConfigSnapshot {
    let provider: CheckedProvider<Upstream>
    let upstream: any ConfigSnapshot
    var providerName: String { provider.providerName }
    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult { provider.checked(key, in: upstream) }
}

/// Values passed over because they break the catalogue's rules, by layer and key: shown by `settings explain` and
/// the page, and logged once each.
public final class SettingProblems: Sendable {
    private let problems = Mutex<[String: String]>([:])
    private let onNew: @Sendable (String) -> Void

    init(onNew: @escaping @Sendable (String) -> Void) { self.onNew = onNew }

    func note(_ key: String, origin: SettingOrigin, _ message: String) {
        let id = origin.rawValue + "|" + key
        let isNew = problems.withLock { problems in
            defer { problems[id] = message }
            return problems[id] != message
        }
        guard isNew else { return }
        let layer = origin == .environment ? "environment (\(SettingsReference.environmentName(key)))" : origin.rawValue
        onNew("\(layer): \(message); that value is ignored and the next layer's is used.")
    }

    func clear(_ key: String, origin: SettingOrigin) {
        _ = problems.withLock { $0.removeValue(forKey: origin.rawValue + "|" + key) }
    }

    /// Why the layer's value for `key` was passed over, if it was.
    public func problem(_ key: String, origin: SettingOrigin) -> String? {
        problems.withLock { $0[origin.rawValue + "|" + key] }
    }
}

/// A layer kept in the database (this installation's values, or each user's), held in memory for synchronous reads
/// and reloaded when the store's change log shows a change to it, from this process or another.
final class StoredSettingsProvider: ConfigProvider {
    let origin: SettingOrigin
    private let values: MutableInMemoryProvider
    private let mapped: KeyMappingProvider<MutableInMemoryProvider>
    private let loaded = Mutex<[AbsoluteConfigKey: String]>([:])

    init(origin: SettingOrigin) {
        self.origin = origin
        values = MutableInMemoryProvider(name: origin.rawValue, initialValues: [:])
        // The installation's values answer whoever asks; a user's only a read for that user.
        mapped =
            origin == .user
            ? values.mapKeys { $0 } : values.mapKeys { AbsoluteConfigKey($0.components) }
    }

    var providerName: String { origin.rawValue }

    /// Replaces the layer's values (`stored[login or ""][key] = canonical text`), under a lock so that two calls
    /// never mix. Returns whether any value changed.
    func replace(with stored: [String: [String: String]]) -> Bool {
        var next: [AbsoluteConfigKey: String] = [:]
        for (login, settings) in stored {
            for (key, value) in settings where Setting.byKey[key] != nil {
                let context: [String: ConfigContextValue] = login.isEmpty ? [:] : ["user": .string(login)]
                next[AbsoluteConfigKey(key.split(separator: ".").map(String.init), context: context)] = value
            }
        }
        return loaded.withLock { loaded in
            guard loaded != next else { return false }
            for key in loaded.keys where next[key] == nil { values.setValue(nil, forKey: key) }
            for (key, value) in next where loaded[key] != value {
                let isSecret = Setting.byKey[key.components.joined(separator: ".")]?.kind == .secret
                values.setValue(ConfigValue(.string(value), isSecret: isSecret), forKey: key)
            }
            loaded = next
            return true
        }
    }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult { try mapped.value(forKey: key, type: type) }

    func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws -> LookupResult {
        try await mapped.fetchValue(forKey: key, type: type)
    }

    func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey,
        type: ConfigType,
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>) async throws -> Return
    ) async throws -> Return {
        try await mapped.watchValue(forKey: key, type: type, updatesHandler: updatesHandler)
    }

    func snapshot() -> any ConfigSnapshot { mapped.snapshot() }

    func watchSnapshot<Return: ~Copyable>(
        updatesHandler: nonisolated(nonsending) (_ updates: ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws -> Return
    ) async throws -> Return {
        try await mapped.watchSnapshot(updatesHandler: updatesHandler)
    }
}
