import Foundation
import GRDB
import NorthwindStore

/// A package whose every check passed, with its content decoded.
public struct ValidatedPackage: Sendable {
    public enum Content: Sendable {
        case quote(QuoteDocument)
        case order(OrderDocument)
        /// With the pictures its categories name, by entry path.
        case catalog(CatalogDocument, media: [String: Data])
        case purchaseOrder(PurchaseOrderDocument)
        case invoice(InvoiceDocument)
    }
    public var manifest: DocumentManifest
    public var content: Content
}

public enum DocumentPackages {
    /// A document is small: a catalogue of a thousand products with their pictures fits well within these.
    static let limits = ArchiveLimits(entries: 5000, totalBytes: 256 << 20, compressionRatio: 100)

    /// Opens and checks a `.nwdoc` before anything in it is used: the archive's table of contents
    /// (`SafeArchive`), the manifest (format, kind, the version it needs), every entry against the manifest (nothing
    /// more, nothing missing, each size and SHA-256), the content as its kind's JSON, and the content's own rules.
    public static func validate(_ file: URL) throws(NorthwindError) -> ValidatedPackage {
        let name = file.lastPathComponent
        let archive = try SafeArchive(url: file, mediaTypes: DocumentKind.allCases.map(\.mediaType), limits: limits, what: "Northwind document")
        let manifest: DocumentManifest
        do {
            manifest = try JSONDecoder().decode(DocumentManifest.self, from: try archive.read("manifest.json", limit: 4 << 20))
        } catch let error as NorthwindError {
            throw error
        } catch {
            throw .importFailed("\(name) is not a Northwind document: its manifest cannot be read (\(error)).")
        }
        guard manifest.format == DocumentManifest.format, archive.mediaType == manifest.kind.mediaType else {
            throw .importFailed(
                "\(name) is not a Northwind document: its manifest says \(manifest.format) \(manifest.kind.rawValue), its type \(archive.mediaType)."
            )
        }
        guard manifest.minReaderVersion <= DocumentManifest.formatVersion else {
            throw .importFailed(
                "\(name) was made by \(manifest.generator.app) \(manifest.generator.version) in document format \(manifest.formatVersion), which this Northwind (\(NorthwindVersion.current)) cannot read: upgrade Northwind to import it."
            )
        }
        let bytes = try entries(of: archive, as: manifest, name)
        guard manifest.root == manifest.kind.root, let content = bytes[manifest.root] else {
            throw .importFailed("\(name) is refused: its content should be \(manifest.kind.root).")
        }
        let decoded = try decode(content, as: manifest.kind, media: bytes, name)
        return ValidatedPackage(manifest: manifest, content: decoded)
    }

    /// Every entry the manifest lists, read and checked against its size and SHA-256; nothing more, nothing missing.
    private static func entries(of archive: SafeArchive, as manifest: DocumentManifest, _ name: String) throws(NorthwindError) -> [String: Data] {
        let listed = Set(manifest.entries.map(\.path))
        guard listed.count == manifest.entries.count else { throw .importFailed("\(name) is refused: its manifest lists an entry twice.") }
        for path in archive.paths where !["mimetype", "manifest.json"].contains(path) && !listed.contains(path) {
            throw .importFailed("\(name) is refused: it holds \(path), which its manifest does not list.")
        }
        var bytes: [String: Data] = [:]
        for entry in manifest.entries {
            guard archive.contains(entry.path) else {
                throw .importFailed("\(name) is refused: its manifest lists \(entry.path), which it does not hold.")
            }
            var data = Data()
            let read = try archive.stream(entry.path, limit: entry.size) { data.append($0) }
            guard read.size == entry.size, read.sha256 == entry.sha256 else {
                throw .importFailed("\(name) is refused: \(entry.path) does not match its checksum in the manifest.")
            }
            bytes[entry.path] = data
        }
        return bytes
    }

    /// The content as its kind's JSON, checked by the kind's own rules; a catalogue's pictures come from `media`.
    private static func decode(
        _ content: Data,
        as kind: DocumentKind,
        media bytes: [String: Data],
        _ name: String
    ) throws(NorthwindError) -> ValidatedPackage.Content {
        switch kind {
        case .quote:
            let document = try decode(QuoteDocument.self, content, name)
            try check(schemaVersion: document.schemaVersion, QuoteDocument.schemaVersion, name)
            try check(number: document.number, party: document.customer, name)
            try check(document.lines, name)
            if document.notes.count > 4000 { throw .importFailed("\(name) is refused: its notes are longer than 4000 characters.") }
            return .quote(document)
        case .order:
            let document = try decode(OrderDocument.self, content, name)
            try check(schemaVersion: document.schemaVersion, OrderDocument.schemaVersion, name)
            try check(number: document.number, party: document.customer, name)
            try check(document.lines, name)
            return .order(document)
        case .invoice, .creditNote:
            let document = try decode(InvoiceDocument.self, content, name)
            try check(schemaVersion: document.schemaVersion, InvoiceDocument.schemaVersion, name)
            return .invoice(document)
        case .purchaseOrder:
            let document = try decode(PurchaseOrderDocument.self, content, name)
            try check(schemaVersion: document.schemaVersion, PurchaseOrderDocument.schemaVersion, name)
            // Opening orders carry what was on order before purchase orders were kept: up to the units limit.
            if document.lines.isEmpty || document.lines.contains(where: { $0.quantity < 1 || !Limits.units.contains($0.quantity) }) {
                throw .importFailed("\(name) is refused: a purchase order has lines, each of 1 to \(Limits.units.upperBound) units.")
            }
            if document.status == .draft {
                throw .importFailed("\(name) is refused: a purchase order package is of a sent order, never a draft.")
            }
            let number = document.number
            if number.isEmpty || number.count > 64 || number.contains("/") || number.unicodeScalars.contains(where: { $0.value < 0x20 }) {
                throw .importFailed("\(name) is refused: its number must be 1 to 64 characters, with no slash.")
            }
            if document.lines.contains(where: { line in line.unitCost.map { !Limits.money.contains($0) } ?? false }) {
                throw .importFailed("\(name) is refused: a unit cost is out of range (0 to \(Limits.money.upperBound)).")
            }
            return .purchaseOrder(document)
        case .catalog:
            let document = try decode(CatalogDocument.self, content, name)
            try check(schemaVersion: document.schemaVersion, CatalogDocument.schemaVersion, name)
            var media: [String: Data] = [:]
            for category in document.categories {
                guard let path = category.picture else { continue }
                guard let picture = bytes[path], path.hasPrefix("media/") else {
                    throw .importFailed("\(name) is refused: the category \(category.name) names a picture, \(path), that it does not hold.")
                }
                guard Picture.unwrap([UInt8](picture))?.contentType.hasPrefix("image/") == true else {
                    throw .importFailed("\(name) is refused: \(path) is not a picture.")
                }
                media[path] = picture
            }
            for product in document.products {
                if let error = Limits.check(product.unitPrice, Limits.money, "\(product.name): unitPrice") {
                    throw .importFailed("\(name) is refused: \(error.field) \(error.message).")
                }
                if product.name.trimmingCharacters(in: .whitespaces).isEmpty || product.name.count > 200 {
                    throw .importFailed("\(name) is refused: a product's name is empty or longer than 200 characters.")
                }
            }
            return .catalog(document, media: media)
        }
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ data: Data, _ name: String) throws(NorthwindError) -> T {
        if escapesNUL(data) {
            throw .importFailed("\(name) is refused: a text in it holds a NUL character (\\u0000), which the store cannot keep.")
        }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw .importFailed("\(name) is refused: its content is not a valid \(T.self): \(error).")
        }
    }

    /// Whether JSON text escapes a NUL inside a string ("\\u0000"). Outside strings valid JSON has no backslash.
    static func escapesNUL(_ data: Data) -> Bool {
        let bytes = [UInt8](data)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\\") {
                if index + 5 < bytes.count, bytes[index + 1] == UInt8(ascii: "u"),
                    bytes[(index + 2)...(index + 5)].allSatisfy({ $0 == UInt8(ascii: "0") })
                {
                    return true
                }
                index += 2
            } else {
                index += 1
            }
        }
        return false
    }

    private static func check(schemaVersion: Int, _ ours: Int, _ name: String) throws(NorthwindError) {
        guard schemaVersion <= ours else {
            throw .importFailed(
                "\(name) is refused: its content is in schema version \(schemaVersion); this Northwind reads up to \(ours). Upgrade Northwind to import it."
            )
        }
    }

    /// A number that names a page (no slash), and a customer with a code and a name.
    private static func check(number: String, party: DocumentParty, _ name: String) throws(NorthwindError) {
        if number.isEmpty || number.count > 64 || number.contains("/") || number.unicodeScalars.contains(where: { $0.value < 0x20 }) {
            throw .importFailed("\(name) is refused: its number must be 1 to 64 characters, with no slash.")
        }
        // A code sync gave ("ALFKI-OXF") may name a customer here already; a new customer needs one a person gives.
        if !FieldRule.isCustomerCode(party.code, renamedBySync: true) { throw .invalid("code", FieldRule.customerCodeMessage) }
        let companyName = party.companyName.trimmingCharacters(in: .whitespaces)
        if companyName.isEmpty {
            throw .importFailed("\(name) is refused: its customer needs a name.")
        }
        if let error = RecordRules.check("customers", "companyName", companyName) {
            throw .importFailed("\(name) is refused: its customer's name \(error.message).")
        }
    }

    /// A package's lines obey the rules of an order's.
    private static func check(_ lines: [DocumentLine], _ name: String) throws(NorthwindError) {
        // Products are numbered here by their reference, so that one named twice is caught as on an order.
        var numbers: [String: Int64] = [:]
        var drafts: [OrderLineDraft] = []
        for line in lines {
            let key = line.product.recordID + "\u{0}" + line.product.name
            let number = numbers[key] ?? Int64(numbers.count + 1)
            numbers[key] = number
            drafts.append(OrderLineDraft(productID: number, quantity: line.quantity, discount: line.discount, unitPrice: line.unitPrice))
        }
        do {
            if !drafts.isEmpty { try Orders.validate(lines: drafts) }
        } catch {
            throw .importFailed("\(name) is refused: \(error.description).")
        }
    }
}

extension Documents {
    /// Imports a package, all or nothing; with `dryRun`, says what it would add and update and changes nothing.
    /// A quote or an order finds its customer by code (adding it when missing) and its products by record id, then
    /// by name; a catalogue adds missing categories and products and updates prices. Nothing is ever deleted.
    public func importFile(_ file: URL, dryRun: Bool) async throws(NorthwindError) -> DocumentImportPlan {
        let package = try DocumentPackages.validate(file)
        let binaries = store.binaries
        if dryRun {
            do {
                try await store.pool.write { db in
                    throw DryRun(plan: try Self.importPackage(package, binaries: binaries, db))
                }
            } catch let dry as DryRun {
                return dry.plan
            } catch {
                throw NorthwindError.translating(error)
            }
            throw .storeUnavailable("The dry run did not finish.")
        }
        return try await write { db in try Self.importPackage(package, binaries: binaries, db) }
    }

    /// Carries a dry run's plan out of the transaction it rolls back.
    private struct DryRun: Error { var plan: DocumentImportPlan }

    private static func importPackage(_ package: ValidatedPackage, binaries: ExternalStorage, _ db: Database) throws -> DocumentImportPlan {
        switch package.content {
        case .quote(let document): try importQuote(document, recordID: package.manifest.documentId, db)
        case .order(let document): try importOrder(document, recordID: package.manifest.documentId, db)
        case .catalog(let document, let media): try importCatalog(document, media: media, binaries: binaries, db)
        case .invoice(let document):
            // Issued by its site, in its series: another store keeps it by sync, never by import.
            throw NorthwindError.importFailed(
                "\(document.kind.words) \(document.number) is issued by its site and reaches other stores by sync; a store does not import one."
            )
        case .purchaseOrder(let document):
            // Written for its supplier: the site that sent it has it already, and another store has no use for it.
            throw NorthwindError.importFailed(
                "Purchase order \(document.number) is written for its supplier; a store does not import purchase orders."
            )
        }
    }

    private static func importQuote(_ document: QuoteDocument, recordID: String, _ db: Database) throws -> DocumentImportPlan {
        var plan = DocumentImportPlan(kind: .quote, title: "Quote \(document.number)", adds: [], updates: [], unchanged: 0)
        let customerCode = try ensureCustomer(document.customer, plan: &plan, db)
        let lines = try document.lines.map { line in
            QuoteLine(
                lineID: line.lineID,
                productID: try productID(line.product, db),
                productName: line.product.name,
                quantity: line.quantity,
                unitPrice: line.unitPrice,
                discount: line.discount
            )
        }
        let content = QuoteContent(customerCode: customerCode, validUntil: document.validUntil, notes: document.notes, lines: lines)
        // Two references that name one product here would make a quote no order could take.
        do throws(NorthwindError) { try Quotes.validate(content) } catch {
            throw NorthwindError.importFailed("The quote cannot be imported here: \(error.description)")
        }
        if let number = try String.fetchOne(db, sql: "SELECT number FROM quotes WHERE recordID = ?", arguments: [recordID]) {
            let current = try Quotes.quote(number: number, db)
            // Names are this store's: the package's may differ and still name the same products.
            func unnamed(_ content: QuoteContent) -> QuoteContent {
                var content = content
                for index in content.lines.indices { content.lines[index].productName = "" }
                return content
            }
            if unnamed(current.content) == unnamed(content) {
                plan.unchanged += 1
            } else {
                try Quotes.applyImported(content, over: current, db)
                plan.updates.append("quote \(number) to the package's content")
            }
        } else {
            // Numbers are this site's series, so that no import takes another shop's: the package's is kept as
            // the quote's source number. A restored store gives out none until its first full sync.
            try ShopSync.requireSyncedSinceRestore(db)
            let number = try StoreMetadata.nextQuoteNumber(db)
            try Quotes.insertImportedQuote(content, number: number, sourceNumber: document.number, recordID: recordID, db)
            plan.adds.append(
                "quote \(number) (their \(document.number)) for \(document.customer.companyName), \(counted(lines.count, "line"))"
            )
        }
        return plan
    }

    private static func importOrder(_ document: OrderDocument, recordID: String, _ db: Database) throws -> DocumentImportPlan {
        var plan = DocumentImportPlan(kind: .order, title: "Order \(document.number)", adds: [], updates: [], unchanged: 0)
        if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM orders WHERE recordID = ?)", arguments: [recordID]) == true {
            plan.unchanged += 1
            return plan
        }
        let customerCode = try ensureCustomer(document.customer, plan: &plan, db)
        let draft = OrderDraft(
            customerCode: customerCode,
            employeeID: nil,
            orderDate: document.orderDate,
            requiredDate: document.requiredDate,
            freight: document.freight,
            lines: try document.lines.map {
                OrderLineDraft(productID: try productID($0.product, db), quantity: $0.quantity, discount: $0.discount, unitPrice: $0.unitPrice)
            }
        )
        // This site's next number, as for any order taken here; the package's is kept as the source number.
        let detail = try Orders.insertOrder(draft, orderDate: document.orderDate, recordID: recordID, db)
        try db.execute(sql: "UPDATE orders SET sourceNumber = ? WHERE id = ?", arguments: [document.number, detail.order.id])
        plan.adds.append(
            "order \(detail.order.number) (their \(document.number)) for \(document.customer.companyName), "
                + "\(counted(draft.lines.count, "line")), to ship from here"
        )
        return plan
    }

    private static func importCatalog(
        _ document: CatalogDocument,
        media: [String: Data],
        binaries: ExternalStorage,
        _ db: Database
    ) throws -> DocumentImportPlan {
        var plan = DocumentImportPlan(
            kind: .catalog,
            title: document.onlyCategory.map { "Catalogue: \($0)" } ?? "Catalogue",
            adds: [],
            updates: [],
            unchanged: 0
        )
        var categoryIDs: [String: Int64] = [:]
        for category in document.categories {
            if let id = try Int64.fetchOne(
                db,
                sql: "SELECT id FROM categories WHERE recordID = ? OR name = ? ORDER BY recordID = ? DESC LIMIT 1",
                arguments: [category.recordID, category.name, category.recordID]
            ) {
                categoryIDs[category.name] = id
                plan.unchanged += 1
                continue
            }
            var row = Category(recordID: category.recordID, name: category.name, description: category.description)
            try row.insert(db)
            let id = row.id ?? 0
            if let path = category.picture, let bytes = media[path], let picture = Picture.unwrap([UInt8](bytes)) {
                try binaries.save(
                    db,
                    BinaryContent(bytes: Data(picture.bytes), contentType: picture.contentType),
                    table: "categories",
                    attribute: "picture",
                    id: id
                )
            }
            categoryIDs[category.name] = id
            plan.adds.append("category \(category.name)\(category.picture == nil ? "" : ", with its picture")")
        }
        for product in document.products {
            if let row = try Row.fetchOne(
                db,
                sql: "SELECT id, unitPriceCents FROM products WHERE recordID = ? OR name = ? ORDER BY recordID = ? DESC LIMIT 1",
                arguments: [product.recordID, product.name, product.recordID]
            ) {
                let price = Money(cents: row["unitPriceCents"])
                if price == product.unitPrice {
                    plan.unchanged += 1
                } else {
                    try db.execute(
                        sql: "UPDATE products SET unitPriceCents = ?, version = version + 1 WHERE id = ?",
                        arguments: [product.unitPrice.cents, row["id"] as Int64]
                    )
                    plan.updates.append("the price of \(product.name): \(price) → \(product.unitPrice)")
                }
                continue
            }
            var row = Product(
                name: product.name,
                categoryID: product.category.flatMap { categoryIDs[$0] },
                quantityPerUnit: product.quantityPerUnit,
                unitPrice: product.unitPrice,
                reorderLevel: product.reorderLevel,
                discontinued: product.discontinued
            )
            row.recordID = product.recordID
            try row.insert(db)
            plan.adds.append("product \(product.name) at \(product.unitPrice)")
        }
        return plan
    }

    /// The customer's code here: theirs if a customer has it, after adding them when none does.
    private static func ensureCustomer(_ party: DocumentParty, plan: inout DocumentImportPlan, _ db: Database) throws -> String {
        if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM customers WHERE code = ?)", arguments: [party.code]) == true { return party.code }
        // As a customer added by hand: the sync-given form names only customers that sync brought.
        guard FieldRule.isCustomerCode(party.code, renamedBySync: false) else { throw NorthwindError.invalid("code", FieldRule.customerCodeMessage) }
        var customer = Customer(code: party.code, companyName: party.companyName)
        (customer.contactName, customer.address, customer.city, customer.region) = (party.contactName, party.address, party.city, party.region)
        (customer.postalCode, customer.country, customer.phone) = (party.postalCode, party.country, party.phone)
        try customer.insert(db)
        plan.adds.append("customer \(party.code) (\(party.companyName))")
        return party.code
    }

    /// A product here: by record id (stores that sync share them), else by its exact name.
    private static func productID(_ product: DocumentProductRef, _ db: Database) throws -> Int64 {
        guard
            let id = try Int64.fetchOne(
                db,
                sql: "SELECT id FROM products WHERE recordID = ? OR name = ? ORDER BY recordID = ? DESC LIMIT 1",
                arguments: [product.recordID, product.name, product.recordID]
            )
        else {
            throw NorthwindError.importFailed(
                "This store has no product \(product.name): import a catalogue that has it first. Nothing was imported."
            )
        }
        return id
    }
}
