import Foundation
import GRDB
import NorthwindStore
import SyncProtocol

/// Why a user's setting changed here without their changing it here, after `NSUbiquitousKeyValueStore`'s change
/// reasons.
public enum UserSettingChangeReason: String, Sendable, Codable {
    /// Another installation changed it, and this one heard.
    case serverChange
    /// It came with the first sync of this user's settings at this installation.
    case initialSync
    /// The user's private database is full: the value stays here and goes up once there is room.
    case quotaViolation

    /// How the settings page and `settings explain` say it.
    public var text: String {
        switch self {
        case .serverChange: "changed at another installation"
        case .initialSync: "brought from another installation by the first sync"
        case .quotaViolation: "not synced: the user's private database on the sync server is full"
        }
    }
}

/// A synced user setting's state at this installation.
public struct UserSettingSyncState: Sendable, Equatable {
    public var key: String
    /// Changed here and not yet taken by the sync server.
    public var pending: Bool
    public var reason: UserSettingChangeReason?
    public var reasonAt: Timestamp?
}

/// Per-user settings that follow the user: each key the catalogue marks `syncs` is one record in the user's private
/// database on the sync server (zone `settings`), and the write with the later sync clock wins everywhere. Secrets
/// never sync (the catalogue refuses a secret that syncs).
extension UserSettingsSyncSide {
    public static let userSettingsZone = "settings"

    static let userSettingRecordType = "UserSetting"

    /// Everyone who can sign in here, by their canonical (lowercased) login: whose settings follow them.
    public func syncedLogins() async throws(NorthwindError) -> [String] {
        try await read { db in try String.fetchAll(db, sql: "SELECT login FROM credentials ORDER BY login") }.map(ShopSettings.canonicalLogin)
    }

    /// Those whose changes wait to go up.
    public func loginsWithPending() async throws(NorthwindError) -> [String] {
        try await read { db in try String.fetchAll(db, sql: "SELECT DISTINCT login FROM user_setting_sync WHERE pending ORDER BY login") }
    }

    /// Notes, in the writer's transaction, that a user changed (or reset) a synced setting here.
    static func markUserSettingChanged(_ db: Database, login: String, key: String) throws {
        guard Setting.byKey[key]?.syncs == true else { return }
        let site = try ShopSync.membership(db)?.siteCode ?? "-"
        let last = try String.fetchOne(db, sql: "SELECT clock FROM user_setting_sync WHERE login = ? AND key = ?", arguments: [login, key])
        // Past the clock of the value it replaces, even one written by a computer whose clock runs ahead, so that an
        // edit made after another is never the older one.
        let lastMilliseconds = last.flatMap { Int64($0.prefix(15)) } ?? 0
        let clock = FieldClock(milliseconds: max(Timestamp.now.milliseconds, lastMilliseconds + 1), site: site)
        try db.execute(
            sql: """
                INSERT INTO user_setting_sync (login, key, clock, pending) VALUES (?, ?, ?, 1)
                ON CONFLICT (login, key) DO UPDATE SET clock = excluded.clock, pending = 1, reason = NULL, reasonAt = NULL
                """,
            arguments: [login, key, clock.text]
        )
    }

    /// The user's changes waiting to go up, as records for their private zone, each with the server's version tag
    /// when it has one (then it is an update).
    public func pending(login: String) async throws(NorthwindError) -> [SyncRecord] {
        let login = ShopSettings.canonicalLogin(login)
        return try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT s.key, s.clock, s.serverTag, u.value FROM user_setting_sync s
                    LEFT JOIN user_settings u ON u.login = s.login AND u.key = s.key
                    WHERE s.login = ? AND s.pending ORDER BY s.key
                    """,
                arguments: [login]
            ).filter { Setting.byKey[$0["key"] as String]?.syncs == true }.map { row in
                // No value is a reset: it syncs too (NULL removes the server's value), so the default shows everywhere.
                let value = (row["value"] as String?).map(FieldValue.string) ?? .null
                let fields: [String: FieldValue] = ["clock": .string(row["clock"]), "value": value]
                return SyncRecord(
                    recordName: row["key"],
                    recordType: Self.userSettingRecordType,
                    zoneID: ZoneID(Self.userSettingsZone),
                    recordChangeTag: row["serverTag"],
                    fields: fields
                )
            }
        }
    }

    /// Records that the server took `record` as sent: it is no longer pending, unless the user changed it again
    /// since it was read.
    public func acknowledge(login: String, saved record: SyncRecord) async throws(NorthwindError) {
        let login = ShopSettings.canonicalLogin(login)
        let clock = Self.clock(of: record)
        try await write { db in
            try db.execute(
                sql: "UPDATE user_setting_sync SET serverTag = ?, pending = (clock IS NOT ?) WHERE login = ? AND key = ?",
                arguments: [record.recordChangeTag, clock, login, record.recordName]
            )
        }
    }

    /// The server no longer has the record an update named: the next push creates it again.
    public func forgetTag(login: String, key: String) async throws(NorthwindError) {
        let login = ShopSettings.canonicalLogin(login)
        try await write { db in
            try db.execute(sql: "UPDATE user_setting_sync SET serverTag = NULL WHERE login = ? AND key = ?", arguments: [login, key])
        }
    }

    /// Applies the server's records of a user's settings: each one whose clock is later than this installation's
    /// replaces the value here (a record without a value resets it), and says why it came. An older one only
    /// teaches the server's version tag, so that this installation's newer value goes up over it. Records of keys
    /// that do not sync, or whose values break the catalogue's rules, are passed over. Saves `token` (when given)
    /// in the same transaction. Returns the keys whose values changed here.
    @discardableResult
    public func apply(
        login: String,
        records: [SyncRecord],
        token: String?,
        reason: UserSettingChangeReason
    ) async throws(NorthwindError) -> [String] {
        let login = ShopSettings.canonicalLogin(login)
        return try await write { db in
            var changed: [String] = []
            for record in records where !record.deleted {
                guard let setting = Setting.byKey[record.recordName], setting.syncs, let clock = Self.clock(of: record) else { continue }
                var value: String?
                if case .string(let text)? = record.fields["value"] {
                    guard let canonical = try? setting.canonical(text) else { continue }
                    value = canonical
                }
                let local = try String.fetchOne(
                    db,
                    sql: "SELECT clock FROM user_setting_sync WHERE login = ? AND key = ?",
                    arguments: [login, setting.key]
                )
                guard local.map({ clock > $0 }) ?? true else {
                    // Ours is as new or newer: it goes up, over the server's version.
                    try db.execute(
                        sql: "UPDATE user_setting_sync SET serverTag = ?, pending = (clock IS NOT ?) WHERE login = ? AND key = ?",
                        arguments: [record.recordChangeTag, clock, login, setting.key]
                    )
                    continue
                }
                if let value {
                    try db.execute(
                        sql: """
                            INSERT INTO user_settings (login, key, value) VALUES (?, ?, ?)
                            ON CONFLICT (login, key) DO UPDATE SET value = excluded.value, changedAt = excluded.changedAt
                            """,
                        arguments: [login, setting.key, value]
                    )
                } else {
                    try db.execute(sql: "DELETE FROM user_settings WHERE login = ? AND key = ?", arguments: [login, setting.key])
                }
                try db.execute(
                    sql: """
                        INSERT INTO user_setting_sync (login, key, clock, pending, serverTag, reason, reasonAt) VALUES (?, ?, ?, 0, ?, ?, ?)
                        ON CONFLICT (login, key) DO UPDATE SET clock = excluded.clock, pending = 0, serverTag = excluded.serverTag,
                          reason = excluded.reason, reasonAt = excluded.reasonAt
                        """,
                    arguments: [login, setting.key, clock, record.recordChangeTag, reason.rawValue, Timestamp.now]
                )
                changed.append(setting.key)
            }
            if let token {
                try db.execute(
                    sql: "INSERT INTO user_setting_tokens (login, token) VALUES (?, ?) ON CONFLICT (login) DO UPDATE SET token = excluded.token",
                    arguments: [login, token]
                )
            }
            return changed
        }
    }

    /// Where the last download of a user's settings ended; nil before the first.
    public func token(login: String) async throws(NorthwindError) -> String? {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT token FROM user_setting_tokens WHERE login = ?", arguments: [ShopSettings.canonicalLogin(login)])
        }
    }

    /// Forgets where the last download ended (the server purged what came after it): the next one starts over.
    public func resetToken(login: String) async throws(NorthwindError) {
        try await write { db in
            try db.execute(sql: "DELETE FROM user_setting_tokens WHERE login = ?", arguments: [ShopSettings.canonicalLogin(login)])
        }
    }

    /// The server refused the user's changes for their quota: they stay here, pending, and say why.
    public func markOverQuota(login: String) async throws(NorthwindError) {
        try await write { db in
            try db.execute(
                sql: "UPDATE user_setting_sync SET reason = ?, reasonAt = ? WHERE login = ? AND pending",
                arguments: [UserSettingChangeReason.quotaViolation.rawValue, Timestamp.now, ShopSettings.canonicalLogin(login)]
            )
        }
    }

    /// The record's sync clock, if it is one: a clock of any other form would sort after every real one and win
    /// for ever.
    private static func clock(of record: SyncRecord) -> String? {
        if case .string(let clock)? = record.fields["clock"], clock.wholeMatch(of: /[0-9]{15}\.[A-Za-z0-9_-]{1,64}/) != nil { return clock }
        return nil
    }
}

extension ShopSettings {
    /// The sync state of each of a user's synced settings that has one, by key.
    public func syncStates(login: String) async throws(NorthwindError) -> [String: UserSettingSyncState] {
        try await read { db in
            var states: [String: UserSettingSyncState] = [:]
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT key, pending, reason, reasonAt FROM user_setting_sync WHERE login = ?",
                arguments: [Self.canonicalLogin(login)]
            )
            for row in rows {
                let key: String = row["key"]
                states[key] = UserSettingSyncState(
                    key: key,
                    pending: row["pending"],
                    reason: (row["reason"] as String?).flatMap(UserSettingChangeReason.init(rawValue:)),
                    reasonAt: row["reasonAt"]
                )
            }
            return states
        }
    }
}
