import Foundation
import NorthwindStore

/// UIDocument's states, as flags: several may hold at once (in conflict and read-only, say).
public struct DocumentState: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let normal: DocumentState = []
    public static let closed = DocumentState(rawValue: 1)
    /// Two installations changed the same field; the page shows both sides.
    public static let inConflict = DocumentState(rawValue: 2)
    /// The last save failed; the draft is kept and the save retried. Only the editor (the page) knows this.
    public static let savingError = DocumentState(rawValue: 4)
    /// Someone else is editing it, or it is converted or withdrawn.
    public static let editingDisabled = DocumentState(rawValue: 8)
    /// A save is on its way. Only the editor (the page) knows this.
    public static let progressAvailable = DocumentState(rawValue: 16)

    private static let named: [(DocumentState, String)] = [
        (.closed, "closed"), (.inConflict, "inConflict"), (.savingError, "savingError"), (.editingDisabled, "editingDisabled"),
        (.progressAvailable, "progressAvailable"),
    ]

    /// The flags by UIDocument's names, as the page shows them; empty for normal.
    public var names: [String] { Self.named.filter { contains($0.0) }.map(\.1) }
}

public enum QuoteStatus: String, Codable, Sendable, CaseIterable {
    case draft, converted, withdrawn
}

/// One line of a quote, with the price as quoted: converting the quote keeps it, whatever the list price is then.
public struct QuoteLine: Codable, Sendable, Equatable {
    /// The line's record id: it stays with the line through edits, undo and sync.
    public var lineID: String
    public var productID: Int64
    public var productName: String
    public var quantity: Int
    public var unitPrice: Money
    public var discount: Double

    public init(
        lineID: String = UUID().uuidString.lowercased(),
        productID: Int64,
        productName: String = "",
        quantity: Int,
        unitPrice: Money,
        discount: Double = 0
    ) {
        self.lineID = lineID
        self.productID = productID
        self.productName = productName
        self.quantity = quantity
        self.unitPrice = unitPrice
        self.discount = discount
    }

    /// The exact total, as the order line it becomes charges (`OrderLine.total`), never the classic reports'
    /// float32 ExtendedPrice.
    public var total: Money {
        OrderLine(orderID: 0, productID: productID, unitPrice: unitPrice, quantity: quantity, discount: discount).total
    }
}

/// What a quote says: the document's content, as versions keep it and packages carry it.
public struct QuoteContent: Codable, Sendable, Equatable {
    public static let schemaVersion = 1
    public var schemaVersion = Self.schemaVersion
    public var customerCode: String
    public var validUntil: LocalDate
    public var notes: String
    public var lines: [QuoteLine]

    public init(customerCode: String, validUntil: LocalDate, notes: String = "", lines: [QuoteLine]) {
        self.customerCode = customerCode
        self.validUntil = validUntil
        self.notes = notes
        self.lines = lines
    }

    public var total: Money { lines.reduce(.zero) { $0 + $1.total } }
}

/// A quote as it stands, with its content.
public struct Quote: Sendable, Equatable {
    public var number: String
    public var recordID: String
    public var status: QuoteStatus
    /// The order it became.
    public var orderNumber: String?
    public var customerName: String
    public var content: QuoteContent
    /// Goes up with every save here and every change sync brings: a save names the revision it started from.
    public var revision: Int
    public var createdBy: String?
    public var createdAt: String
    public var updatedAt: String
}

/// A quote in a list.
public struct QuoteSummary: Sendable, Equatable {
    public var number: String
    public var customerName: String
    public var status: QuoteStatus
    public var validUntil: LocalDate
    public var total: Money
    public var lineCount: Int
    public var updatedAt: String
    public var orderNumber: String?
}

/// An undo step, named as a person says it ("Change quantity of Chai"): the fields it changed, before and after.
/// The editor applies and reverses steps; the store keeps them, so that undo goes on after a reload or after the
/// tab was closed. A line added or removed has its whole line (JSON) as `after` or `before`.
public struct QuoteStep: Codable, Sendable, Equatable {
    public struct Change: Codable, Sendable, Equatable {
        public var field: String
        public var lineID: String?
        public var before: String?
        public var after: String?
    }
    public var name: String
    public var changes: [Change]
}

/// The open document's undo and redo stacks, newest last.
public struct QuoteHistory: Codable, Sendable, Equatable {
    /// At least this many levels of undo are kept; older steps drop off.
    public static let levels = 100
    public var undo: [QuoteStep] = []
    public var redo: [QuoteStep] = []
    public init(undo: [QuoteStep] = [], redo: [QuoteStep] = []) {
        self.undo = undo
        self.redo = redo
    }
}

/// Who edits.
public struct QuoteEditor: Sendable, Equatable, Codable {
    public var login: String
    public var name: String
    public init(login: String, name: String) {
        self.login = login
        self.name = name
    }
}

/// A quote opened for editing: its content, its state, who holds it, and (for the holder) the undo history.
public struct QuoteSession: Sendable {
    public var quote: Quote
    public var state: DocumentState
    /// Who is editing it now, if anyone.
    public var editor: QuoteEditor?
    public var history: QuoteHistory
    /// Same-field edits from two installations, both sides kept.
    public var conflicts: [SyncConflict]
}

/// What a save did.
public struct QuoteSaved: Sendable {
    /// The quote after the save: the editor's changes, and others' changes to other fields merged in.
    public var quote: Quote
    /// An hourly version was made with this save.
    public var madeVersion: Bool
}

/// A saved version of a quote: an immutable snapshot that names its parents.
public struct QuoteVersion: Sendable, Equatable {
    public var id: String
    public var parentIDs: [String]
    public var label: String
    public var author: String?
    public var createdAt: String
    public var content: QuoteContent
}
