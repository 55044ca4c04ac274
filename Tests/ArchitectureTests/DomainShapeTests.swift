import Foundation
import Testing

/// The domain's shape: features small and named, the sync engine's calls seen only by the engine, and no file or
/// function grown past what a reader takes in at once.
@Suite("Domain shape")
struct DomainShapeTests {
    /// Each feature type (`public struct X: BackofficeFeature`) with the public methods its body and its extensions
    /// declare.
    static func featureMethods() throws -> [String: [String]] {
        let files = try Layout.files(of: "Northwind")
        var features: Set<String> = []
        for file in files {
            for line in file.lines {
                if let match = line.firstMatch(of: /^(?:@_spi\(\w+\)\s+)?public struct (\w+): BackofficeFeature/) { features.insert(String(match.1)) }
            }
        }
        var methods: [String: [String]] = [:]
        for file in files {
            var current: String?
            for line in file.lines {
                if let match = line.firstMatch(of: /^(?:@\w+(?:\([^)]*\))?\s+)*(?:public\s+)?extension (\w+)\b/) {
                    current = String(match.1)
                } else if let match = line.firstMatch(
                    of: /^(?:@\w+(?:\([^)]*\))?\s+)*(?:public\s+)?(?:final\s+)?(?:struct|class|actor|enum) (\w+)\b/
                ),
                    !line.hasSuffix("}")
                {
                    // A type's own body counts as its extensions do.
                    current = String(match.1)
                } else if line.hasPrefix("}") {
                    current = nil
                } else if let type = current,
                    let match = line.firstMatch(
                        of:
                            /^    (?:@\w+(?:\([^)]*\))?\s+)*(?:(?:nonisolated|static|final|class|mutating)\s+)*public\s+(?:(?:nonisolated|static|final|class|mutating)\s+)*(func|subscript|init)\b\s*(\w*)/
                    )
                {
                    methods[type, default: []].append(match.2.isEmpty ? String(match.1) : String(match.2))
                }
            }
        }
        return methods.filter { features.contains($0.key) || $0.key == "Backoffice" }
            .merging(features.map { ($0, []) }) { old, _ in old }
    }

    @Test func everyFeatureHasAtMost25PublicMethods() throws {
        // Given the domain's feature types
        let features = try Self.featureMethods().filter { $0.key != "Backoffice" }
        #expect(features.count >= 10, "\(features.keys.sorted())")
        // Then none has grown into a second Backoffice
        let large = features.filter { $0.value.count > 25 }.map { "\($0.key): \($0.value.count)" }
        #expect(large.isEmpty, "Features with more than 25 public methods: \(large)")
    }

    @Test func backofficeHasNoDomainMethodOfItsOwn() throws {
        // When Backoffice's body and its extensions in the domain are read
        // (Its body's too; the initialiser, which opens the store, is not a domain method.)
        let methods = try (Self.featureMethods()["Backoffice"] ?? []).filter { $0 != "init" }
        // Then it declares no public method: callers name the feature (backoffice.orders.execute)
        #expect(methods.isEmpty, "Public methods on Backoffice: \(methods)")
    }

    @Test func onlyTheSyncEngineImportsItsFeatures() throws {
        var found: [String] = []
        // When every target's import lines are read
        for target in try Layout.targets() {
            for file in try Layout.files(of: target)
            where !["NorthwindSync", "Northwind"].contains(target) && file.path != "Snippets/ch12-sync.swift" {
                // Any mention: the attribute may stand on the line above its import.
                for (number, line) in file.lines.enumerated() where line.contains("@_spi(SyncEngine)") {
                    found.append("\(file.path):\(number + 1)")
                }
            }
        }
        // Then only the engine (and chapter 12, which shows it) sees join, the outbox and the download apply
        #expect(try Layout.files(of: "NorthwindSync").contains { $0.lines.contains { $0.hasPrefix("@_spi(SyncEngine) import Northwind") } })
        #expect(found.isEmpty, "@_spi(SyncEngine) imports outside NorthwindSync: \(found)")
    }

    /// Generated code and the classic scripts' parser are long by nature.
    static let longByNature = [
        "Sources/NorthwindLoading/ClassicImport/ClassicScript.swift", "Sources/NorthwindLoading/ClassicImport/ClassicScriptTokenizer.swift",
    ]

    @Test func noSourceFileIsOver600Lines() throws {
        var long: [String] = []
        var measured = 0
        // When every hand-written source file is measured
        for target in try Layout.targets() {
            for file in try Layout.files(of: target) where !Self.longByNature.contains(file.path) {
                measured += 1
                if file.lines.count > 601 { long.append("\(file.path): \(file.lines.count - 1) lines") }
            }
        }
        // The tests too: a suite that grows past a reading is split by concern, as the sources are.
        let tests = Layout.root.appendingPathComponent("Tests")
        let enumerator = try #require(FileManager.default.enumerator(atPath: tests.path))
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            let lines = try String(contentsOf: tests.appendingPathComponent(relative), encoding: .utf8).split(
                separator: "\n",
                omittingEmptySubsequences: false
            )
            measured += 1
            if lines.count > 601 { long.append("Tests/\(relative): \(lines.count - 1) lines") }
        }
        #expect(measured > 300)
        // Then each fits in one reading
        #expect(long.isEmpty, "\(long.joined(separator: "\n"))")
    }

    @Test func noFunctionIsOver80Lines() throws {
        var long: [String] = []
        var measured = 0
        // When each function's body is measured from its declaration to the brace that closes it, at its indent
        for target in try Layout.targets() {
            for file in try Layout.files(of: target) where !Self.longByNature.contains(file.path) && !file.path.contains("/Migrations/") {
                for (start, line) in file.lines.enumerated() {
                    guard
                        let match = line.firstMatch(
                            of:
                                /^(\s*)(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|package|static|class|final|nonisolated|override|mutating|convenience|required)\s+)*(?:func|init)\b/
                        ),
                        !line.hasSuffix("}")
                    else { continue }
                    measured += 1
                    let closing = match.1 + "}"
                    guard let end = file.lines[(start + 1)...].firstIndex(where: { $0 == closing }) else { continue }
                    if end - start + 1 > 80 { long.append("\(file.path):\(start + 1): \(end - start + 1) lines") }
                }
            }
        }
        #expect(measured > 1000)
        // Then each reads on one screen or two
        #expect(long.isEmpty, "\(long.joined(separator: "\n"))")
    }
}
