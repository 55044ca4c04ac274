import Foundation
import GRDB
import NorthwindStore

/// Quotes: documents a sales rep prepares over several calls, then converts into an order at the prices quoted.
///
/// One person edits a quote at a time, here: opening it takes a lease (renewed by every save and every ping from
/// the page); a second person sees it read-only, and may take it over, which the first is told at their next ping.
/// Saves are three-way: the editor sends the content they started from and the content they have, and only the
/// fields they changed are written, so a change that sync brought meanwhile to another field stands. Two
/// installations that change the same field are sync's business: the later value stands, the other goes to the
/// conflict inbox, and the quote shows both until someone chooses.
extension Quotes {
    /// How long a lease lasts without a save or a ping.
    public static let quoteLease: Int64 = 90

    /// Versions are made by themselves this often while a quote is edited.
    public static let quoteVersionInterval: Int64 = 3600

    /// Creates a quote, and its first version.
    public func create(_ content: QuoteContent, by editor: QuoteEditor) async throws(NorthwindError) -> Quote {
        try Self.validate(content)
        try Self.validateValidity(content, base: nil)
        return try await write { db in
            try ShopSync.requireSyncedSinceRestore(db)
            let customerID = try Records.customer(code: content.customerCode, db).id ?? 0
            let number = try StoreMetadata.nextQuoteNumber(db)
            try db.execute(
                sql: "INSERT INTO quotes (number, customerID, validUntil, notes, createdBy) VALUES (?, ?, ?, ?, ?)",
                arguments: [number, customerID, content.validUntil.description, content.notes, editor.login]
            )
            let quoteID = db.lastInsertedRowID
            for (position, line) in content.lines.enumerated() {
                try Self.insertQuoteLine(line, quoteID: quoteID, position: position, db)
            }
            let quote = try Self.quote(number: number, db)
            try Self.insertVersion(quote, label: "Created", author: editor.name, db)
            return quote
        }
    }

    /// A line for a product at its list price today, as a new line of a quote starts.
    public func newLine(productID: Int64, quantity: Int, discount: Double = 0) throws(NorthwindError) -> QuoteLine {
        let product = try backoffice.catalogue.product(id: productID).product
        // As on an order: a quote for what can no longer be sold could never become one.
        if product.discontinued { throw .invalid("productID", Self.discontinuedMessage(product.name)) }
        return QuoteLine(productID: productID, productName: product.name, quantity: quantity, unitPrice: product.unitPrice, discount: discount)
    }

    public func quote(number: String) async throws(NorthwindError) -> Quote {
        try await read { db in try Self.quote(number: number, db) }
    }

    /// Quotes, newest change first; drafts only unless `all`.
    public func list(all: Bool = false, limit: Int = 100) async throws(NorthwindError) -> [QuoteSummary] {
        try checkPaging(limit: limit, offset: 0)
        return try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT q.number, c.companyName, q.status, q.validUntil, q.updatedAt, q.orderNumber,
                      count(l.id) AS lineCount,
                      ifnull(sum(line_total_cents(l.unitPriceCents, l.quantity, l.discount)), 0) AS totalCents
                    FROM quotes q JOIN customers c ON c.id = q.customerID LEFT JOIN quote_lines l ON l.quoteID = q.id
                    \(all ? "" : "WHERE q.status = 'draft'")
                    GROUP BY q.id ORDER BY q.updatedAt DESC, q.id DESC LIMIT ?
                    """,
                arguments: [limit]
            ).map { row in
                QuoteSummary(
                    number: row["number"],
                    customerName: row["companyName"],
                    status: QuoteStatus(rawValue: row["status"]) ?? .draft,
                    validUntil: LocalDate(row["validUntil"] as String) ?? .today,
                    total: Money(cents: row["totalCents"]),
                    lineCount: row["lineCount"],
                    updatedAt: row["updatedAt"],
                    orderNumber: row["orderNumber"]
                )
            }
        }
    }

    // MARK: Editing

    /// Opens a quote for `editor`: they hold it unless someone else's lease still runs, and then they see it
    /// read-only with that person's name. A converted or withdrawn quote is read-only for everyone.
    public func open(number: String, editor: QuoteEditor) async throws(NorthwindError) -> QuoteSession {
        try await write { db in
            let quote = try Self.quote(number: number, db)
            if quote.status == .draft { _ = try Self.takeLease(db, quote: quote, editor: editor, force: false) }
            return try Self.session(db, quote: quote, for: editor)
        }
    }

    /// Takes a quote over from whoever edits it; they are told at their next save or ping.
    public func takeOver(number: String, editor: QuoteEditor) async throws(NorthwindError) -> QuoteSession {
        try await write { db in
            let quote = try Self.quote(number: number, db)
            guard quote.status == .draft else { throw NorthwindError.invalidState("Quote \(number) is \(quote.status.rawValue); nobody edits it.") }
            _ = try Self.takeLease(db, quote: quote, editor: editor, force: true)
            return try Self.session(db, quote: quote, for: editor)
        }
    }

    /// Renews the lease while the page is open; tells the editor if someone took the quote over.
    public func ping(number: String, editor: QuoteEditor) async throws(NorthwindError) -> QuoteSession {
        try await write { db in
            let quote = try Self.quote(number: number, db)
            try Self.checkHolder(db, quote: quote, editor: editor)
            return try Self.session(db, quote: quote, for: editor)
        }
    }

    /// Lets the quote go when the page closes, so the next person need not wait for the lease to run out. The undo
    /// history stays for this editor's next visit.
    public func close(number: String, editor: QuoteEditor) async throws(NorthwindError) {
        try await write { db in
            try db.execute(
                sql: """
                    UPDATE quote_sessions SET leaseUntil = ? WHERE editor = ?
                    AND quoteID = (SELECT id FROM quotes WHERE number = ?)
                    """,
                arguments: [Timestamp.now.description, editor.login, number]
            )
        }
    }

    /// The autosave: writes the fields the editor changed from `base` to `content`, keeps their undo history, and
    /// makes the hourly version when one is due. Refused, changing nothing, when the editor no longer holds the
    /// quote or the content breaks a rule.
    public func saveDraft(
        number: String,
        base: QuoteContent,
        content: QuoteContent,
        history: QuoteHistory,
        editor: QuoteEditor
    ) async throws(NorthwindError) -> QuoteSaved {
        try Self.validate(content)
        try Self.validateValidity(content, base: base)
        try Self.validateIDs(base, field: "base")
        try Self.validate(history)
        let historyJSON = try BackupWriter.encode(history)
        return try await write { db in
            let before = try Self.quote(number: number, db)
            try Self.checkHolder(db, quote: before, editor: editor)
            try Self.apply(from: base, to: content, quote: before, db)
            try db.execute(
                sql: "UPDATE quote_sessions SET history = ?, changedAt = ? WHERE quoteID = (SELECT id FROM quotes WHERE number = ?)",
                arguments: [String(decoding: historyJSON, as: UTF8.self), Timestamp.now.description, number]
            )
            var quote = try Self.quote(number: number, db)
            let last = try String.fetchOne(
                db,
                sql: "SELECT max(createdAt) FROM quote_versions WHERE quoteID = (SELECT id FROM quotes WHERE number = ?)",
                arguments: [number]
            ).flatMap(Timestamp.init)
            let due = last.map { Timestamp.now.milliseconds - $0.milliseconds >= Self.quoteVersionInterval * 1000 } ?? true
            if due && quote.content != before.content {
                try Self.insertVersion(quote, label: "Hourly", author: editor.name, db)
                quote = try Self.quote(number: number, db)
            }
            return QuoteSaved(quote: quote, madeVersion: due && quote.content != before.content)
        }
    }

    // MARK: Versions

    /// Saves the quote as it stands as a version, whose parents are the versions it follows.
    public func saveVersion(number: String, label: String, editor: QuoteEditor) async throws(NorthwindError) -> QuoteVersion {
        let label = label.trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...200).contains(label.count) else { throw .invalid("label", "must be 1 to 200 characters") }
        return try await write { db in
            let quote = try Self.quote(number: number, db)
            return try Self.insertVersion(quote, label: label, author: editor.name, db)
        }
    }

    /// A quote's versions, newest first.
    public func versions(number: String) async throws(NorthwindError) -> [QuoteVersion] {
        try await read { db in
            let quote = try Self.quote(number: number, db)
            return try Self.versions(db, quoteRecordID: quote.recordID)
        }
    }

    /// Makes a version's content the quote's again (only the fields that differ are written), and records that as
    /// a version of its own.
    public func restoreVersion(number: String, versionID: String, editor: QuoteEditor) async throws(NorthwindError) -> Quote {
        try await write { db in
            let quote = try Self.quote(number: number, db)
            try Self.checkHolder(db, quote: quote, editor: editor)
            guard let version = try Self.versions(db, quoteRecordID: quote.recordID).first(where: { $0.id == versionID }) else {
                throw NorthwindError.notFound(entity: "version", key: versionID)
            }
            try Self.apply(from: quote.content, to: version.content, quote: quote, db)
            let restored = try Self.quote(number: number, db)
            try Self.insertVersion(restored, label: "Restored “\(version.label)” of \(version.createdAt.prefix(16))", author: editor.name, db)
            return try Self.quote(number: number, db)
        }
    }

    // MARK: Converting

    /// Turns a draft quote into an order in one step, at the prices and discounts quoted. The quote is then
    /// converted, names its order, and can no longer change. Only whoever holds the quote converts it: a person who
    /// sees it read-only is refused, as for a save.
    public func convert(
        number: String,
        employeeID: Int64?,
        requiredDate: LocalDate? = nil,
        editor: QuoteEditor
    ) async throws(NorthwindError) -> OrderDetail {
        try await write { db in
            // Read inside the transaction: an autosave a moment before is in the order, and two people converting at
            // once make one order.
            let quote = try Self.quote(number: number, db)
            guard quote.status == .draft else {
                throw NorthwindError.invalidState(
                    "Quote \(number) is \(quote.status.rawValue)\(quote.orderNumber.map { " (order \($0))" } ?? ""); only a draft converts."
                )
            }
            try Self.checkHolder(db, quote: quote, editor: editor)
            let draft = OrderDraft(
                customerCode: quote.content.customerCode,
                employeeID: employeeID,
                requiredDate: requiredDate,
                lines: quote.content.lines.map {
                    OrderLineDraft(productID: $0.productID, quantity: $0.quantity, discount: $0.discount, unitPrice: $0.unitPrice)
                }
            )
            try Orders.validate(lines: draft.lines)
            let order = try Orders.insertOrder(draft, orderDate: .today, db)
            try db.execute(
                sql: "UPDATE quotes SET status = 'converted', orderNumber = ?, updatedAt = ?, version = version + 1 WHERE number = ?",
                arguments: [order.order.number, Timestamp.now.description, number]
            )
            try db.execute(sql: "DELETE FROM quote_sessions WHERE quoteID = (SELECT id FROM quotes WHERE number = ?)", arguments: [number])
            return order
        }
    }

    // MARK: Imports

    /// A quote from a package: its own record id, lines and number (the caller picks a free one).
    static func insertImportedQuote(_ content: QuoteContent, number: String, sourceNumber: String, recordID: String, _ db: Database) throws {
        let customerID = try Records.customer(code: content.customerCode, db).id ?? 0
        try db.execute(
            sql: """
                INSERT INTO quotes (recordID, number, sourceNumber, customerID, validUntil, notes, createdBy)
                VALUES (?, ?, ?, ?, ?, ?, 'import')
                """,
            arguments: [recordID, number, sourceNumber, customerID, content.validUntil.description, content.notes]
        )
        let quoteID = db.lastInsertedRowID
        for (position, line) in content.lines.enumerated() {
            try insertQuoteLine(line, quoteID: quoteID, position: position, db)
        }
        try insertVersion(try quote(number: number, db), label: "Imported", author: "import", db)
    }

    /// A package's content over a quote that is here already: the fields that differ are written, and kept as a version.
    static func applyImported(_ content: QuoteContent, over current: Quote, _ db: Database) throws {
        try apply(from: current.content, to: content, quote: current, db)
        try insertVersion(try quote(number: current.number, db), label: "Imported", author: "import", db)
    }

    // MARK: Rules

    static func validate(_ content: QuoteContent) throws(NorthwindError) {
        var errors: [NorthwindError.FieldError] = []
        if content.customerCode.trimmingCharacters(in: .whitespaces).isEmpty { errors.append(.init("customer", "is required")) }
        if let error = RecordRules.check("quotes", "notes", content.notes) { errors.append(error) }
        if content.lines.count > Limits.quoteLines { errors.append(.init("lines", "a quote has at most \(Limits.quoteLines) lines")) }
        if content.schemaVersion > QuoteContent.schemaVersion {
            errors.append(.init("schemaVersion", "is \(content.schemaVersion); this Northwind reads quotes up to \(QuoteContent.schemaVersion)"))
        }
        if let error = idProblem(content) { errors.append(.init("lines", error)) }
        for (index, line) in content.lines.enumerated() where line.lineID.isEmpty || line.lineID.count > 64 {
            errors.append(.init("lines[\(index)].lineID", "must be 1 to 64 characters"))
        }
        try errors.throwIfAny()
        // The lines obey an order's rules: they become one. A new quote may have none yet.
        if !content.lines.isEmpty {
            try Orders.validate(
                lines: content.lines.map {
                    OrderLineDraft(productID: $0.productID, quantity: $0.quantity, discount: $0.discount, unitPrice: $0.unitPrice)
                }
            )
        }
    }

    /// A quote a person writes or changes is valid until today or later; one that has lapsed keeps its date until
    /// someone changes it (an imported quote keeps whatever it had).
    static func validateValidity(_ content: QuoteContent, base: QuoteContent?) throws(NorthwindError) {
        guard content.validUntil != base?.validUntil, content.validUntil < .today else { return }
        throw .invalid("validUntil", "must be today (\(LocalDate.today)) or later")
    }

    /// Why a content's line ids cannot name its lines, if they cannot.
    static func idProblem(_ content: QuoteContent) -> String? {
        Set(content.lines.map(\.lineID)).count == content.lines.count ? nil : "two lines have the same id"
    }

    static func validateIDs(_ content: QuoteContent, field: String) throws(NorthwindError) {
        if let problem = idProblem(content) { throw .invalid(field, problem) }
    }

    static func validate(_ history: QuoteHistory) throws(NorthwindError) {
        if history.undo.count > QuoteHistory.levels || history.redo.count > QuoteHistory.levels {
            throw .invalid("history", "keeps at most \(QuoteHistory.levels) steps each way")
        }
        for step in history.undo + history.redo {
            if step.name.isEmpty || step.name.count > 200 { throw .invalid("history", "a step's name must be 1 to 200 characters") }
            if step.changes.count > 500 { throw .invalid("history", "a step changes at most 500 fields") }
            for change in step.changes where change.field.count > 40 || (change.before?.count ?? 0) > 8000 || (change.after?.count ?? 0) > 8000 {
                throw .invalid("history", "a step's change is too large")
            }
        }
    }

    // MARK: Rows

    static func quote(number: String, _ db: Database) throws -> Quote {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT q.*, c.code AS customerCode, c.companyName FROM quotes q JOIN customers c ON c.id = q.customerID
                    WHERE q.number = ?
                    """,
                arguments: [number]
            )
        else { throw NorthwindError.notFound(entity: "quote", key: number) }
        let lines = try Row.fetchAll(
            db,
            sql: """
                SELECT l.recordID, l.productID, p.name, l.quantity, l.unitPriceCents, l.discount FROM quote_lines l
                JOIN products p ON p.id = l.productID WHERE l.quoteID = ? ORDER BY l.position, l.id
                """,
            arguments: [row["id"] as Int64]
        ).map { line in
            QuoteLine(
                lineID: line[0],
                productID: line[1],
                productName: line[2],
                quantity: line[3],
                unitPrice: Money(cents: line[4]),
                discount: line[5]
            )
        }
        return Quote(
            number: row["number"],
            recordID: row["recordID"],
            status: QuoteStatus(rawValue: row["status"]) ?? .draft,
            orderNumber: row["orderNumber"],
            customerName: row["companyName"],
            content: QuoteContent(
                customerCode: row["customerCode"],
                validUntil: LocalDate(row["validUntil"] as String) ?? .today,
                notes: row["notes"],
                lines: lines
            ),
            revision: row["version"],
            createdBy: row["createdBy"],
            createdAt: row["createdAt"],
            updatedAt: row["updatedAt"]
        )
    }

    /// Refuses a product that can no longer be sold: a quote for it could never become an order. Every way a
    /// product comes onto a quote asks here (a new line, an autosave, an import, a changed product).
    static func checkQuotable(_ productID: Int64, _ db: Database) throws {
        guard let row = try Row.fetchOne(db, sql: "SELECT name, discontinued FROM products WHERE id = ?", arguments: [productID]) else {
            throw NorthwindError.invalid("productID", "no product #\(productID) exists")
        }
        if row["discontinued"] as Bool { throw NorthwindError.invalid("productID", discontinuedMessage(row["name"])) }
    }

    static func discontinuedMessage(_ name: String) -> String { "'\(name)' is discontinued and can no longer be quoted" }

    private static func insertQuoteLine(_ line: QuoteLine, quoteID: Int64, position: Int, _ db: Database) throws {
        try checkQuotable(line.productID, db)
        try db.execute(
            sql: """
                INSERT INTO quote_lines (recordID, quoteID, position, productID, quantity, unitPriceCents, discount)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [line.lineID, quoteID, position, line.productID, line.quantity, line.unitPrice.cents, line.discount]
        )
    }

    /// Writes what changed from `base` to `content`, field by field, over the quote as it is now.
    // guide: begin quote-three-way
    private static func apply(from base: QuoteContent, to content: QuoteContent, quote: Quote, _ db: Database) throws {
        guard quote.status == .draft else {
            throw NorthwindError.invalidState("Quote \(quote.number) is \(quote.status.rawValue); it can no longer change.")
        }
        let quoteID = try Int64.fetchOne(db, sql: "SELECT id FROM quotes WHERE number = ?", arguments: [quote.number]) ?? 0
        var assignments: [String] = []
        var arguments: StatementArguments = []
        if base.customerCode != content.customerCode {
            assignments.append("customerID = ?")
            _ = arguments.append(contentsOf: [try Records.customer(code: content.customerCode, db).id ?? 0])
        }
        if base.validUntil != content.validUntil {
            assignments.append("validUntil = ?")
            _ = arguments.append(contentsOf: [content.validUntil.description])
        }
        if base.notes != content.notes {
            assignments.append("notes = ?")
            _ = arguments.append(contentsOf: [content.notes])
        }
        // guide: end quote-three-way
        let baseLines = Dictionary(base.lines.map { ($0.lineID, $0) }, uniquingKeysWith: { first, _ in first })
        let newLines = Dictionary(content.lines.map { ($0.lineID, $0) }, uniquingKeysWith: { first, _ in first })
        for line in base.lines where newLines[line.lineID] == nil {
            try db.execute(sql: "DELETE FROM quote_lines WHERE recordID = ? AND quoteID = ?", arguments: [line.lineID, quoteID])
        }
        for (position, line) in content.lines.enumerated() {
            let exists =
                try Bool.fetchOne(
                    db,
                    sql: "SELECT EXISTS (SELECT 1 FROM quote_lines WHERE recordID = ? AND quoteID = ?)",
                    arguments: [line.lineID, quoteID]
                )
                ?? false
            guard let old = baseLines[line.lineID] else {
                // A line the editor added; its id may not name another quote's line.
                if !exists {
                    if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM quote_lines WHERE recordID = ?)", arguments: [line.lineID]) == true {
                        throw NorthwindError.invalid("lines", "a new line's id is already another line's")
                    }
                    try insertQuoteLine(line, quoteID: quoteID, position: position, db)
                }
                continue
            }
            // A line the editor had that is gone (removed by sync, an import or another tab) stays gone.
            guard exists else { continue }
            var sets: [String] = []
            var values: StatementArguments = []
            for (column, changed, value) in [
                ("productID", old.productID != line.productID, line.productID as any DatabaseValueConvertible),
                ("quantity", old.quantity != line.quantity, line.quantity),
                ("unitPriceCents", old.unitPrice != line.unitPrice, line.unitPrice.cents),
                ("discount", old.discount != line.discount, line.discount),
                ("position", baseLinePosition(base, line.lineID) != position, position),
            ] where changed {
                sets.append("\(column) = ?")
                _ = values.append(contentsOf: [value])
            }
            guard !sets.isEmpty else { continue }
            if old.productID != line.productID { try checkQuotable(line.productID, db) }
            _ = values.append(contentsOf: [line.lineID])
            _ = values.append(contentsOf: [quoteID])
            try db.execute(sql: "UPDATE quote_lines SET \(sets.joined(separator: ", ")) WHERE recordID = ? AND quoteID = ?", arguments: values)
        }
        assignments.append("updatedAt = ?")
        _ = arguments.append(contentsOf: [Timestamp.now.description])
        assignments.append("version = version + 1")
        _ = arguments.append(contentsOf: [quoteID])
        try db.execute(sql: "UPDATE quotes SET \(assignments.joined(separator: ", ")) WHERE id = ?", arguments: arguments)
    }

    private static func baseLinePosition(_ base: QuoteContent, _ lineID: String) -> Int? {
        base.lines.firstIndex { $0.lineID == lineID }
    }

    @discardableResult
    private static func insertVersion(_ quote: Quote, label: String, author: String, _ db: Database) throws -> QuoteVersion {
        let heads = try heads(db, quoteRecordID: quote.recordID)
        let id = UUID().uuidString.lowercased()
        let content = String(decoding: try BackupWriter.encode(quote.content), as: UTF8.self)
        let parents = String(decoding: try BackupWriter.encode(heads), as: UTF8.self)
        let createdAt = Timestamp.now.description
        try db.execute(
            sql: """
                INSERT INTO quote_versions (recordID, quoteID, parentIDs, label, content, author, createdAt)
                SELECT ?, id, ?, ?, ?, ?, ? FROM quotes WHERE recordID = ?
                """,
            arguments: [id, parents, label, content, author, createdAt, quote.recordID]
        )
        return QuoteVersion(id: id, parentIDs: heads, label: label, author: author, createdAt: createdAt, content: quote.content)
    }

    static func versions(_ db: Database, quoteRecordID: String) throws -> [QuoteVersion] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT v.recordID, v.parentIDs, v.label, v.author, v.createdAt, v.content FROM quote_versions v
                JOIN quotes q ON q.id = v.quoteID WHERE q.recordID = ? ORDER BY v.createdAt DESC, v.id DESC
                """,
            arguments: [quoteRecordID]
        ).map { row in
            QuoteVersion(
                id: row[0],
                parentIDs: (try? JSONDecoder().decode([String].self, from: Data((row[1] as String).utf8))) ?? [],
                label: row[2],
                author: row[3],
                createdAt: row[4],
                content: try JSONDecoder().decode(QuoteContent.self, from: Data((row[5] as String).utf8))
            )
        }
    }

    /// The versions no other version follows: a new one names them all as parents (two, after two installations
    /// each saved one).
    private static func heads(_ db: Database, quoteRecordID: String) throws -> [String] {
        let all = try versions(db, quoteRecordID: quoteRecordID)
        let followed = Set(all.flatMap(\.parentIDs))
        return all.map(\.id).filter { !followed.contains($0) }.sorted()
    }

}
