import Foundation
import GRDB
import NorthwindStore

/// A value stored in the database: this installation's own (written from the settings page or `northwind settings
/// set`), or a user's. Removing it is "reset to default": the next layer shows through.
public struct StoredSetting: Sendable, Equatable, Codable {
    public var key: String
    public var value: String
    public var changedAt: Timestamp
    /// Who wrote an installation value (a login, or "cli"); nil for a user's own value.
    public var changedBy: String?
}

extension ShopSettings {
    /// This installation's stored values (system and shop keys), by key.
    public func installation() async throws(NorthwindError) -> [String: StoredSetting] {
        try await read { db in try Self.storedSettings(db, login: nil) }
    }

    /// A user's stored values, by key.
    public func user(login: String) async throws(NorthwindError) -> [String: StoredSetting] {
        let login = Self.canonicalLogin(login)
        return try await read { db in try Self.storedSettings(db, login: login) }
    }

    /// Checks `text` against the catalogue and stores its canonical form: for this installation (system and shop
    /// keys) or for the user `login` (user keys). Returns the stored value.
    @discardableResult
    public func set(
        _ key: String,
        _ text: String,
        user login: String? = nil,
        by author: String? = nil
    ) async throws(NorthwindError)
        -> String
    {
        let setting = try Setting.named(key)
        try Self.checkWhere(setting, login: login)
        let value = try setting.canonical(text)
        let login = login.map(Self.canonicalLogin)
        try await write { db in
            if setting.rules.heldTitles { try Self.checkHeldTitles(key, value, db) }
            if let login {
                try Self.requireLogin(db, login)
                try db.execute(
                    sql: """
                        INSERT INTO user_settings (login, key, value) VALUES (?, ?, ?)
                        ON CONFLICT (login, key) DO UPDATE SET value = excluded.value, changedAt = excluded.changedAt
                        WHERE value IS NOT excluded.value
                        """,
                    arguments: [login, key, value]
                )
                if db.changesCount > 0 { try UserSettingsSyncSide.markUserSettingChanged(db, login: login, key: key) }
            } else {
                try db.execute(
                    sql: """
                        INSERT INTO settings (key, value, changedBy) VALUES (?, ?, ?)
                        ON CONFLICT (key) DO UPDATE SET value = excluded.value, changedAt = excluded.changedAt, changedBy = excluded.changedBy
                        WHERE value IS NOT excluded.value
                        """,
                    arguments: [key, value, author]
                )
            }
        }
        return value
    }

    /// The checks a value can pass only against this store (titles someone holds): for a value from a layer above
    /// it (command line, environment, settings file), which is checked without the store.
    public func check(_ key: String, _ value: String) async throws(NorthwindError) {
        let setting = try Setting.named(key)
        guard setting.rules.heldTitles else { return }
        try await read { db in try Self.checkHeldTitles(key, value, db) }
    }

    /// Manager titles that no one who can sign in holds would lock every manager out, with only the command line to
    /// recover: at least one title must be held by an employee with a sign-in (by any employee while nobody has one).
    static func checkHeldTitles(_ key: String, _ value: String, _ db: Database) throws {
        let titles = AccessPolicy.titles(value)
        let held = try String.fetchAll(
            db,
            sql: """
                SELECT DISTINCT e.title FROM employees e
                WHERE e.title IS NOT NULL
                  AND (EXISTS (SELECT 1 FROM credentials c WHERE c.employeeID = e.id) OR NOT EXISTS (SELECT 1 FROM credentials))
                ORDER BY e.title
                """
        )
        guard titles.isDisjoint(with: held) else { return }
        throw NorthwindError.invalid(
            key,
            "must name at least one title held by an employee who can sign in, or no one could manage the shop; "
                + "titles held now: \(held.isEmpty ? "none" : held.joined(separator: "; "))"
        )
    }

    /// Removes the stored value, so that the next layer (in the end the factory default) shows through. Removing
    /// what is not stored is no error.
    public func remove(_ key: String, user login: String? = nil) async throws(NorthwindError) {
        let setting = try Setting.named(key)
        try Self.checkWhere(setting, login: login)
        let login = login.map(Self.canonicalLogin)
        try await write { db in
            if setting.rules.heldTitles { try Self.checkHeldTitles(key, setting.defaultValue, db) }
            if let login {
                try Self.requireLogin(db, login)
                try db.execute(sql: "DELETE FROM user_settings WHERE login = ? AND key = ?", arguments: [login, key])
                if db.changesCount > 0 { try UserSettingsSyncSide.markUserSettingChanged(db, login: login, key: key) }
            } else {
                try db.execute(sql: "DELETE FROM settings WHERE key = ?", arguments: [key])
            }
        }
    }

    /// Stored values that break their setting's rule, as "settings: key …": what a restore refuses, since a value
    /// no Northwind stores (`;;;` for manager titles, a page size of 100000) would take effect at once. What depends
    /// on the machine or on later edits (a host that resolves here, titles someone still holds) is not checked: a
    /// backup is restored on a new machine too, and the serve command warns of those. Keys this version does not
    /// know are left alone: nothing reads them.
    public static func settingsViolations(_ db: Database) throws -> [String] {
        var found: [String] = []
        let rows =
            try Row.fetchAll(db, sql: "SELECT NULL AS login, key, value FROM settings ORDER BY key")
            + Row.fetchAll(db, sql: "SELECT login, key, value FROM user_settings ORDER BY login, key")
        for row in rows {
            let (login, key, value): (String?, String, String?) = (row["login"], row["key"], row["value"])
            guard let setting = Setting.byKey[key] else { continue }
            let place = login.map { "user \($0)'s settings" } ?? "settings"
            guard let value else {
                found.append("\(place): \(key) has no value")
                continue
            }
            do {
                _ = try setting.canonical(value, onThisMachine: false)
            } catch {
                found.append("\(place): \(error)")
            }
        }
        return found
    }

    static func storedSettings(_ db: Database, login: String?) throws -> [String: StoredSetting] {
        let rows =
            try login.map {
                try Row.fetchAll(db, sql: "SELECT key, value, changedAt, NULL AS changedBy FROM user_settings WHERE login = ?", arguments: [$0])
            } ?? Row.fetchAll(db, sql: "SELECT key, value, changedAt, changedBy FROM settings")
        var settings: [String: StoredSetting] = [:]
        for row in rows {
            let key: String = row["key"]
            settings[key] = StoredSetting(key: key, value: row["value"], changedAt: row["changedAt"], changedBy: row["changedBy"])
        }
        return settings
    }

    /// The change log's last entry: every write of settings moves it.
    static func changeLogPosition(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT ifnull(max(seq), 0) FROM change_log") ?? 0
    }

    /// Every user's stored values: `[login: [key: value]]`.
    static func everyUsersSettings(_ db: Database) throws -> [String: [String: String]] {
        var settings: [String: [String: String]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT login, key, value FROM user_settings") {
            settings[row["login"], default: [:]][row["key"]] = row["value"] as String
        }
        return settings
    }

    /// User keys are stored per user, the others per installation; a key the store cannot hold is refused.
    private static func checkWhere(_ setting: Setting, login: String?) throws(NorthwindError) {
        if setting.outsideStore {
            throw .invalid([
                .init(
                    setting.key,
                    "is never kept in the store (docs/settings.md says why): set it on the command line, in the environment or in the settings file"
                )
            ])
        }
        if setting.scope == .user, login == nil {
            throw .invalid([.init(setting.key, "is each user's own: name the user (--user LOGIN)")])
        }
        if setting.scope != .user, login != nil {
            throw .invalid([.init(setting.key, "is this installation's, not a user's: leave out the user")])
        }
    }

    private static func requireLogin(_ db: Database, _ login: String) throws {
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM credentials WHERE login = ?", arguments: [login]) == true else {
            throw NorthwindError.notFound(entity: "User", key: login)
        }
    }

    /// Logins match without regard to case (as signing in does); user settings keep them lowercased.
    static func canonicalLogin(_ login: String) -> String { login.lowercased() }
}
