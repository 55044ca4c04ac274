import ArgumentParser
import Foundation
import Northwind
import NorthwindStore

struct DocumentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "documents",
        abstract: "Export and import documents as .nwdoc packages: a quote, an order, a purchase order, an invoice or credit note, a catalogue.",
        discussion:
            "A package is one ZIP file: a manifest, the content as JSON, its pictures, a thumbnail and a printable HTML rendition. docs/documents.md has the format.",
        subcommands: [Export.self, Import.self, Validate.self]
    )

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case quote, order, catalog
        case purchaseOrder = "purchase-order"
        case invoice
        case creditNote = "credit-note"
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Write a quote, an order, a sent purchase order, an invoice or a credit note (by number), or the catalogue (optionally one category), to a package."
        )
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "quote, order, purchase-order, invoice, credit-note or catalog.") var kind: Kind
        @Argument(help: "The document's number; nothing for the catalogue.") var number: String?
        @Option(help: "For the catalogue: only this category id.") var category: Int64?
        @Option(name: .shortAndLong, help: "The package to write, e.g. order.nwdoc.") var output: String

        func validate() throws {
            if kind != .catalog && number == nil {
                throw ValidationError("Name the \(kind.rawValue): northwind documents export \(kind.rawValue) NUMBER -o FILE.")
            }
            if kind == .catalog && number != nil { throw ValidationError("The catalogue takes no number; --category ID limits it to one category.") }
        }

        func run() async throws {
            let backoffice = try await storeOptions.open()
            let file = URL(fileURLWithPath: output)
            switch kind {
            case .quote: try await backoffice.documents.exportQuote(number: number ?? "", to: file)
            case .order: try await backoffice.documents.exportOrder(number: number ?? "", to: file)
            case .catalog: try await backoffice.documents.exportCatalog(categoryID: category, to: file)
            case .purchaseOrder: try await backoffice.documents.exportPurchaseOrder(number: number ?? "", to: file)
            case .invoice, .creditNote:
                try await backoffice.documents.exportInvoice(number: number ?? "", kind: kind == .invoice ? .invoice : .creditNote, to: file)
            }
            print("Wrote \(file.path).")
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import a package, all or nothing, after saying what it adds and updates.",
            discussion:
                "Every check of `documents validate` runs first. Importing a catalogue adds products and categories and updates prices; it never deletes."
        )
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The .nwdoc package.") var file: String
        @Flag(help: "Say what would be added and updated, and change nothing.") var dryRun = false

        func run() async throws {
            let backoffice = try await storeOptions.open()
            let url = URL(fileURLWithPath: file)
            let plan = try await backoffice.documents.importFile(url, dryRun: true)
            for line in plan.lines { print(line) }
            if dryRun {
                print("Dry run: nothing changed.")
                return
            }
            let done = try await backoffice.documents.importFile(url, dryRun: false)
            print("Imported: \(counted(done.adds.count, "addition")), \(counted(done.updates.count, "update")).")
        }
    }

    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a package without importing it: its archive, manifest, checksums and content.",
            discussion: "Exits with status 1, saying why, when the package is refused."
        )
        @Argument(help: "The .nwdoc package.") var file: String

        func run() async throws {
            let package = try DocumentPackages.validate(URL(fileURLWithPath: file))
            let manifest = package.manifest
            print(
                "\(URL(fileURLWithPath: file).lastPathComponent): a valid \(manifest.kind.rawValue), made by \(manifest.generator.app) \(manifest.generator.version) on \(manifest.createdAt), \(counted(manifest.entries.count, "entry", plural: "entries")) matching their checksums."
            )
        }
    }
}
