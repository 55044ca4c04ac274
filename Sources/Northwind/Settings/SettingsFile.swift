import Configuration
import Foundation
import NorthwindStore
import Synchronization
import SystemPackage

/// The settings file as a layer: read through swift-configuration's JSON file provider, looked at again when it
/// changes on disk, and kept at its last good values while it is malformed.
///
/// swift-configuration's `ReloadingFileProvider` does the same polling, but it reports a failed reload only in its
/// own debug log and cannot start from a malformed file; operators need to be told, and a file mended after the
/// start must still be read. So this polls, parses with the same `FileProvider`, and says what went wrong.
final class SettingsFile: Sendable {
    let path: String
    /// The file's values for catalogue keys, as text (the checked layer above validates them).
    let values: MutableInMemoryProvider
    private let state = Mutex(State())

    private struct State {
        var stamp: Stamp?
        var loaded: Set<AbsoluteConfigKey> = []
        var problem: String?
    }

    /// What identifies one version of the file on disk: a save, or a new file renamed over it, changes it.
    private struct Stamp: Equatable {
        var modified: Date?
        var size: Int?
        var inode: Int?
    }

    init(path: String) {
        self.path = path
        values = MutableInMemoryProvider(name: SettingOrigin.file.rawValue, initialValues: [:])
    }

    /// Why the file's current version is not in force, if it is not.
    var problem: String? { state.withLock { $0.problem } }

    /// Reads the file again if it changed since the last look. Returns whether anything it says changed: its
    /// values, or whether it is in force. A malformed version leaves the last good values in place.
    func reloadIfChanged() async -> Bool {
        let stamp = Self.stamp(path)
        guard state.withLock({ $0.stamp != stamp }) else { return false }
        do {
            let provider = try await FileProvider<JSONSnapshot>(filePath: FilePath(path), allowMissing: true)
            let snapshot = provider.snapshot()
            var next: [AbsoluteConfigKey: ConfigValue] = [:]
            for setting in Setting.all {
                let key = AbsoluteConfigKey(setting.key.split(separator: ".").map(String.init))
                if let text = Self.text(key, in: snapshot) { next[key] = ConfigValue(.string(text), isSecret: setting.kind == .secret) }
            }
            let removed = state.withLock { state in
                defer { (state.stamp, state.loaded, state.problem) = (stamp, Set(next.keys), nil) }
                return state.loaded.subtracting(next.keys)
            }
            for key in removed { values.setValue(nil, forKey: key) }
            for (key, value) in next { values.setValue(value, forKey: key) }
            return true
        } catch {
            let message =
                "The settings file \(path) is malformed (\(error)); the last good settings stay in force until it is mended."
            return state.withLock { state in
                state.stamp = stamp
                defer { state.problem = message }
                return state.problem != message
            }
        }
    }

    /// A value in whichever type the file wrote it (a JSON string, number or boolean), as text.
    static func text(_ key: AbsoluteConfigKey, in snapshot: any ConfigSnapshot) -> String? {
        for type in [ConfigType.string, .int, .double, .bool] {
            guard let content = try? snapshot.value(forKey: key, type: type).value?.content else { continue }
            switch content {
            case .string(let value): return value
            case .int(let value): return String(value)
            case .double(let value): return String(value)
            case .bool(let value): return String(value)
            default: continue
            }
        }
        return nil
    }

    private static func stamp(_ path: String) -> Stamp? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        return Stamp(
            modified: attributes[.modificationDate] as? Date,
            size: (attributes[.size] as? NSNumber)?.intValue,
            inode: (attributes[.systemFileNumber] as? NSNumber)?.intValue
        )
    }
}
