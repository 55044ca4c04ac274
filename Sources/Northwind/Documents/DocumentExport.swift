import Foundation
import GRDB
import Mustache
import NorthwindStore
import Synchronization

/// A document made into a package: its content, the pictures it names, a printable rendition and a thumbnail.
struct PackageParts {
    var kind: DocumentKind
    var documentID: String
    var title: String
    var content: Data
    /// `media/<sha256>.<ext>` → bytes.
    var media: [String: Data] = [:]
    var rendition: Data
    var lineCount: Int
}

extension Documents {
    /// Writes a quote as a `.nwdoc` package to `file`.
    public func exportQuote(number: String, to file: URL) async throws(NorthwindError) {
        let quote = try await self.backoffice.quotes.quote(number: number)
        let (customer, refs) = try await read { db in
            (try Records.customer(code: quote.content.customerCode, db), try Self.productRefs(db, ids: quote.content.lines.map(\.productID)))
        }
        let document = QuoteDocument(
            number: quote.number,
            status: quote.status,
            customer: Self.party(customer),
            validUntil: quote.content.validUntil,
            notes: quote.content.notes,
            lines: quote.content.lines.map { line in
                DocumentLine(
                    lineID: line.lineID,
                    product: refs[line.productID] ?? DocumentProductRef(recordID: "", name: line.productName),
                    quantity: line.quantity,
                    unitPrice: line.unitPrice,
                    discount: line.discount,
                    total: line.total
                )
            },
            total: quote.content.total
        )
        try Self.writePackage(
            PackageParts(
                kind: .quote,
                documentID: quote.recordID,
                title: "Quote \(quote.number)",
                content: try Self.contentJSON(document),
                rendition: try Renditions.render("quote", QuoteRendition(document: document, customerName: customer.companyName)),
                lineCount: document.lines.count
            ),
            to: file
        )
    }

    /// Writes an order, with what its invoice says, as a `.nwdoc` package to `file`.
    public func exportOrder(number: String, to file: URL) async throws(NorthwindError) {
        let detail = try await backoffice.orders.order(number: number)
        let refs = try await read { db in try Self.productRefs(db, ids: detail.lines.map(\.line.productID)) }
        let document = OrderDocument(
            number: detail.order.number,
            status: detail.order.status,
            orderDate: detail.order.orderDate,
            requiredDate: detail.order.requiredDate,
            shippedDate: detail.order.shippedDate,
            customer: Self.party(detail.customer),
            employee: detail.employee?.fullName,
            shipper: detail.shipper?.companyName,
            freight: detail.order.freight,
            lines: detail.lines.map { line in
                DocumentLine(
                    lineID: line.line.recordID,
                    product: refs[line.line.productID] ?? DocumentProductRef(recordID: "", name: line.productName),
                    quantity: line.line.quantity,
                    unitPrice: line.line.unitPrice,
                    discount: line.line.discount,
                    total: line.total
                )
            },
            subtotal: detail.subtotal,
            total: detail.total
        )
        try Self.writePackage(
            PackageParts(
                kind: .order,
                documentID: detail.order.recordID,
                title: "Order \(detail.order.number)",
                content: try Self.contentJSON(document),
                rendition: try Renditions.render("order", OrderRendition(document: document)),
                lineCount: document.lines.count
            ),
            to: file
        )
    }

    /// Writes the catalogue (or one category of it) as a `.nwdoc` package to `file`: products with their prices,
    /// and their categories with pictures.
    public func exportCatalog(categoryID: Int64? = nil, to file: URL) async throws(NorthwindError) {
        let (categories, products) = try await read { db in
            var categories = Category.order(Column("name"))
            var products = Product.order(Column("name"))
            if let categoryID {
                categories = categories.filter(Column("id") == categoryID)
                products = products.filter(Column("categoryID") == categoryID)
            }
            let found = try categories.fetchAll(db)
            if let categoryID, found.isEmpty { throw NorthwindError.notFound(entity: "category", key: "#\(categoryID)") }
            return (found, try products.fetchAll(db))
        }
        var media: [String: Data] = [:]
        var documentCategories: [CatalogDocument.Category] = []
        for category in categories {
            var entry = CatalogDocument.Category(recordID: category.recordID, name: category.name, description: category.description)
            if let picture = try await backoffice.catalogue.picture(categoryID: category.id ?? 0) {
                let path = "media/\(RecordMapping.sha256(picture.bytes)).\(Self.pictureExtension(picture.contentType))"
                media[path] = picture.bytes
                entry.picture = path
            }
            documentCategories.append(entry)
        }
        let names = Dictionary(uniqueKeysWithValues: categories.compactMap { category in category.id.map { ($0, category.name) } })
        let document = CatalogDocument(
            onlyCategory: categoryID.flatMap { names[$0] },
            categories: documentCategories,
            products: products.map { product in
                CatalogDocument.Product(
                    recordID: product.recordID,
                    name: product.name,
                    category: product.categoryID.flatMap { names[$0] },
                    quantityPerUnit: product.quantityPerUnit,
                    unitPrice: product.unitPrice,
                    reorderLevel: product.reorderLevel,
                    discontinued: product.discontinued
                )
            }
        )
        try Self.writePackage(
            PackageParts(
                kind: .catalog,
                documentID: UUID().uuidString.lowercased(),
                title: document.onlyCategory.map { "Catalogue: \($0)" } ?? "Catalogue",
                content: try Self.contentJSON(document),
                media: media,
                rendition: try Renditions.render("catalog", CatalogRendition(document: document)),
                lineCount: document.products.count
            ),
            to: file
        )
    }

    static func party(_ customer: Customer) -> DocumentParty {
        DocumentParty(
            code: customer.code,
            companyName: customer.companyName,
            contactName: customer.contactName,
            address: customer.address,
            city: customer.city,
            region: customer.region,
            postalCode: customer.postalCode,
            country: customer.country,
            phone: customer.phone
        )
    }

    static func productRefs(_ db: Database, ids: [Int64]) throws -> [Int64: DocumentProductRef] {
        var refs: [Int64: DocumentProductRef] = [:]
        for product in try Product.filter(keys: ids).fetchAll(db) {
            refs[product.id ?? 0] = DocumentProductRef(recordID: product.recordID, name: product.name)
        }
        return refs
    }

    static func pictureExtension(_ contentType: String) -> String {
        switch contentType {
        case "image/png": "png"
        case "image/jpeg": "jpg"
        case "image/gif": "gif"
        case "image/bmp": "bmp"
        default: "bin"
        }
    }

    static func contentJSON(_ value: some Encodable) throws(NorthwindError) -> Data { try BackupWriter.encode(value) }

    /// The package: `mimetype` first and stored, then the manifest, the content, the pictures, the thumbnail and
    /// the rendition; written under a hidden name and renamed, so a reader never sees half of one.
    static func writePackage(_ parts: PackageParts, to file: URL) throws(NorthwindError) {
        var files: [(path: String, mediaType: String, data: Data)] = [
            (parts.kind.root, "application/json", parts.content)
        ]
        for (path, data) in parts.media.sorted(by: { $0.key < $1.key }) {
            files.append((path, "image/" + (path.split(separator: ".").last.map(String.init) ?? "png"), data))
        }
        files.append(("previews/thumbnail.png", "image/png", Thumbnail.png(kind: parts.kind, lines: parts.lineCount)))
        files.append(("rendition/document.html", "text/html", parts.rendition))
        let now = Timestamp.now.description
        let manifest = DocumentManifest(
            kind: parts.kind,
            documentId: parts.documentID,
            versionId: UUID().uuidString.lowercased(),
            parentVersionIds: [],
            createdAt: now,
            modifiedAt: now,
            root: parts.kind.root,
            entries: files.map { .init(path: $0.path, mediaType: $0.mediaType, size: Int64($0.data.count), sha256: RecordMapping.sha256($0.data)) }
        )
        let partial = file.deletingLastPathComponent().appendingPathComponent("." + file.lastPathComponent + ".partial")
        try? FileManager.default.removeItem(at: partial)
        defer { try? FileManager.default.removeItem(at: partial) }
        let writer = try ArchiveWriter(creating: partial, mediaType: parts.kind.mediaType)
        try writer.add("manifest.json", try BackupWriter.encode(manifest), compress: true)
        for entry in files { try writer.add(entry.path, entry.data, compress: !entry.mediaType.hasPrefix("image/")) }
        do {
            if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
            try FileManager.default.moveItem(at: partial, to: file)
        } catch {
            throw .storeUnavailable("Cannot write \(file.path): \(error.localizedDescription)")
        }
    }
}

/// The printable renditions: HTML with no scripts, from templates that escape every value.
enum Renditions {
    static func render(_ name: String, _ model: Any) throws(NorthwindError) -> Data {
        Data(try template(name).render(readOnce(model)).utf8)
    }

    /// The model's stored properties as dictionaries and arrays, each object reflected once. Mustache would build a
    /// `Mirror` and scan every property at each tag, which was most of an invoice's rendering, and an order's
    /// execution renders its invoice. A value that describes itself (text, a number) stays as it is; a nil
    /// property is left out, which Mustache reads as it reads nil.
    static func readOnce(_ value: Any) -> Any {
        // An array describes itself too, but its elements are objects to read: it comes first.
        if let array = value as? [Any] { return array.compactMap { present($0).map(readOnce) } }
        if value is any CustomStringConvertible { return value }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct?, .class?:
            var fields: [String: Any] = [:]
            for child in mirror.children {
                guard let label = child.label, let read = present(child.value) else { continue }
                fields[label] = readOnce(read)
            }
            return fields
        default: return value
        }
    }

    /// The value an optional holds, or nil; any other value as it is.
    private static func present(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first.map(\.value)
    }

    /// Each template is read and parsed once: an order's execution renders its invoice, and parsing the template
    /// each time was a fifth of the execution's CPU (`northwind-sync-bench shops`, 2026-11-29).
    private static let parsed = Mutex<[String: MustacheTemplate]>([:])

    private static func template(_ name: String) throws(NorthwindError) -> MustacheTemplate {
        if let template = parsed.withLock({ $0[name] }) { return template }
        guard let url = Bundle.module.url(forResource: name, withExtension: "mustache", subdirectory: "Renditions"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { throw .storeUnavailable("The \(name) rendition's template is missing from the installation.") }
        let template: MustacheTemplate
        do {
            template = try MustacheTemplate(string: text)
        } catch {
            throw .storeUnavailable("The \(name) rendition's template is broken: \(error)")
        }
        parsed.withLock { $0[name] = template }
        return template
    }
}

struct RenditionLine {
    var name: String
    var quantity: Int
    var unitPrice: String
    var discount: String
    var total: String

    init(_ line: DocumentLine) {
        name = line.product.name
        quantity = line.quantity
        unitPrice = line.unitPrice.description
        discount = discountText(line.discount)
        total = line.total.description
    }
}

struct QuoteRendition {
    var number: String
    var customer: DocumentParty
    var validUntil: String
    var notes: String
    var lines: [RenditionLine]
    var total: String

    init(document: QuoteDocument, customerName: String) {
        number = document.number
        customer = document.customer
        validUntil = document.validUntil.description
        notes = document.notes
        lines = document.lines.map(RenditionLine.init)
        total = document.total.description
    }
}

struct OrderRendition {
    var number: String
    var customer: DocumentParty
    var orderDate: String
    var shippedDate: String?
    var shipper: String?
    var lines: [RenditionLine]
    var subtotal: String
    var freight: String
    var total: String

    init(document: OrderDocument) {
        number = document.number
        customer = document.customer
        orderDate = document.orderDate.description
        shippedDate = document.shippedDate?.description
        shipper = document.shipper
        lines = document.lines.map(RenditionLine.init)
        subtotal = document.subtotal.description
        freight = document.freight.description
        total = document.total.description
    }
}

struct CatalogRendition {
    struct Row {
        var name: String
        var category: String
        var quantityPerUnit: String
        var unitPrice: String
    }
    var title: String
    var products: [Row]

    init(document: CatalogDocument) {
        title = document.onlyCategory.map { "Price list: \($0)" } ?? "Price list"
        products = document.products.filter { !$0.discontinued }.map {
            Row(name: $0.name, category: $0.category ?? "", quantityPerUnit: $0.quantityPerUnit ?? "", unitPrice: $0.unitPrice.description)
        }
    }
}
