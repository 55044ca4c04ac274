import Crypto
import Foundation
import GRDB
import HummingbirdBcrypt
import NorthwindStore

/// Who is signed in, as the web app and the API see them.
public struct SignedIn: Sendable, Equatable {
    public var employee: Employee
    public var login: String
    /// The token that authenticated this request: a browser session, or an API bearer token.
    public var kind: AccessTokenKind
    /// Forms of a browser session must echo this; API tokens have none, as browsers never send them by themselves.
    public var csrfToken: String?

    public var employeeID: Int64 { employee.id ?? 0 }
    public var displayName: String { employee.fullName }
}

public enum AccessTokenKind: String, Sendable, Codable {
    case session, api
}

/// Which job titles count as managers: only they may create, edit or delete products, categories and suppliers.
public struct AccessPolicy: Sendable {
    public var managerTitles: Set<String>
    /// The factory default of `session.managerTitles`.
    public static let defaultManagerTitles = titles(Setting.byKey["session.managerTitles"]?.defaultValue ?? "")

    /// The titles a `session.managerTitles` value names: separated by semicolons, since titles hold commas.
    public static func titles(_ setting: String) -> Set<String> {
        Set(setting.split(separator: ";").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty })
    }

    public init(managerTitles: Set<String> = AccessPolicy.defaultManagerTitles) {
        self.managerTitles = managerTitles
    }

    public func isManager(_ employee: Employee) -> Bool {
        guard let title = employee.title else { return false }
        return managerTitles.contains(title)
    }
}

/// A demo sign-in, printed once when a server first starts on a store with no passwords.
public struct DemoCredential: Sendable {
    public var login: String
    public var password: String
    public var employeeName: String
    public var title: String?
}

extension Accounts {
    /// bcrypt's cost factor: 2^12 rounds take about a quarter of a second, which slows guessing without hurting a
    /// person signing in.
    public static let passwordCost: UInt8 = 12

    /// Sets (or replaces) an employee's password. The login defaults to the one already set, else
    /// `firstname.lastname` in lower-case ASCII. Returns the login. Existing sessions of the employee end.
    public func setPassword(
        employeeID: Int64,
        password: String,
        login: String? = nil,
        cost: UInt8 = Accounts.passwordCost
    ) async throws(NorthwindError) -> String {
        guard password.count >= 8 else {
            throw .invalid("password", "A password needs at least 8 characters.")
        }
        if let login, login.trimmingCharacters(in: .whitespaces).isEmpty || login.contains(" ") {
            throw .invalid("login", "A login cannot be empty or contain spaces.")
        }
        let hash = await Self.offload { Bcrypt.hash(password, cost: cost) }
        return try await write { db in
            guard let employee = try Employee.fetchOne(db, key: employeeID) else {
                throw NorthwindError.notFound(entity: "employee", key: "\(employeeID)")
            }
            let existing = try String.fetchOne(
                db,
                sql: "SELECT login FROM credentials WHERE employeeID = ?",
                arguments: [employeeID]
            )
            let chosen = login ?? existing ?? Self.defaultLogin(employee)
            if let owner = try Int64.fetchOne(
                db,
                sql: "SELECT employeeID FROM credentials WHERE login = ?",
                arguments: [chosen]
            ), owner != employeeID {
                throw NorthwindError.invalid("login", "The login \(chosen) belongs to employee \(owner).")
            }
            try db.execute(
                sql: """
                    INSERT INTO credentials (employeeID, login, passwordHash) VALUES (?, ?, ?)
                    ON CONFLICT (employeeID) DO UPDATE SET login = excluded.login, passwordHash = excluded.passwordHash,
                      changedAt = \(Timestamp.sqlNow)
                    """,
                arguments: [employeeID, chosen, hash]
            )
            try db.execute(
                sql: "DELETE FROM access_tokens WHERE employeeID = ? AND kind = 'session'",
                arguments: [employeeID]
            )
            return chosen
        }
    }

    /// Checks a login and password and opens a browser session. The message never says which of the two was wrong.
    public func signIn(login: String, password: String, lifetimeHours: Int = 168) async throws(NorthwindError) -> (token: String, SignedIn) {
        let refused = NorthwindError.invalid("password", "That login and password do not match.")
        let credential = try quickRead { db -> (employeeID: Int64, hash: String)? in
            try Row.fetchOne(
                db,
                sql: "SELECT employeeID, passwordHash FROM credentials WHERE login = ?",
                arguments: [login.trimmingCharacters(in: .whitespaces)]
            ).map { row in (row["employeeID"], row["passwordHash"]) }
        }
        guard let (employeeID, hash) = credential else {
            // Spend the same time as a real check, so timing does not reveal which logins exist.
            _ = await Self.offload { Bcrypt.verify(password, hash: Self.dummyHash) }
            throw refused
        }
        guard await Self.offload({ Bcrypt.verify(password, hash: hash) }) else { throw refused }
        let token = Self.randomToken()
        let csrf = Self.randomToken()
        let now = Timestamp.now
        let expires = now.adding(seconds: Int64(max(1, lifetimeHours)) * 3600)
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO access_tokens (tokenHash, employeeID, kind, csrfToken, expiresAt)
                    VALUES (?, ?, 'session', ?, ?)
                    """,
                arguments: [Self.tokenHash(token), employeeID, csrf, expires]
            )
            // Expired sessions are swept here rather than by a timer: sign-ins are rare and cheap to piggyback.
            try db.execute(
                sql: "DELETE FROM access_tokens WHERE expiresAt IS NOT NULL AND expiresAt < ?",
                arguments: [now]
            )
        }
        guard let signedIn = try authenticate(token: token) else { throw refused }
        return (token, signedIn)
    }

    /// Makes a bearer token for API clients. The token is shown once; only its hash is kept.
    public func issueAPIToken(employeeID: Int64, label: String? = nil) async throws(NorthwindError) -> String {
        let token = Self.randomToken()
        try await write { db in
            guard try Employee.exists(db, key: employeeID) else {
                throw NorthwindError.notFound(entity: "employee", key: "\(employeeID)")
            }
            try db.execute(
                sql: "INSERT INTO access_tokens (tokenHash, employeeID, kind, label) VALUES (?, ?, 'api', ?)",
                arguments: [Self.tokenHash(token), employeeID, label]
            )
        }
        return token
    }

    /// The employee a session or API token belongs to, or nil when the token is unknown or expired.
    ///
    /// Every web request calls this, so it is one cached statement on the hot-path readers: no transaction, no
    /// query building. Revoking a token takes effect on the next request.
    public func authenticate(token: String, kind: AccessTokenKind? = nil) throws(NorthwindError) -> SignedIn? {
        guard !token.isEmpty, token.count < 200 else { return nil }
        return try quickRead { db -> SignedIn? in
            // The employee's columns come first because `Employee(row:)` decodes by position.
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT e.*, t.kind AS tokenKind, t.csrfToken AS tokenCSRF, c.login AS tokenLogin
                            FROM access_tokens t
                            JOIN employees e ON e.id = t.employeeID
                            LEFT JOIN credentials c ON c.employeeID = t.employeeID
                            WHERE t.tokenHash = ? AND (t.expiresAt IS NULL OR t.expiresAt >= ?)
                            """
                    ),
                    arguments: [Self.tokenHash(token), Timestamp.now]
                )
            else { return nil }
            let tokenKind = AccessTokenKind(rawValue: row["tokenKind"]) ?? .api
            if let kind, kind != tokenKind { return nil }
            let employee = try Employee(row: row)
            return SignedIn(
                employee: employee,
                login: row["tokenLogin"] ?? Self.defaultLogin(employee),
                kind: tokenKind,
                csrfToken: row["tokenCSRF"]
            )
        }
    }

    /// Ends a session (or revokes an API token).
    public func signOut(token: String) async throws(NorthwindError) {
        try await write { db in
            try db.execute(sql: "DELETE FROM access_tokens WHERE tokenHash = ?", arguments: [Self.tokenHash(token)])
        }
    }

    /// The login of each employee who can sign in.
    public func logins() async throws(NorthwindError) -> [Int64: String] {
        try await read { db in
            Dictionary(
                uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT employeeID, login FROM credentials")
                    .map { ($0["employeeID"] as Int64, $0["login"] as String) }
            )
        }
    }

    /// On a store where nobody can sign in yet, gives one manager and one sales representative a random password,
    /// and returns them to be shown once. Returns nothing when any password is already set.
    public func provisionDemoCredentials(
        policy: AccessPolicy = AccessPolicy(),
        cost: UInt8 = Accounts.passwordCost
    ) async throws(NorthwindError) -> [DemoCredential] {
        let employees = try await read { db -> [Employee]? in
            guard try Int.fetchOne(db, sql: "SELECT count(*) FROM credentials") == 0 else { return nil }
            return try Employee.order(Column("id")).fetchAll(db)
        }
        guard let employees else { return [] }
        var chosen: [Employee] = []
        if let manager = employees.first(where: { policy.isManager($0) }) { chosen.append(manager) }
        if let other = employees.first(where: { !policy.isManager($0) }) { chosen.append(other) }
        var result: [DemoCredential] = []
        for employee in chosen {
            guard let id = employee.id else { continue }
            let password = Self.randomPassword()
            let login = try await setPassword(employeeID: id, password: password, cost: cost)
            result.append(
                DemoCredential(
                    login: login,
                    password: password,
                    employeeName: employee.fullName,
                    title: employee.title
                )
            )
        }
        return result
    }

    // MARK: Helpers

    static func defaultLogin(_ employee: Employee) -> String {
        let folded = "\(employee.firstName).\(employee.lastName)"
            .folding(options: [.diacriticInsensitive, .caseInsensitive], locale: nil).lowercased()
        return String(folded.unicodeScalars.filter { $0.isASCII && ($0 == "." || CharacterSet.alphanumerics.contains($0)) })
    }

    /// `byteCount` random bytes as URL-safe base64: session and API tokens, CSRF and sign-in form tokens.
    public static func randomToken(byteCount: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<byteCount).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Twelve characters from an alphabet without look-alikes (no 0/O, 1/l/I).
    static func randomPassword() -> String {
        let alphabet = Array("abcdefghjkmnpqrstuvwxyzABCDEFGHJKMNPQRSTUVWXYZ23456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<12).map { _ in alphabet.randomElement(using: &generator)! })
    }

    static func tokenHash(_ token: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var hex = [UInt8]()
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: Data(token.utf8)) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// A valid bcrypt hash of nothing anyone can type, for constant-time refusals.
    static let dummyHash = "$2b$12$C6UzMDM.H6dfI/f/IKcEeO5Rp9bPo3Na0LTHvh5M8ZFxZJKbj8DgC"

    /// bcrypt takes a quarter of a second on purpose; keep it off the cooperative thread pool.
    static func offload<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}
