import Foundation
import Northwind
import Testing

@testable import NorthwindTestSupport

/// Python's jsonschema (Debian's python3-jsonschema), to check the settings file's schema with a validator that is
/// not ours. CI sets NORTHWIND_E2E=require, so that a missing one fails the run instead of skipping the test.
enum JSONSchemaSupport {
    static let installed = (try? ChildProcess.run("/usr/bin/python3", ["-c", "import jsonschema"]))?.0.status == 0
    static let enabled = installed || ProcessInfo.processInfo.environment["NORTHWIND_E2E"] == "require"
    static let skipMessage = "needs Python's jsonschema (apt-get install python3-jsonschema)"
}

@Suite("Settings on the command line", .serialized)
struct SettingsCommandTests {
    /// A fresh store's path, and an environment with no settings file of the user's own in the way.
    private func fixture() throws -> (TemporaryStore, [String], [String: String]) {
        let store = try TemporaryStore()
        let environment = ["NORTHWIND_SETTINGS": store.directory.appendingPathComponent("none.json").path]
        return (store, ["--store", store.path], environment)
    }

    @Test func theHelpOfSetNamesEverySettingOfTheCatalogue() async throws {
        // Given the catalogue, when someone asks how to set a setting
        let result = try await CLI.run(["settings", "set", "--help"])
        // Then every key is listed with its type
        #expect(result.status == 0)
        for setting in Setting.all {
            #expect(result.stdout.contains("\(setting.key) ") && result.stdout.contains(setting.kind.name), "\(setting.key)")
        }
    }

    @Test func aBadValueIsRefusedNamingTheKeyAndTheRule() async throws {
        // Given a store
        let (store, storeArguments, environment) = try fixture()
        // When a page size beyond the maximum is set
        let result = try await CLI.run(["settings", "set", "pages.pageSize", "9000"] + storeArguments, environment: environment)
        // Then the command fails, naming the key and the rule, and nothing is stored
        #expect(result.status != 0)
        #expect(result.stderr.contains("pages.pageSize") && result.stderr.contains("must be at most 200"), "\(result.stderr)")
        #expect(try store.count("SELECT count(*) FROM settings") == 0)
    }

    @Test func managerTitlesNamingNoTitleInTheEnvironmentAreIgnoredAndTheNextLayerWins() async throws {
        // Given a store, and an environment whose manager titles name no title
        let (_, storeArguments, base) = try fixture()
        let environment = base.merging(["NORTHWIND_SESSION_MANAGER_TITLES": ";;;"]) { $1 }
        // When the setting is explained
        let explain = try await CLI.run(["settings", "explain", "session.managerTitles"] + storeArguments, environment: environment)
        // Then the environment's value is ignored, saying why, and the factory default still names the managers
        #expect(explain.status == 0)
        #expect(explain.stdout.contains("ignored: session.managerTitles must name at least one job title"), "\(explain.stdout)")
        #expect(explain.stdout.contains("Vice President, Sales; Sales Manager   ← wins"), "\(explain.stdout)")
    }

    @Test(arguments: [";;;", "Chief Taster"])
    func serveRefusesManagerTitlesOnItsCommandLineThatWouldLockManagersOut(_ title: String) async throws {
        // Given a demo store, whose employees hold no title "Chief Taster"
        let (_, storeArguments, environment) = try fixture()
        // When it is served with manager titles that name no title, or one no one holds
        let served = try await CLI.run(["serve", "--manager-title", title, "--port", "0"] + storeArguments, environment: environment)
        // Then it does not start, and says what is wrong
        #expect(served.status != 0)
        #expect(served.stderr.contains("session.managerTitles") && served.stderr.contains("must name at least one"), "\(served.stderr)")
    }

    @Test func explainShowsEveryLayerAndWhichWins() async throws {
        // Given a page size stored here, and another in the environment
        let (_, storeArguments, base) = try fixture()
        let environment = base.merging(["NORTHWIND_PAGES_PAGE_SIZE": "30"]) { $1 }
        let set = try await CLI.run(["settings", "set", "pages.pageSize", "40"] + storeArguments, environment: environment)
        // When the key is explained
        let explain = try await CLI.run(["settings", "explain", "pages.pageSize", "--json"] + storeArguments, environment: environment)
        // Then setting it said the environment wins, and every layer shows with its value
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("Note: the environment sets pages.pageSize to 30, which wins over the stored value."), "\(set.stdout)")
        let layers = try JSONDecoder().decode([SettingLayer].self, from: Data(explain.stdout.utf8))
        #expect(layers.map(\.origin) == [.commandLine, .environment, .file, .installation, .factory])
        #expect(layers.map(\.value) == [nil, "30", nil, "40", "25"])
        #expect(layers.map(\.wins) == [false, true, false, false, false])
    }

    @Test func aSecretIsNeverPrinted() async throws {
        // Given an enrolment token stored with the CLI
        let (_, storeArguments, environment) = try fixture()
        let set = try await CLI.run(["settings", "set", "sync.enrolmentToken", "s3cret-token-42"] + storeArguments, environment: environment)
        // When the settings are listed, read and explained
        var outputs: [String] = []
        for command in [["list"], ["list", "--json"], ["get", "sync.enrolmentToken"], ["explain", "sync.enrolmentToken"]] {
            outputs.append(try await CLI.run(["settings"] + command + storeArguments, environment: environment).stdout)
        }
        // Then each says that it is set, and none shows it
        for output in [set.stdout] + outputs {
            #expect(output.contains("(set)") && !output.contains("s3cret-token-42"), "\(output)")
        }
    }

    @Test func unsetBringsBackTheDefault() async throws {
        // Given a page size stored here
        let (_, storeArguments, environment) = try fixture()
        _ = try await CLI.run(["settings", "set", "pages.pageSize", "40"] + storeArguments, environment: environment)
        // When it is unset
        let unset = try await CLI.run(["settings", "unset", "pages.pageSize"] + storeArguments, environment: environment)
        let get = try await CLI.run(["settings", "get", "pages.pageSize"] + storeArguments, environment: environment)
        // Then the factory default stands again
        #expect(unset.stdout == "pages.pageSize = 25, from the factory default.\n")
        #expect(get.stdout == "25\n")
    }

    @Test func listShowsEveryInstallationKeyWithItsOrigin() async throws {
        // Given a value given for this run on the command line
        let (_, storeArguments, environment) = try fixture()
        // When every setting is listed
        let list = try await CLI.run(["settings", "list", "--json", "--setting", "server.port=9090"] + storeArguments, environment: environment)
        // Then every key that is not a user's is there once, with where its value comes from
        let values = try JSONDecoder().decode([SettingValue].self, from: Data(list.stdout.utf8))
        #expect(values.map(\.key) == Setting.all.filter { $0.scope != .user }.map(\.key))
        #expect(values.first { $0.key == "server.port" } == SettingValue(key: "server.port", value: "9090", origin: .commandLine))
        #expect(values.first { $0.key == "store.path" }?.origin == .commandLine)
    }

    @Test(.enabled(if: JSONSchemaSupport.enabled, Comment(rawValue: JSONSchemaSupport.skipMessage)))
    func theSchemaAcceptsAGoodSettingsFileAndRefusesABadOne() async throws {
        // Given the schema the CLI prints, and two settings files
        let (store, _, _) = try fixture()
        let schema = try await CLI.run(["settings", "schema"])
        let schemaPath = store.directory.appendingPathComponent("schema.json").path
        try Data(schema.stdout.utf8).write(to: URL(fileURLWithPath: schemaPath))
        let good =
            #"{"server": {"port": 8081, "secureCookies": false}, "pages": {"pageSize": 50}, "log": {"level": "debug"}, "orders": {"defaultFreight": 12.5}}"#
        let bad = #"{"pages": {"pageSize": 9000}, "log": {"level": "loud"}, "server": {"colour": "red"}}"#
        // When Python's jsonschema checks each against it
        func errors(_ sample: String) throws -> [String] {
            let script = """
                import json, sys, jsonschema
                schema = json.load(open(sys.argv[1]))
                jsonschema.Draft202012Validator.check_schema(schema)
                for error in jsonschema.Draft202012Validator(schema).iter_errors(json.loads(sys.argv[2])):
                    print(error.message)
                """
            let (termination, stdout, stderr) = try ChildProcess.run("/usr/bin/python3", ["-c", script, schemaPath, sample])
            #expect(termination.status == 0, "\(stderr)")
            return stdout.split(separator: "\n").map(String.init)
        }
        // Then the good one passes, and the bad one fails on each of its three faults
        #expect(try errors(good) == [])
        let faults = try errors(bad)
        #expect(faults.count == 3, "\(faults)")
        #expect(faults.contains { $0.contains("9000") } && faults.contains { $0.contains("loud") } && faults.contains { $0.contains("colour") })
    }
}
