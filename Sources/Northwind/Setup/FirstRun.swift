import Foundation
import GRDB
import HummingbirdBcrypt
import NorthwindStore

/// What a new machine becomes at its first run.
public enum MachineRole: String, Sendable, CaseIterable, Codable {
    /// Head office: the company's catalogue is kept here, and its own sync server runs beside it.
    case headOffice
    /// A shop that joins a company's sync server and downloads its catalogue.
    case shop
    /// A demo, filled with the demo data.
    case demo
}

/// What the owner types on the first-run page.
public struct FirstRunForm: Sendable, Equatable {
    public var firstName: String
    public var lastName: String
    public var login: String
    public var password: String
    public var siteName: String
    public var siteCode: String
    public var role: MachineRole?
    /// A shop's: the company's sync server, and the enrolment token head office gave.
    public var server: String
    public var token: String
    /// A shop's, when head office has a certificate authority of its own (a Northwind appliance): its SHA-256
    /// fingerprint, from head office's console.
    public var fingerprint: String

    public init(
        firstName: String = "",
        lastName: String = "",
        login: String = "",
        password: String = "",
        siteName: String = "",
        siteCode: String = "",
        role: MachineRole? = nil,
        server: String = "",
        token: String = "",
        fingerprint: String = ""
    ) {
        self.firstName = firstName
        self.lastName = lastName
        self.login = login
        self.password = password
        self.siteName = siteName
        self.siteCode = siteCode
        self.role = role
        self.server = server
        self.token = token
        self.fingerprint = fingerprint
    }
}

/// Where the first run stands.
public struct FirstRunState: Sendable, Equatable {
    public var pending: Bool
    /// The boot (Linux's `boot_id`) during which the first-run page may be reached from the LAN: the one that made the
    /// store, or the one `northwind setup reopen` ran in. Nil (a store without the record): never from the LAN.
    public var openBoot: String?
    public var siteName: String?
}

extension Setup {
    /// Whether the first run is still to do: nobody has finished it, and nobody can sign in (a store that already
    /// has a password, made with the CLI or by an earlier version, needs no first run).
    public func state() async throws(NorthwindError) -> FirstRunState {
        try await read { db in
            let done = try StoreMetadata.value(db, "firstRunCompletedAt") != nil
            let anyone = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM credentials)") ?? false
            return FirstRunState(
                pending: !done && !anyone,
                openBoot: try StoreMetadata.value(db, "firstRunOpenBoot"),
                siteName: try StoreMetadata.value(db, "siteName")
            )
        }
    }

    /// Opens the first-run page to the LAN for the boot `boot` (the store's making, or `northwind setup reopen` from
    /// the console after the first boot passed without it).
    public func open(boot: String) async throws(NorthwindError) {
        try await write { db in try StoreMetadata.setValue(db, "firstRunOpenBoot", boot) }
    }

    /// The checks of the form that need nothing but the form, each failure naming its field. Nothing is changed.
    public static func validate(_ form: FirstRunForm) throws(NorthwindError) {
        var problems: [NorthwindError.FieldError] = []
        func refuse(_ field: String, _ message: String) { problems.append(.init(field, message)) }
        if form.firstName.trimmed.isEmpty { refuse("firstName", "Give the manager's first name.") }
        if form.lastName.trimmed.isEmpty { refuse("lastName", "Give the manager's last name.") }
        if form.login.wholeMatch(of: /[a-z0-9][a-z0-9._-]{1,39}/) == nil {
            refuse("login", "A login is 2 to 40 lowercase letters, digits, '.', '_' or '-', such as anna.kowalska.")
        }
        if let weak = weakness(of: form.password, login: form.login, names: [form.firstName, form.lastName, form.siteName]) {
            refuse("password", weak)
        }
        if form.siteName.trimmed.isEmpty || form.siteName.count > 60 {
            refuse("siteName", "Name this site in 1 to 60 characters, such as Kraków shop.")
        }
        if form.siteCode.wholeMatch(of: /[A-Z0-9]{2,12}/) == nil {
            refuse("siteCode", "A site code is 2 to 12 capital letters or digits, such as KRK; it starts every order number made here.")
        }
        switch form.role {
        case nil: refuse("role", "Choose what this machine is: head office, a shop that joins a company, or a demo.")
        case .shop:
            if URL(string: form.server.trimmed).map({ ($0.scheme == "http" || $0.scheme == "https") && $0.host != nil }) != true {
                refuse("server", "Give head office's sync server as an address, such as https://northwind-hq.local/ or http://10.0.0.5:8444.")
            }
            if form.token.trimmed.isEmpty { refuse("token", "Paste the enrolment token head office made for this shop.") }
            if !form.fingerprint.trimmed.isEmpty {
                if CertificateFingerprint.normalised(form.fingerprint) == nil {
                    refuse("fingerprint", CertificateFingerprint.problem(form.fingerprint.trimmed))
                } else if URL(string: form.server.trimmed)?.scheme != "https" {
                    refuse(
                        "fingerprint",
                        "A certificate fingerprint is for an https:// address: give head office's https:// address, or leave this empty."
                    )
                }
            }
        case .headOffice, .demo: break
        }
        if !problems.isEmpty { throw .invalid(problems) }
    }

    /// Why a password is too weak, or nil. Twelve characters at least (NIST SP 800-63B allows 8; a back office
    /// reachable from a shop floor asks more), not one of the commonest, and not the login or a name on the form.
    public static func weakness(of password: String, login: String, names: [String]) -> String? {
        if password.count < 12 { return "A password needs at least 12 characters; a few words make a strong one." }
        let folded = password.lowercased()
        if Set(folded).count < 5 { return "This password repeats too few characters; choose one that is harder to guess." }
        if commonPasswords.contains(where: { folded.contains($0) }) { return "This password is among the most common ones; choose another." }
        for name in [login] + names where name.trimmed.count >= 3 && folded.contains(name.trimmed.lowercased()) {
            return "A password must not contain the login or a name from this form."
        }
        return nil
    }

    static let commonPasswords = [
        "password", "passw0rd", "123456", "qwerty", "northwind", "letmein", "welcome", "admin", "iloveyou", "abc123",
        "111111", "monkey", "dragon", "sunshine", "football", "changeme", "trustno1",
    ]

    /// Finishes the first run in one transaction: the site's name and code, the first manager (with `title`, one of
    /// the manager titles) and the password, and the mark that it is done. A store left half made by an earlier
    /// attempt cut short (a power cut while the demo data went in) is emptied first, unless it has joined a company
    /// (its data then came from head office) or `keepData` (the demo data just loaded) says to keep it.
    /// Returns the manager's employee id.
    public func complete(_ form: FirstRunForm, title: String, keepData: Bool = false) async throws(NorthwindError) -> Int64 {
        try Self.validate(form)
        let hash = await Accounts.offload { Bcrypt.hash(form.password, cost: Accounts.passwordCost) }
        let store = self.store
        return try await write { db in
            guard try StoreMetadata.value(db, "firstRunCompletedAt") == nil,
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM credentials)") == false
            else {
                throw NorthwindError.invalidState("The first run is done already; sign in instead.")
            }
            let joined = try ShopSync.membership(db) != nil
            // Only what an earlier attempt of the first run loaded is cleared; data put in some other way (an
            // import with the CLI) is kept.
            let leftovers = try StoreMetadata.value(db, "firstRunAttempt") != nil && !Store.isEmpty(db)
            if !joined && !keepData && leftovers { try store.deleteAllData(db) }
            // A joined shop's code is the one its enrolment gave; an empty store takes the one chosen here.
            let empty = try Store.isEmpty(db)
            if !joined, empty || keepData {
                try StoreMetadata.setSiteCode(db, form.siteCode)
            }
            var manager = Employee(firstName: form.firstName.trimmed, lastName: form.lastName.trimmed, title: title)
            manager.version = 1
            try manager.insert(db)
            guard let id = manager.id else { throw NorthwindError.storeUnavailable("The new manager was not given an id.") }
            if let owner = try Int64.fetchOne(db, sql: "SELECT employeeID FROM credentials WHERE login = ?", arguments: [form.login]) {
                throw NorthwindError.invalid("login", "The login \(form.login) belongs to employee \(owner).")
            }
            try db.execute(sql: "INSERT INTO credentials (employeeID, login, passwordHash) VALUES (?, ?, ?)", arguments: [id, form.login, hash])
            try StoreMetadata.setValue(db, "siteName", form.siteName.trimmed)
            try StoreMetadata.setValue(db, "machineRole", form.role?.rawValue)
            try StoreMetadata.setValue(db, "firstRunCompletedAt", Timestamp.now.description)
            return id
        }
    }

    /// Starts an attempt that fills the store (the demo data, or a company's after joining): what an earlier
    /// attempt cut short left is cleared first, and the attempt is noted, so that the next one may clear what this
    /// one leaves. A store that holds data the first run did not put there is refused: it is kept, not replaced.
    public func beginAttempt() async throws(NorthwindError) {
        let store = self.store
        try await write { db in
            guard try StoreMetadata.value(db, "firstRunCompletedAt") == nil, try ShopSync.membership(db) == nil else {
                throw NorthwindError.invalidState("Only a first run that did not finish, on a store that has not joined a company, starts again.")
            }
            if try !Store.isEmpty(db) {
                guard try StoreMetadata.value(db, "firstRunAttempt") != nil else {
                    throw NorthwindError.invalid(
                        "role",
                        "This store already holds data (put in before the first run): choose head office to keep it, or start with an empty store."
                    )
                }
                try store.deleteAllData(db)
            }
            try StoreMetadata.setValue(db, "firstRunAttempt", Timestamp.now.description)
        }
    }

    /// Gives an empty store the site code chosen on the first-run page, before it joins a company with it (a token
    /// that names a site overrides it when the store joins).
    public func setSiteCode(_ code: String) async throws(NorthwindError) {
        guard code.wholeMatch(of: /[A-Z0-9]{2,12}/) != nil else {
            throw .invalid("siteCode", "A site code is 2 to 12 capital letters or digits, such as KRK.")
        }
        try await write { db in
            guard try Store.isEmpty(db), try ShopSync.membership(db) == nil else {
                throw NorthwindError.invalidState("Only an empty store that has not joined a company takes a new site code.")
            }
            try StoreMetadata.setSiteCode(db, code)
        }
    }

    /// What the first run made this machine; nil on a store set up without it.
    public func machineRole() async throws(NorthwindError) -> MachineRole? {
        try await read { db in try StoreMetadata.value(db, "machineRole").flatMap(MachineRole.init(rawValue:)) }
    }

    /// The site's name, as the first run set it.
    public func siteName() async throws(NorthwindError) -> String? {
        try await read { db in try StoreMetadata.value(db, "siteName") }
    }
}

extension String {
    fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
