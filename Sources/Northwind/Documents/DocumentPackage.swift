import Foundation
import NorthwindStore

/// What a `.nwdoc` package carries.
public enum DocumentKind: String, Codable, Sendable, CaseIterable {
    case quote, order, catalog
    case purchaseOrder = "purchase-order"
    case invoice
    case creditNote = "credit-note"

    public var mediaType: String { "application/vnd.northwind.\(rawValue)+zip" }
    var root: String { "content/\(rawValue).json" }
}

/// `manifest.json` of a `.nwdoc`: what the package holds, who made it, and how to check it (docs/documents.md).
// guide: begin document-manifest
public struct DocumentManifest: Codable, Sendable, Equatable {
    public static let format = "northwind-document"
    /// The format this build writes, and the newest it reads.
    public static let formatVersion = 1

    public struct Generator: Codable, Sendable, Equatable {
        public var app = "northwind"
        public var version = NorthwindVersion.current
    }

    public var format = Self.format
    public var kind: DocumentKind
    public var formatVersion = Self.formatVersion
    /// The oldest reader that understands this package.
    public var minReaderVersion = 1
    /// The document's own id (a quote's or an order's record id; a new one for each catalogue).
    public var documentId: String
    /// This snapshot's id.
    public var versionId: String
    public var parentVersionIds: [String]
    public var createdAt: String
    public var modifiedAt: String
    public var generator = Generator()
    /// The content entry.
    public var root: String
    /// Every entry but `mimetype` and this manifest.
    public var entries: [BackupManifest.Entry]
}
// guide: end document-manifest

/// A party (the customer) as a document names it: enough to find it, or add it, in another store.
public struct DocumentParty: Codable, Sendable, Equatable {
    public var code: String
    public var companyName: String
    public var contactName: String?
    public var address: String?
    public var city: String?
    public var region: String?
    public var postalCode: String?
    public var country: String?
    public var phone: String?
}

/// A product as a document names it: by its record id, which stores that sync share, and by its name.
public struct DocumentProductRef: Codable, Sendable, Equatable {
    public var recordID: String
    public var name: String
}

public struct DocumentLine: Codable, Sendable, Equatable {
    public var lineID: String
    public var product: DocumentProductRef
    public var quantity: Int
    /// Cents.
    public var unitPrice: Money
    public var discount: Double
    public var total: Money
}

/// `content/quote.json`.
public struct QuoteDocument: Codable, Sendable, Equatable {
    public static let schemaVersion = 1
    public var schemaVersion = Self.schemaVersion
    public var number: String
    public var status: QuoteStatus
    public var customer: DocumentParty
    public var validUntil: LocalDate
    public var notes: String
    public var lines: [DocumentLine]
    public var total: Money
}

/// `content/order.json`: the order with what its invoice says.
public struct OrderDocument: Codable, Sendable, Equatable {
    public static let schemaVersion = 1
    public var schemaVersion = Self.schemaVersion
    public var number: String
    public var status: OrderStatus
    public var orderDate: LocalDate
    public var requiredDate: LocalDate?
    public var shippedDate: LocalDate?
    public var customer: DocumentParty
    public var employee: String?
    public var shipper: String?
    public var freight: Money
    public var lines: [DocumentLine]
    public var subtotal: Money
    public var total: Money
}

/// `content/catalog.json`: products with their prices, and their categories with pictures.
public struct CatalogDocument: Codable, Sendable, Equatable {
    public struct Category: Codable, Sendable, Equatable {
        public var recordID: String
        public var name: String
        public var description: String?
        /// The picture's entry, `media/<sha256>.<ext>`.
        public var picture: String?
    }
    public struct Product: Codable, Sendable, Equatable {
        public var recordID: String
        public var name: String
        public var category: String?
        public var quantityPerUnit: String?
        public var unitPrice: Money
        public var reorderLevel: Int
        public var discontinued: Bool
    }
    public static let schemaVersion = 1
    public var schemaVersion = Self.schemaVersion
    /// The one category it was limited to, if any.
    public var onlyCategory: String?
    public var categories: [Category]
    public var products: [Product]
}

/// What an import would do, said before it does it.
public struct DocumentImportPlan: Sendable, Equatable {
    public var kind: DocumentKind
    public var title: String
    public var adds: [String]
    public var updates: [String]
    /// Things left as they are, and why ("Chai: price unchanged").
    public var unchanged: Int

    public var lines: [String] {
        var lines = ["\(title):"]
        if adds.isEmpty && updates.isEmpty { lines.append("  nothing to add or update: this store has it all.") }
        lines += adds.map { "  add " + $0 }
        lines += updates.map { "  update " + $0 }
        if unchanged > 0 { lines.append("  \(counted(unchanged, "record")) already as the package has \(unchanged == 1 ? "it" : "them")") }
        return lines
    }
}
