import ArgumentParser
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

/// Where this run's settings come from besides the store: `--setting KEY=VALUE`, the environment and the file.
struct SettingsOptions: ParsableArguments {
    @Option(name: .customLong("setting"), help: "KEY=VALUE: a setting for this run, above every other layer (repeatable).")
    var assignments: [String] = []

    @Option(name: .customLong("settings-file"), help: "The settings file (default: $NORTHWIND_SETTINGS, else ~/.config/northwind/settings.json).")
    var file: String?

    /// The layers above the store; `commandLine` adds what a command's own options set (`--store`).
    func sources(commandLine extra: [String: String] = [:]) throws -> SettingsSources {
        try Self.sources(assignments: assignments, file: file, commandLine: extra)
    }

    /// The layers above the store from `--setting` assignments, a settings file (nil: the default one), the
    /// environment, and what a command's own options set.
    static func sources(assignments: [String] = [], file: String? = nil, commandLine extra: [String: String] = [:]) throws -> SettingsSources {
        var commandLine: [String: String] = [:]
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ValidationError("--setting takes KEY=VALUE, such as --setting server.port=8081, not '\(assignment)'.")
            }
            commandLine[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        for key in commandLine.keys where (try? Setting.named(key)) == nil {
            throw ValidationError("--setting names no setting '\(key)': `northwind settings list` shows every key.")
        }
        commandLine.merge(extra) { _, new in new }
        let environment = ProcessInfo.processInfo.environment
        return SettingsSources(
            commandLine: commandLine,
            environment: environment,
            file: file ?? SettingsSources.defaultFile(environment: environment)
        )
    }

    /// The store the settings name, opened, and the settings over it (`StoreOptions.open`); `commandLine` adds what a
    /// command's own options set.
    func open(_ storeOptions: StoreOptions, commandLine: [String: String] = [:]) async throws -> (Backoffice, Settings) {
        try await storeOptions.open(sources(commandLine: commandLine))
    }
}

struct SettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings",
        abstract: "Read and change settings: this installation's, and each user's own.",
        discussion: """
            A setting's value comes from the first layer that has a valid one: the command line \
            (--setting KEY=VALUE), the environment (NORTHWIND_SERVER_PORT for server.port), the settings file, \
            this installation's stored values (`settings set`), the user's own (`settings set --user LOGIN`), and \
            the factory default. `settings explain KEY` shows every layer; docs/settings.md lists every key.
            """,
        subcommands: [List.self, Get.self, SetValue.self, Unset.self, Explain.self, Schema.self, Reference.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every setting, with its value and where it comes from.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var settingsOptions: SettingsOptions
        @OptionGroup var output: OutputOptions
        @Option(help: "Also list this user's own settings.") var user: String?

        func run() async throws {
            let (_, settings) = try await settingsOptions.open(storeOptions)
            let values = settings.all(user: user)
            if output.json { return try printJSON(values) }
            let width = values.map(\.key.count).max() ?? 0
            let valueWidth = min(40, values.map(\.value.count).max() ?? 0)
            for value in values {
                let shown = value.value.isEmpty ? "(empty)" : value.value
                print(
                    value.key.padding(toLength: width + 2, withPad: " ", startingAt: 0)
                        + shown.padding(toLength: max(valueWidth, shown.count) + 2, withPad: " ", startingAt: 0) + value.origin.rawValue
                )
            }
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A setting's value, as it stands.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var settingsOptions: SettingsOptions
        @Argument(help: "The setting's key, e.g. server.port.") var key: String
        @Option(help: "For a user key: whose.") var user: String?

        func run() async throws {
            let (_, settings) = try await settingsOptions.open(storeOptions)
            print(try settings.value(key, user: user).value)
        }
    }

    struct SetValue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Store a value at this installation, or for a user (--user).",
            discussion: "The value is checked against the setting's rules first. A running server sees the change within a second.\n\n"
                + SettingsReference.helpText()
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var settingsOptions: SettingsOptions
        @Argument(help: "The setting's key, e.g. pages.pageSize.") var key: String
        @Argument(help: "The new value; - reads it from standard input, which keeps a secret out of the process list and the shell's history.")
        var value: String
        @Option(help: "For a user key: whose.") var user: String?

        func run() async throws {
            let (backoffice, settings) = try await settingsOptions.open(storeOptions)
            var value = value
            if value == "-" {
                guard let line = readLine(strippingNewline: true) else { throw ValidationError("No value on standard input.") }
                value = line
            }
            let stored = try await backoffice.settings.set(key, value, user: user, by: "cli")
            try await settings.reload(from: backoffice)
            let setting = try Setting.named(key)
            print("\(key) = \(setting.display(stored)), stored \(user.map { "for \($0)" } ?? "at this installation").")
            try noteShadow(settings, key: key, user: user)
        }
    }

    struct Unset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove the stored value, so that the next layer's shows through (reset to default)."
        )
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var settingsOptions: SettingsOptions
        @Argument(help: "The setting's key.") var key: String
        @Option(help: "For a user key: whose.") var user: String?

        func run() async throws {
            let (backoffice, settings) = try await settingsOptions.open(storeOptions)
            try await backoffice.settings.remove(key, user: user)
            try await settings.reload(from: backoffice)
            let now = try settings.value(key, user: user)
            print("\(key) = \(now.value.isEmpty ? "(empty)" : now.value), from the \(now.origin.rawValue).")
        }
    }

    struct Explain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every layer's value for a setting, and which one wins.")
        @OptionGroup var storeOptions: StoreOptions
        @OptionGroup var settingsOptions: SettingsOptions
        @OptionGroup var output: OutputOptions
        @Argument(help: "The setting's key.") var key: String
        @Option(help: "For a user key: whose.") var user: String?

        func run() async throws {
            let (backoffice, settings) = try await settingsOptions.open(storeOptions)
            let layers = try settings.explain(key, user: user)
            if output.json { return try printJSON(layers) }
            let setting = try Setting.named(key)
            print("\(setting.key): \(setting.title). \(setting.footer)")
            print("Type \(setting.kind.name), \(setting.scope.rawValue) scope, takes effect \(setting.apply == .live ? "at once" : "at restart").")
            let width = SettingOrigin.allCases.map(\.rawValue.count).max() ?? 0
            for layer in layers {
                let value = layer.value.map { $0.isEmpty ? "(empty)" : $0 } ?? "—"
                let line = layer.origin.rawValue.padding(toLength: width + 2, withPad: " ", startingAt: 0) + value + (layer.wins ? "   ← wins" : "")
                print(line + (layer.problem.map { "   (ignored: \($0))" } ?? ""))
            }
            if let user, setting.syncs, let state = try await backoffice.settings.syncStates(login: user)[key] {
                if let reason = state.reason {
                    print("The user's value was \(reason.text)\(state.reasonAt.map { " (\($0))" } ?? "").")
                }
                if state.pending { print("Changed here; it goes to the user's other installations at the next sync.") }
            }
        }
    }

    struct Schema: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the JSON Schema of the settings file.")
        func run() { print(SettingsSchema.json()) }
    }

    struct Reference: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the reference of every setting, as Markdown (docs/settings.md).")
        func run() { print(SettingsReference.markdown(), terminator: "") }
    }
}

/// Says when a layer above the store hides the value just stored, so that nobody wonders why it does nothing.
private func noteShadow(_ settings: Settings, key: String, user: String?) throws {
    let now = try settings.value(key, user: user)
    if now.origin.isOverride {
        print("Note: the \(now.origin.rawValue) sets \(key) to \(now.value), which wins over the stored value.")
    }
}
