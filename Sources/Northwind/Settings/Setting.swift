import Foundation
import NorthwindStore

/// One setting, declared once: the catalogue (`Setting.all`) is the only place a setting's default, type, rules and
/// texts are written, and the factory defaults, the CLI's help, the settings file's JSON Schema and the reference
/// page in the docs are all made from it, so that no two copies drift apart.
public struct Setting: Sendable, Identifiable, Equatable {
    /// What a setting holds. Every value is kept and shown as text in one canonical form (`true`, `8080`, `12.50`).
    public enum Kind: Sendable, Equatable {
        case bool
        case int
        /// Exact to the cent: money and rates, never binary floating point.
        case decimal
        case string
        /// One of a fixed list of values, each with the title people read.
        case choice([Choice])
        /// Written, never shown or logged, and never synced.
        case secret

        public var name: String {
            switch self {
            case .bool: "bool"
            case .int: "int"
            case .decimal: "decimal"
            case .string: "string"
            case .choice: "choice"
            case .secret: "secret"
            }
        }
    }

    public struct Choice: Sendable, Equatable {
        public var value: String
        public var title: String
        public init(_ value: String, _ title: String) {
            self.value = value
            self.title = title
        }
    }

    /// How the settings page shows it (after Settings.bundle's specifiers).
    public enum Control: Sendable, Equatable {
        case toggle
        case text
        case choice
        case slider(minimum: Int, maximum: Int, step: Int)
        /// Shown, never edited on the page: set by the command line, the environment or the settings file only.
        case readOnly
    }

    /// Whose value it is. `system` and `shop` values are this installation's; `user` values are each employee's.
    public enum Scope: String, Sendable, Equatable, CaseIterable {
        case system, shop, user
    }

    /// When a change takes effect.
    public enum Apply: String, Sendable, Equatable {
        /// Within a second, without a restart.
        case live
        /// At the next start of `northwind serve`.
        case restart
    }

    /// What a value must satisfy, beyond its kind.
    public struct Rules: Sendable, Equatable {
        public var minimum: Decimal?
        public var maximum: Decimal?
        /// A regular expression the whole value must match.
        public var pattern: String?
        /// What the pattern means, for the error message.
        public var patternMeaning: String?
        public var maximumLength: Int?
        /// The value names a host this machine can listen on: an IP address, or a name that resolves.
        public var host: Bool
        /// The value lists job titles, separated by semicolons: at least one, and (where the store is at hand) at
        /// least one held by an employee who can sign in.
        public var heldTitles: Bool
        /// A document number's format: `{counter}` and `{year}`, with `{site}` and plain characters.
        public var documentNumberFormat: Bool
        /// Tax rates with their names: `23 Standard; 8 Reduced`.
        public var taxRates: Bool
        public init(
            minimum: Decimal? = nil,
            maximum: Decimal? = nil,
            pattern: String? = nil,
            patternMeaning: String? = nil,
            maximumLength: Int? = nil,
            host: Bool = false,
            heldTitles: Bool = false,
            documentNumberFormat: Bool = false,
            taxRates: Bool = false
        ) {
            self.minimum = minimum
            self.maximum = maximum
            self.pattern = pattern
            self.patternMeaning = patternMeaning
            self.maximumLength = maximumLength
            self.host = host
            self.heldTitles = heldTitles
            self.documentNumberFormat = documentNumberFormat
            self.taxRates = taxRates
        }
    }

    /// Dotted, such as `orders.defaultShipper`: the group, then the name.
    public let key: String
    public let kind: Kind
    /// The factory default, in canonical form.
    public let defaultValue: String
    public let title: String
    public let footer: String
    public let group: String
    public let control: Control
    public let rules: Rules
    public let scope: Scope
    public let apply: Apply
    /// Follows the user between installations (user keys only; never a secret).
    public let syncs: Bool
    /// Kept only in the command line, the environment or the settings file: the store cannot hold it (its own path).
    public let outsideStore: Bool

    public var id: String { key }

    init(
        _ key: String,
        _ kind: Kind,
        default defaultValue: String,
        title: String,
        footer: String,
        control: Control? = nil,
        rules: Rules = Rules(),
        scope: Scope,
        apply: Apply,
        syncs: Bool = false,
        outsideStore: Bool = false
    ) {
        precondition(!syncs || (scope == .user && kind != .secret), "only user keys that are not secrets sync: \(key)")
        self.key = key
        self.kind = kind
        self.defaultValue = defaultValue
        self.title = title
        self.footer = footer
        self.group = String(key.prefix { $0 != "." })
        self.control =
            control
            ?? {
                switch kind {
                case .bool: .toggle
                case .choice: .choice
                default: .text
                }
            }()
        self.rules = rules
        self.scope = scope
        self.apply = apply
        self.syncs = syncs
        self.outsideStore = outsideStore
    }

    /// The setting declared under `key`, or a `notFound` error that says how to list them.
    public static func named(_ key: String) throws(NorthwindError) -> Setting {
        guard let setting = byKey[key] else {
            throw .notFound(entity: "Setting", key: "\(key) (`northwind settings list` shows every key)")
        }
        return setting
    }

    public static let byKey = Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0) })

    /// The groups in the order the page and the docs show them, with their titles.
    public static let groups: [(key: String, title: String)] = [
        ("server", "Web server"),
        ("setup", "First run"),
        ("store", "Store"),
        ("log", "Logging"),
        ("sync", "Sync"),
        ("backup", "Backups"),
        ("stock", "Stock"),
        ("purchasing", "Purchasing"),
        ("orders", "Orders"),
        ("invoices", "Invoices"),
        ("tax", "Tax"),
        ("documents", "Documents"),
        ("pages", "Pages"),
        ("session", "Sign-in"),
        ("display", "Display (your own)"),
    ]
}

extension Setting {
    /// The canonical text of `text` for this setting, or an error naming the key and the rule it breaks. Bools take
    /// true/false, yes/no, on/off and 1/0; decimals take a point (`12.5` becomes `12.50` for money).
    /// `onThisMachine` false leaves out what depends on the machine (whether a host name resolves here): what a
    /// restore checks, for a backup that may be restored on another machine.
    public func canonical(_ text: String, onThisMachine: Bool = true) throws(NorthwindError) -> String {
        // The store's text ends at a NUL: a value holding one would be kept cut short.
        if text.unicodeScalars.contains("\u{0}") { throw invalid("must not hold a NUL character (U+0000)") }
        let value = text.trimmingCharacters(in: .whitespaces)
        let canonical: String
        switch kind {
        case .bool:
            switch value.lowercased() {
            case "true", "yes", "on", "1": canonical = "true"
            case "false", "no", "off", "0": canonical = "false"
            default: throw invalid("must be true or false, not '\(text)'")
            }
        case .int:
            guard let number = Int(value) else { throw invalid("must be a whole number\(rangeText), not '\(text)'") }
            try check(Decimal(number))
            canonical = String(number)
        case .decimal:
            guard value.wholeMatch(of: /-?[0-9]{1,12}(\.[0-9]{1,2})?/) != nil,
                let number = Decimal(string: value, locale: Locale(identifier: "en_US_POSIX"))
            else { throw invalid("must be a number with at most two decimals\(rangeText), such as 12.50, not '\(text)'") }
            try check(number)
            canonical = Self.twoDecimals(number)
        case .string, .secret:
            canonical = value
        case .choice(let choices):
            guard choices.contains(where: { $0.value == value }) else {
                throw invalid("must be one of \(choices.map(\.value).joined(separator: ", ")), not '\(text)'")
            }
            canonical = value
        }
        if let maximumLength = rules.maximumLength, canonical.count > maximumLength {
            throw invalid("must be at most \(maximumLength) characters")
        }
        if let pattern = rules.pattern, let regex = try? Regex(pattern), canonical.wholeMatch(of: regex) == nil {
            throw invalid("must be \(rules.patternMeaning ?? "of the form \(pattern)"), not '\(text)'")
        }
        if rules.host, onThisMachine ? !Self.isListenable(canonical) : !Self.isHostText(canonical) {
            throw invalid(
                "must be an IP address (127.0.0.1, 0.0.0.0, ::1) or a host name this machine resolves, not '\(text)'"
            )
        }
        if rules.heldTitles, AccessPolicy.titles(canonical).isEmpty {
            throw invalid("must name at least one job title (titles are separated by semicolons), not '\(text)'")
        }
        if rules.documentNumberFormat, let problem = NumberFormat.problem(canonical) { throw invalid(problem) }
        if rules.taxRates, let problem = TaxRates.problem(canonical) { throw invalid(problem) }
        return canonical
    }

    /// An IP address, or a name that resolves here: what a server can bind to. A value that is neither would stop
    /// the next start.
    static func isListenable(_ host: String) -> Bool {
        guard isHostText(host) else { return false }
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1 { return true }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        defer { if let found { freeaddrinfo(found) } }
        return getaddrinfo(host, nil, &hints, &found) == 0 && found != nil
    }

    /// Text that could name a host anywhere: printable ASCII without spaces.
    static func isHostText(_ host: String) -> Bool {
        !host.isEmpty && host.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
    }

    /// How a value is shown: a secret never is.
    public func display(_ canonical: String) -> String {
        kind == .secret ? (canonical.isEmpty ? "" : "(set)") : canonical
    }

    private func check(_ number: Decimal) throws(NorthwindError) {
        if let minimum = rules.minimum, number < minimum { throw invalid("must be at least \(minimum)") }
        if let maximum = rules.maximum, number > maximum { throw invalid("must be at most \(maximum)") }
    }

    private var rangeText: String {
        switch (rules.minimum, rules.maximum) {
        case let (minimum?, maximum?): " from \(minimum) to \(maximum)"
        case let (minimum?, nil): " of at least \(minimum)"
        case let (nil, maximum?): " of at most \(maximum)"
        case (nil, nil): ""
        }
    }

    private func invalid(_ rule: String) -> NorthwindError {
        .invalid([.init(key, rule)])
    }

    private static func twoDecimals(_ number: Decimal) -> String {
        var value = number
        var rounded = Decimal()
        NSDecimalRound(&rounded, &value, 2, .plain)
        let text = NSDecimalNumber(decimal: rounded).stringValue
        guard let point = text.firstIndex(of: ".") else { return text + ".00" }
        let decimals = text.distance(from: point, to: text.endIndex) - 1
        return decimals == 1 ? text + "0" : text
    }
}
