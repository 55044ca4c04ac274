import Foundation

/// The reference page of every setting (`docs/settings.md`), made from the catalogue; a test keeps the committed
/// page equal to it (`northwind settings reference > docs/settings.md` writes it again).
public enum SettingsReference {
    public static func markdown() -> String {
        var lines = [
            "# Settings reference",
            "",
            "<!-- Made from the catalogue (Sources/Northwind/Settings/SettingsCatalogue.swift) by `northwind settings reference`; do not edit. -->",
            "",
            "Each setting is read from the first layer that has a valid value: the command line (`--setting KEY=VALUE`),",
            "the environment (`NORTHWIND_` and the key in capitals, words split by `_`: `server.port` is",
            "`NORTHWIND_SERVER_PORT`), the settings file (`$NORTHWIND_SETTINGS`, else `northwind/settings.json` in the",
            "config folder), this installation's stored values, the user's own values (user keys only), and the factory",
            "default. `northwind settings explain KEY` shows every layer. The settings file's JSON Schema is",
            "`northwind settings schema`.",
            "",
            "\"At once\" means without a restart: a running server reads the settings file again within a second of a",
            "change (a malformed file leaves the last good values in force, and says so), and stored values as soon as",
            "they change, from the settings page (`/settings`) or the CLI. Keys that follow the user go to each of the",
            "user's installations through their private database on the sync server: the later change wins, and at most",
            "1,024 keys and 1 MB per user are kept there.",
            "",
        ]
        for (group, title) in Setting.groups {
            let settings = Setting.all.filter { $0.group == group }
            guard !settings.isEmpty else { continue }
            lines += ["## \(title)", "", "| Key | Type | Default | Rules | Scope | Takes effect | Environment |", "|---|---|---|---|---|---|---|"]
            for setting in settings {
                let cells = [
                    "`\(setting.key)`<br>\(setting.title): \(setting.footer)",
                    setting.kind.name,
                    setting.defaultValue.isEmpty ? "(empty)" : "`\(setting.defaultValue)`",
                    rules(setting),
                    setting.scope.rawValue + (setting.syncs ? ", follows the user" : ""),
                    setting.apply == .live ? "at once" : "at restart",
                    "`\(environmentName(setting.key))`",
                ]
                lines.append("| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |")
            }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }

    /// Every key for the CLI's help, one per line: key, type, default and rules, then `(user)` for a user's own.
    public static func helpText() -> String {
        let width = Setting.all.map(\.key.count).max() ?? 0
        return Setting.all.map { setting in
            let rule = rules(setting).replacingOccurrences(of: "`", with: "")
            let facts =
                [setting.kind.name, "default " + (setting.defaultValue.isEmpty ? "empty" : setting.defaultValue)] + (rule.isEmpty ? [] : [rule])
            return setting.key.padding(toLength: width + 2, withPad: " ", startingAt: 0) + facts.joined(separator: "; ")
                + (setting.scope == .user ? " (user)" : "")
        }.joined(separator: "\n")
    }

    /// `server.secureCookies` as `NORTHWIND_SERVER_SECURE_COOKIES`, as swift-configuration's environment provider reads it.
    public static func environmentName(_ key: String) -> String {
        var name = "NORTHWIND"
        for component in key.split(separator: ".") {
            name += "_"
            var previous: Character?
            for character in component {
                if let previous, previous.isLowercase, character.isUppercase { name += "_" }
                name += character.uppercased()
                previous = character
            }
        }
        return name
    }

    private static func rules(_ setting: Setting) -> String {
        var rules: [String] = []
        if case .choice(let choices) = setting.kind {
            rules.append(choices.map { $0.value == $0.title ? "`\($0.value)`" : "`\($0.value)` (\($0.title))" }.joined(separator: ", "))
        }
        switch (setting.rules.minimum, setting.rules.maximum) {
        case let (minimum?, maximum?): rules.append("\(minimum) to \(maximum)")
        case let (minimum?, nil): rules.append("at least \(minimum)")
        case let (nil, maximum?): rules.append("at most \(maximum)")
        case (nil, nil): break
        }
        if let meaning = setting.rules.patternMeaning { rules.append(meaning) }
        if let length = setting.rules.maximumLength { rules.append("at most \(length) characters") }
        if setting.rules.host { rules.append("an IP address or a host name this machine resolves") }
        if setting.rules.heldTitles { rules.append("at least one title held by an employee who can sign in") }
        if setting.rules.documentNumberFormat { rules.append("must contain {counter} and {year}") }
        if setting.rules.taxRates { rules.append("each rate 0 to 100 %, with a name") }
        if setting.outsideStore { rules.append("not stored in the store") }
        return rules.isEmpty ? "" : rules.joined(separator: "; ")
    }
}
