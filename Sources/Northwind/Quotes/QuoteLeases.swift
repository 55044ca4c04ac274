import Foundation
import GRDB
import NorthwindStore

extension Quotes {
    // MARK: Leases

    /// Gives `editor` the quote unless someone else's lease runs (or `force`). Returns whether they hold it.
    static func takeLease(_ db: Database, quote: Quote, editor: QuoteEditor, force: Bool) throws -> Bool {
        let quoteID = try Int64.fetchOne(db, sql: "SELECT id FROM quotes WHERE number = ?", arguments: [quote.number]) ?? 0
        let now = Timestamp.now
        let until = now.adding(seconds: quoteLease).description
        if let row = try Row.fetchOne(db, sql: "SELECT editor, leaseUntil FROM quote_sessions WHERE quoteID = ?", arguments: [quoteID]) {
            let holder: String = row["editor"]
            let running = (Timestamp(row["leaseUntil"] as String)?.milliseconds ?? 0) > now.milliseconds
            if holder == editor.login {
                try db.execute(sql: "UPDATE quote_sessions SET leaseUntil = ? WHERE quoteID = ?", arguments: [until, quoteID])
                return true
            }
            guard !running || force else { return false }
            // A new editor starts a new history: another person's undo steps are not theirs to undo.
            try db.execute(
                sql: """
                    UPDATE quote_sessions SET editor = ?, editorName = ?, leaseUntil = ?, takenFrom = ?,
                      history = '{"undo":[],"redo":[]}', changedAt = ? WHERE quoteID = ?
                    """,
                arguments: [editor.login, editor.name, until, running ? holder : nil, now.description, quoteID]
            )
            return true
        }
        try db.execute(
            sql: "INSERT INTO quote_sessions (quoteID, editor, editorName, leaseUntil) VALUES (?, ?, ?, ?)",
            arguments: [quoteID, editor.login, editor.name, until]
        )
        return true
    }

    /// Refuses a save or ping from someone who no longer holds the quote, naming who does; renews the holder's lease.
    static func checkHolder(_ db: Database, quote: Quote, editor: QuoteEditor) throws {
        guard quote.status == .draft else {
            throw NorthwindError.invalidState("Quote \(quote.number) is \(quote.status.rawValue); it can no longer change.")
        }
        if let row = try Row.fetchOne(
            db,
            sql: "SELECT editor, editorName, leaseUntil, takenFrom FROM quote_sessions WHERE quoteID = (SELECT id FROM quotes WHERE number = ?)",
            arguments: [quote.number]
        ), (row["editor"] as String) != editor.login {
            let name: String = row["editorName"]
            if (row["takenFrom"] as String?) == editor.login {
                throw NorthwindError.conflict(
                    "\(name) took quote \(quote.number) over; it is read-only for you now. Your unsaved changes are still on this page."
                )
            }
            if (Timestamp(row["leaseUntil"] as String)?.milliseconds ?? 0) > Timestamp.now.milliseconds {
                throw NorthwindError.conflict("\(name) is editing quote \(quote.number); it is read-only for you.")
            }
        }
        guard try takeLease(db, quote: quote, editor: editor, force: false) else {
            throw NorthwindError.conflict("Someone else is editing quote \(quote.number).")
        }
    }

    static func session(_ db: Database, quote: Quote, for editor: QuoteEditor) throws -> QuoteSession {
        var state: DocumentState = []
        var holder: QuoteEditor?
        var history = QuoteHistory()
        if let row = try Row.fetchOne(
            db,
            sql: "SELECT editor, editorName, leaseUntil, history FROM quote_sessions WHERE quoteID = (SELECT id FROM quotes WHERE number = ?)",
            arguments: [quote.number]
        ) {
            let running = (Timestamp(row["leaseUntil"] as String)?.milliseconds ?? 0) > Timestamp.now.milliseconds
            let login: String = row["editor"]
            if running || login == editor.login { holder = QuoteEditor(login: login, name: row["editorName"]) }
            if login == editor.login {
                history = (try? JSONDecoder().decode(QuoteHistory.self, from: Data((row["history"] as String).utf8))) ?? QuoteHistory()
            }
        }
        if quote.status != .draft || (holder != nil && holder?.login != editor.login) { state.insert(.editingDisabled) }
        if holder == nil { state.insert(.closed) }
        let conflicts = try openConflicts(db, quote: quote)
        if !conflicts.isEmpty { state.insert(.inConflict) }
        return QuoteSession(quote: quote, state: state, editor: holder, history: history, conflicts: conflicts)
    }

    /// The conflict inbox's open entries about this quote or its lines.
    private static func openConflicts(_ db: Database, quote: Quote) throws -> [SyncConflict] {
        let ids = [quote.recordID] + quote.content.lines.map(\.lineID)
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        let wanted = try Int64.fetchAll(
            db,
            sql: """
                SELECT id FROM sync_conflicts WHERE resolvedAt IS NULL
                AND tableName IN ('quotes', 'quote_lines') AND recordID IN (\(marks)) ORDER BY id
                """,
            arguments: StatementArguments(ids)
        )
        return try ShopSync.syncConflicts(db, ids: wanted)
    }
}
