import GRDB

extension Schema {
    static func v15UserSettingsSync(_ db: Database) throws {
        // Each synced user setting's write clock (the sync clock: milliseconds and site, as sortable text), whether
        // it still has to go up, the server's version tag, and why its value came (a server change, the initial
        // sync, or a quota violation that kept it here). A reset stays as a row, so that it syncs too.
        try db.execute(
            sql: """
                CREATE TABLE user_setting_sync (
                  login TEXT NOT NULL,
                  key TEXT NOT NULL,
                  clock TEXT NOT NULL,
                  pending BOOLEAN NOT NULL DEFAULT 1,
                  serverTag TEXT,
                  reason TEXT,
                  reasonAt TEXT,
                  PRIMARY KEY (login, key)
                ) WITHOUT ROWID;
                CREATE TABLE user_setting_tokens (
                  login TEXT PRIMARY KEY NOT NULL,
                  token TEXT
                ) WITHOUT ROWID;
                -- Values stored before they synced go up (those of keys that sync), with the oldest clock: a value
                -- already on the server wins.
                INSERT INTO user_setting_sync (login, key, clock, pending)
                  SELECT login, key, '000000000000000.-', 1 FROM user_settings;
                """
        )
    }
}
