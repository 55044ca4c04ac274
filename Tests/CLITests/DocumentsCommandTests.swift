import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore
import Testing

@testable import NorthwindTestSupport

@Suite("Documents on the command line", .serialized)
struct DocumentsCommandTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A quote made with the CLI, and its number.
    static func quote(_ fixture: BackupCommandTests.Fixture) async throws -> String {
        let backoffice = try Backoffice.open(StoreConfiguration(path: fixture.store.path), seedIfCreated: false)
        let customer = try #require(try await backoffice.records.list(Customer.self, limit: 1).items.first?.code)
        let products = try await backoffice.catalogue.list().items.filter { !$0.product.discontinued }.compactMap(\.product.id).prefix(2)
        try backoffice.store.close()
        let lines = zip(products, ["3", "5:0.1"]).flatMap { ["--line", "\($0):\($1)"] }
        let made = try await fixture.run(["quotes", "new", "--customer", customer] + lines + ["--notes", "First call"])
        #expect(made.status == 0, "\(made.stderr)")
        return try #require(made.stdout.firstMatch(of: /Quote (\S+) —/).map { String($0.1) })
    }

    @Test(.enabled(if: JSONSchemaSupport.enabled, Comment(rawValue: JSONSchemaSupport.skipMessage)))
    func everyKindsExportedContentAndManifestMatchThePublishedSchemas() async throws {
        // Given a quote, an order, a sent purchase order (an opening one) and the catalogue exported with the CLI
        let fixture = try await BackupCommandTests.Fixture()
        let number = try await Self.quote(fixture)
        let order = try await #require(
            try fixture.run(["orders", "list", "--limit", "1"]).stdout.firstMatch(of: /\b([0-9A-Z]{6}-[0-9]+)\b/).map { String($0.1) }
        )
        let purchase = try await #require(
            try fixture.run(["purchases", "list"]).stdout.firstMatch(of: /\b([0-9A-Z]{6}-P[0-9]+)\b/).map { String($0.1) }
        )
        let (invoice, creditNote) = try await Self.invoiceAndCreditNote(fixture)
        var files: [(String, String)] = []
        for (kind, argument) in [
            ("quote", number), ("order", order), ("purchase-order", purchase), ("invoice", invoice), ("credit-note", creditNote), ("catalog", nil),
        ] {
            let file = fixture.place.directory.appendingPathComponent("\(kind).nwdoc").path
            let exported = try await fixture.run(["documents", "export", kind] + (argument.map { [$0] } ?? []) + ["-o", file])
            #expect(exported.status == 0, "\(exported.stderr)")
            files.append((kind, file))
        }
        // When each package's content and manifest are checked against docs/schemas with Python's jsonschema
        for (kind, file) in files {
            let script = """
                import json, sys, zipfile, jsonschema
                package = zipfile.ZipFile(sys.argv[1])
                for entry, schema in [(sys.argv[2], sys.argv[3]), ("manifest.json", sys.argv[4])]:
                    jsonschema.validate(json.loads(package.read(entry)), json.load(open(schema)))
                print("valid")
                """
            let schemas = Self.repository.appendingPathComponent("docs/schemas")
            let (status, stdout, stderr) = try ChildProcess.run(
                "/usr/bin/python3",
                [
                    "-c", script, file, "content/\(kind).json", schemas.appendingPathComponent("\(kind).schema.json").path,
                    schemas.appendingPathComponent("manifest.schema.json").path,
                ]
            )
            // Then each is valid
            #expect(status.status == 0 && stdout.contains("valid"), "\(kind): \(stderr)")
        }
    }

    /// An order of one unit of product 3, shipped (which issues its invoice), and that unit returned (a credit note).
    static func invoiceAndCreditNote(_ fixture: BackupCommandTests.Fixture) async throws -> (String, String) {
        let customers = try await fixture.run(["customers", "list", "--json", "--limit", "1"])
        let object = try JSONSerialization.jsonObject(with: Data(customers.stdout.utf8)) as? [String: Any]
        let code = try #require((object?["items"] as? [[String: Any]])?.first?["code"] as? String)
        let made = try await fixture.run(["orders", "new", "--customer", code, "--line", "3:1", "--json"])
        let order = try #require((try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any])?["number"] as? String)
        let shipped = try await fixture.run(["shipments", "ship", order, "--line", "3:1", "--json"])
        let invoice = try #require(
            (try JSONSerialization.jsonObject(with: Data(shipped.stdout.utf8)) as? [String: Any])?["invoiceNumber"] as? String,
            "\(shipped.stderr)"
        )
        let returned = try await fixture.run(["returns", "take", order, "1", "--line", "3:1", "--json"])
        let credit = try #require(
            (try JSONSerialization.jsonObject(with: Data(returned.stdout.utf8)) as? [String: Any])?["creditNoteNumber"] as? String,
            "\(returned.stderr)"
        )
        return (invoice, credit)
    }

    @Test func aPurchaseOrderPackageValidatesButIsNeverImported() async throws {
        // Given a sent (opening) purchase order exported from one store
        let fixture = try await BackupCommandTests.Fixture()
        let purchase = try await #require(
            try fixture.run(["purchases", "list"]).stdout.firstMatch(of: /\b([0-9A-Z]{6}-P[0-9]+)\b/).map { String($0.1) }
        )
        let file = fixture.place.directory.appendingPathComponent("purchase-order.nwdoc").path
        #expect(try await fixture.run(["documents", "export", "purchase-order", purchase, "-o", file]).status == 0)
        let before = try await fixture.run(["purchases", "list"]).stdout
        // When it is validated, then imported
        let valid = try await CLI.run(["documents", "validate", file])
        let imported = try await fixture.run(["documents", "import", file])
        // Then it is valid, and the import is refused with the reason, changing nothing
        #expect(valid.status == 0, "\(valid.stderr)")
        #expect(imported.status != 0)
        #expect(imported.stderr.contains("a store does not import purchase orders"), "\(imported.stderr)")
        #expect(try await fixture.run(["purchases", "list"]).stdout == before)
    }

    @Test func validateAndADryRunImportSayWhatTheyFindAndChangeNothing() async throws {
        // Given a quote's package from one store, and another store
        let fixture = try await BackupCommandTests.Fixture()
        let other = try await BackupCommandTests.Fixture()
        let number = try await Self.quote(fixture)
        let file = fixture.place.directory.appendingPathComponent("quote.nwdoc").path
        #expect(try await fixture.run(["documents", "export", "quote", number, "-o", file]).status == 0)
        // When it is validated, then imported at the other store as a dry run, then for real
        let valid = try await CLI.run(["documents", "validate", file])
        let dry = try await other.run(["documents", "import", file, "--dry-run"])
        let listedBefore = try await other.run(["quotes", "list"])
        let imported = try await other.run(["documents", "import", file])
        // Then each says what it found; the dry run changed nothing, and the import added the quote
        #expect(valid.status == 0)
        #expect(valid.stdout.contains("quote.nwdoc: a valid quote, made by northwind \(NorthwindVersion.current)"), "\(valid.stdout)")
        #expect(dry.stdout.contains("Quote \(number):\n  add quote "), "\(dry.stdout)")
        #expect(dry.stdout.contains(" (their \(number)) for "), "\(dry.stdout)")
        #expect(dry.stdout.contains("Dry run: nothing changed."))
        #expect(listedBefore.stdout.contains("No quotes yet"))
        #expect(imported.stdout.contains("Imported: 1 addition, 0 updates."), "\(imported.stdout) \(imported.stderr)")
        // (under the other store's own next number, the first it gives)
        let local = try #require(imported.stdout.firstMatch(of: #/add quote ([A-Z0-9]+-Q[0-9]+) /#)?.1)
        #expect(local != number)
        #expect(try await other.run(["quotes", "show", String(local)]).stdout.contains("First call"))
    }

    @Test func aQuotesJSONWritesMoneyAsTheAPIDoesInListShowAndVersions() async throws {
        // Given a quote made with the CLI, with a line of 5 at a 10% discount
        let fixture = try await BackupCommandTests.Fixture()
        let number = try await Self.quote(fixture)
        // When it is listed, shown and its versions listed with --json
        let listed = try await fixture.run(["quotes", "list", "--json"])
        let shown = try await fixture.run(["quotes", "show", number, "--json"])
        let versions = try await fixture.run(["quotes", "versions", number, "--json"])
        // Then each is JSON in which every amount is a decimal string and the content keeps its lines
        let list = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]], "\(listed.stderr)")
        let quote = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any], "\(shown.stderr)")
        let history = try #require(try JSONSerialization.jsonObject(with: Data(versions.stdout.utf8)) as? [[String: Any]], "\(versions.stderr)")
        let content = try #require(quote["content"] as? [String: Any])
        let lines = try #require(content["lines"] as? [[String: Any]])
        #expect(list.map { $0["number"] as? String } == [number])
        #expect((list.first?["total"] as? String) == (quote["total"] as? String))
        #expect((quote["total"] as? String)?.wholeMatch(of: /[0-9]+\.[0-9]{2}/) != nil, "\(shown.stdout)")
        #expect(lines.map { $0["quantity"] as? Int } == [3, 5])
        #expect(lines.map { $0["discount"] as? Double } == [0, 0.1])
        #expect(lines.allSatisfy { ($0["unitPrice"] as? String)?.wholeMatch(of: /[0-9]+\.[0-9]{2}/) != nil }, "\(lines)")
        #expect(content["notes"] as? String == "First call")
        #expect(history.map { $0["label"] as? String } == ["Created"])
        #expect((history.first?["content"] as? [String: Any])?["customerCode"] as? String == content["customerCode"] as? String)
    }

    @Test func aMissingFileIsSaidToBeMissing() async throws {
        // Given a path where nothing is
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-nothing-\(UUID().uuidString).nwdoc").path
        // When it is validated
        let result = try await CLI.run(["documents", "validate", path])
        // Then the message says there is no such file, not that it is a bad archive
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(path) cannot be read: there is no such file"), "\(result.stderr)")
    }

    @Test func somethingThatIsNotAPackageIsRefusedWithExitStatusOne() async throws {
        // Given a text file named like a package
        let place = BackupPlace()
        try FileManager.default.createDirectory(at: place.directory, withIntermediateDirectories: true)
        let file = place.directory.appendingPathComponent("notes.nwdoc")
        try Data("hello".utf8).write(to: file)
        // When it is validated
        let result = try await CLI.run(["documents", "validate", file.path])
        // Then it is refused, saying why
        #expect(result.status == 1)
        #expect(result.stderr.contains("notes.nwdoc is not a Northwind document: it cannot be read as a ZIP archive."), "\(result.stderr)")
    }
}
