import Foundation
import Testing

/// The package's sources and the rule table of `docs/architecture.md`, read from the checkout.
enum Layout {
    static let root: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url = url.deletingLastPathComponent()
        }
        return url
    }()

    /// Target name → the modules it may import, from the "Dependency rule" table.
    static func rule() throws -> [String: Set<String>] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        let after = try #require(text.components(separatedBy: "## Dependency rule").dropFirst().first)
        let section = after.components(separatedBy: "\n## ").first ?? after
        var rule: [String: Set<String>] = [:]
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4 else { continue }
            let target = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            rule[target] = Set(cells[3].matches(of: /`([^`]+)`/).map { String($0.1) })
        }
        return rule
    }

    /// Every target folder under `Sources`, and `Snippets` (the guide's programs, each a target of its own).
    static func targets() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path)
            .filter { !$0.hasPrefix(".") }.sorted() + ["Snippets"]
    }

    static func folder(of target: String) -> String { target == "Snippets" ? target : "Sources/\(target)" }

    /// Every Swift file of a target, as (path relative to the root, lines).
    static func files(of target: String) throws -> [(path: String, lines: [Substring])] {
        let folder = root.appendingPathComponent(folder(of: target))
        let enumerator = try #require(FileManager.default.enumerator(atPath: folder.path))
        var files: [(String, [Substring])] = []
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            let text = try String(contentsOf: folder.appendingPathComponent(relative), encoding: .utf8)
            files.append(("\(Self.folder(of: target))/\(relative)", text.split(separator: "\n", omittingEmptySubsequences: false)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// The module an `import` line names: `import GRDB`, `@testable import X`, `@_spi(S) import X`, `public import X`,
    /// `import struct Foo.Bar`.
    static func importedModule(_ line: Substring) -> String? {
        guard
            let match = line.firstMatch(
                of:
                    /^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([\w]+)/
            )
        else { return nil }
        return String(match.1)
    }

    static func isComment(_ line: Substring) -> Bool {
        line.trimmingCharacters(in: .whitespaces).hasPrefix("//")
    }
}

@Suite("Architecture")
struct ArchitectureTests {
    @Test func everyTargetHasARowInTheRule() throws {
        // Given the rule table and the target folders
        let rule = try Layout.rule()
        let targets = try Layout.targets()
        // Then each target has its row, and each row names a target
        #expect(!targets.isEmpty)
        #expect(Set(targets) == Set(rule.keys), "targets \(targets) vs. rows \(rule.keys.sorted())")
    }

    @Test func everyImportIsAllowedByTheRule() throws {
        // Given the rule table
        let rule = try Layout.rule()
        var forbidden: [String] = []
        // When every import line of every target is read
        for target in try Layout.targets() {
            let allowed = rule[target] ?? []
            for file in try Layout.files(of: target) {
                for (number, line) in file.lines.enumerated() {
                    guard let module = Layout.importedModule(line), !allowed.contains(module) else { continue }
                    forbidden.append("\(file.path):\(number + 1) imports \(module)")
                }
            }
        }
        // Then none is outside its target's row
        #expect(forbidden.isEmpty, "Imports that docs/architecture.md does not allow:\n\(forbidden.joined(separator: "\n"))")
    }

    @Test func noTargetReExportsAnother() throws {
        // When every source line is read
        var found: [String] = []
        for target in try Layout.targets() {
            for file in try Layout.files(of: target) {
                for (number, line) in file.lines.enumerated() where line.contains("@_exported") && !Layout.isComment(line) {
                    found.append("\(file.path):\(number + 1)")
                }
            }
        }
        // Then no import is re-exported: each file says what it uses
        #expect(found.isEmpty, "\(found)")
    }

    @Test func onlyTheStoreAndTheDomainTouchThePool() throws {
        var found: [String] = []
        // When the targets other than the store and the domain are read
        for target in try Layout.targets() where !["NorthwindStore", "Northwind"].contains(target) {
            for file in try Layout.files(of: target) {
                for (number, line) in file.lines.enumerated() where line.contains(/\.pool\b/) && !Layout.isComment(line) {
                    found.append("\(file.path):\(number + 1)")
                }
            }
        }
        // Then none of them uses the connection pool
        #expect(found.isEmpty, "\(found)")
    }

    @Test func sqlLivesInTheStoreAndTheDomainOnly() throws {
        // Given what SQL looks like in a Swift string
        let sql = /\b(SELECT\s+[\w*(]|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|PRAGMA\s+\w|CREATE\s+(TABLE|INDEX|TRIGGER|VIEW))/
        var found: [String] = []
        // When the web app, the CLI and the loaders are read (the benches' bare baselines are SQL by design, and so are
        // the guide's query plans; the sync server's storage engines are its store)
        for target in try Layout.targets()
        where !["NorthwindStore", "Northwind", "northwind-bench", "northwind-sync-bench", "Snippets"].contains(target) {
            for file in try Layout.files(of: target) where !file.path.hasPrefix("Sources/SyncServer/Storage/") {
                for (number, line) in file.lines.enumerated() where line.contains(sql) && !Layout.isComment(line) {
                    found.append("\(file.path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        // Then none of them holds a SQL statement
        #expect(found.isEmpty, "SQL outside the store and the domain:\n\(found.joined(separator: "\n"))")
    }

    @Test func theSyncServersStorageSeesNoHTTPType() throws {
        // Given the modules of the protocol's HTTP side
        let http: Set = ["SyncAPI", "OpenAPIRuntime", "Hummingbird", "HTTPTypes"]
        var found: [String] = []
        // When the storage engines' files are read
        let storage = try Layout.files(of: "SyncServer").filter { $0.path.hasPrefix("Sources/SyncServer/Storage/") }
        #expect(storage.count > 3)
        for file in storage {
            for (number, line) in file.lines.enumerated() {
                if let module = Layout.importedModule(line), http.contains(module) { found.append("\(file.path):\(number + 1) imports \(module)") }
                if line.contains("Components.") && !Layout.isComment(line) { found.append("\(file.path):\(number + 1) names a generated type") }
            }
        }
        // Then none imports them or names a generated type: storage reads and writes the server's own types
        #expect(found.isEmpty, "\(found)")
    }

    @Test func theSyncServerKnowsNothingOfNorthwind() throws {
        // Given the Northwind modules
        let northwind: Set = ["Northwind", "NorthwindStore", "NorthwindLoading", "NorthwindWeb"]
        var found: [String] = []
        // When the sync targets' imports are read
        for target in ["SyncProtocol", "SyncServer", "northwind-sync-server"] {
            for file in try Layout.files(of: target) {
                for (number, line) in file.lines.enumerated() {
                    if let module = Layout.importedModule(line), northwind.contains(module) { found.append("\(file.path):\(number + 1)") }
                }
            }
        }
        // Then none imports a Northwind module: the server stores records without knowing what they describe
        #expect(found.isEmpty, "\(found)")
    }

    @Test func theWebAndTheCLIAreTyped() throws {
        var found: [String] = []
        // When the web app and the CLI are read
        for target in ["NorthwindWeb", "northwind"] {
            for file in try Layout.files(of: target) {
                for (number, line) in file.lines.enumerated()
                where (line.contains("[String: Any]") || line.contains("Mirror(")) && !Layout.isComment(line) {
                    found.append("\(file.path):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        // Then no page, body or printout goes through an untyped dictionary or reflection
        #expect(found.isEmpty, "Untyped data in the web app or the CLI:\n\(found.joined(separator: "\n"))")
    }

    @Test func everySourceFileNameIsUniqueAcrossTargets() throws {
        // Given every Swift file of every target (generated code aside)
        var byName: [String: [String]] = [:]
        for target in try Layout.targets() where target != "Snippets" {
            for file in try Layout.files(of: target) {
                byName[URL(fileURLWithPath: file.path).lastPathComponent, default: []].append(file.path)
            }
        }
        // When names are compared
        let repeated = byName.filter { $0.value.count > 1 }.map { "\($0.key): \($0.value.joined(separator: ", "))" }.sorted()
        // Then each name is one file's: an editor's "open file" and a crash log's file name point to one place
        #expect(repeated.isEmpty, "\(repeated.joined(separator: "\n"))")
    }

    @Test func everyImportIsDeclaredInPackageSwift() throws {
        // Given each target's dependencies as Package.swift declares them (a product's module has its name)
        let manifest = try String(contentsOf: Layout.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        var declared: [String: Set<String>] = [:]
        // Each target's text runs from its `.target(` or `.executableTarget(` to the next target of any kind.
        for chunk in manifest.split(separator: /\.(?=(?:target|executableTarget|testTarget|plugin)\()/).dropFirst() {
            guard let block = chunk.prefixMatch(of: #/(?:target|executableTarget)\(\s*name: "([^"]+)"([\s\S]*)/#) else { continue }
            let body = String(block.2)
            let products = body.matches(of: #/\.product\(name: "([^"]+)"/#).map { String($0.1) }
            let targets = body.replacing(#/\.product\([^)]*\)/#, with: "").matches(of: #/"([^"]+)"/#).map { String($0.1) }
            declared[String(block.1)] = Set(products + targets)
        }
        // The toolchain's own modules need no declaration.
        let toolchain: Set = ["Foundation", "FoundationEssentials", "FoundationNetworking", "Glibc", "Dispatch", "Synchronization", "Testing"]
        var undeclared: [String] = []
        // When every library and program's imports are read
        for target in try Layout.targets() where target != "Snippets" {
            let allowed = try #require(declared[target], "Package.swift has no target \(target)")
            for file in try Layout.files(of: target) {
                for (number, line) in file.lines.enumerated() {
                    guard let module = Layout.importedModule(line), !toolchain.contains(module), !allowed.contains(module) else { continue }
                    undeclared.append("\(file.path):\(number + 1) imports \(module)")
                }
            }
        }
        // Then each is a declared dependency, not one that only happens to be built through another target
        #expect(undeclared.isEmpty, "Imports Package.swift does not declare:\n\(undeclared.joined(separator: "\n"))")
    }
}
