// Chapter 10: a quote as a document: saved three-way, versioned, sent as a package, imported all or nothing.
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
let backoffice = try Backoffice.open(StoreConfiguration(path: folder.appendingPathComponent("northwind.sqlite").path))
let nancy = QuoteEditor(login: "nancy.davolio", name: "Nancy Davolio")

// guide: begin quote-save
let made = try await backoffice.quotes.create(
    QuoteContent(
        customerCode: "BIANC",
        validUntil: .today.adding(days: 30),
        notes: "First call",
        lines: [try backoffice.quotes.newLine(productID: 17, quantity: 4)]
    ),
    by: nancy
)
_ = try await backoffice.quotes.open(number: made.number, editor: nancy)
let first = try await backoffice.quotes.saveVersion(number: made.number, label: "As sent", editor: nancy)
// An autosave names the content it started from (base): fields that changed elsewhere meanwhile stand.
var edited = made.content
edited.lines[0].quantity = 6
edited.notes = "Second call: six jars"
let saved = try await backoffice.quotes.saveDraft(number: made.number, base: made.content, content: edited, history: QuoteHistory(), editor: nancy)
print("\(saved.quote.number): \(saved.quote.content.lines[0].quantity) jars, \(saved.quote.content.total)")
// Any version can come back; the restore is a version of its own, whose parent is the latest one.
let restored = try await backoffice.quotes.restoreVersion(number: made.number, versionID: first.id, editor: nancy)
print("Restored \"\(first.label)\": \(restored.content.lines[0].quantity) jars")
for version in try await backoffice.quotes.versions(number: made.number) {
    print("  version \(version.label): \(version.parentIDs.count) parent(s)")
}
// guide: end quote-save
precondition(restored.content.lines[0].quantity == 4, "the version's content is back")

// guide: begin package-round-trip
let package = folder.appendingPathComponent("\(made.number).nwdoc")
try await backoffice.documents.exportQuote(number: made.number, to: package)
let checked = try DocumentPackages.validate(package)
print("\(package.lastPathComponent): \(checked.manifest.kind), \(checked.manifest.entries.count) entries, each checked")
// Another shop's store: the import says first what it would do, then does all of it or nothing.
let other = try Backoffice.open(StoreConfiguration(path: folder.appendingPathComponent("other.sqlite").path))
for line in try await other.documents.importFile(package, dryRun: true).lines { print(line) }
_ = try await other.documents.importFile(package, dryRun: false)
// guide: end package-round-trip
// It took the other store's next number; the package's is kept as its source.
let importedNumber = try await other.quotes.list(all: true).first?.number ?? ""
let imported = try await other.quotes.quote(number: importedNumber)
precondition(imported.content == restored.content, "the other store holds the same quote")
