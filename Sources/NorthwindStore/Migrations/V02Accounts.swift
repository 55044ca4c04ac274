import GRDB

extension Schema {
    /// Sign-in credentials and access tokens. Local to this store: they are never synced, and no secret is kept in
    /// the clear (bcrypt for passwords, SHA-256 for random tokens).
    static func createAccounts(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE credentials (
                  employeeID INTEGER PRIMARY KEY REFERENCES employees(id) ON DELETE CASCADE,
                  login TEXT NOT NULL UNIQUE COLLATE NOCASE,
                  passwordHash TEXT NOT NULL,
                  changedAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)));
                CREATE TABLE access_tokens (
                  tokenHash TEXT PRIMARY KEY,
                  employeeID INTEGER NOT NULL REFERENCES employees(id) ON DELETE CASCADE,
                  kind TEXT NOT NULL CHECK (kind IN ('session', 'api')),
                  csrfToken TEXT,
                  label TEXT,
                  createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                  expiresAt TEXT);
                CREATE INDEX access_tokens_employee ON access_tokens(employeeID);
                """
        )
    }
}
