import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// Quotes in the browser: a list, a new quote, and the editor, which saves by itself (autosave), undoes in named
/// steps, keeps versions, and shows who else is editing. The editor's script talks to the JSON endpoints below;
/// everything else is a form, so the page works the same after a reload.
struct QuotesPage: PageModel {
    var quotes: [QuoteSummary]
    var defaultValidUntil: String
    var error: String?
    var me: PageUser?
}

struct QuotePage: PageModel {
    struct Line {
        var lineID: String
        var productName: String
        var quantity: Int
        var unitPrice: String
        var discountPercent: String
        var total: String
    }
    struct Version {
        var id: String
        var label: String
        var author: String
        var createdAt: String
        var total: String
    }
    struct Conflict {
        var id: Int64
        var what: String
        var kept: String
        var keptSite: String
        var lost: String
        var lostSite: String
    }

    var number: String
    var status: String
    var isDraft: Bool
    var orderNumber: String?
    var customerName: String
    var lines: [Line]
    var total: String
    var versions: [Version]
    var conflicts: [Conflict]
    var hasConflicts: Bool
    var readOnly: Bool
    /// Who else edits it, when that is why it is read-only.
    var editorName: String?
    /// The document as the editor's script starts from: content, revision and undo history, as JSON in a data
    /// attribute (the template escapes it).
    var documentJSON: String
    var autosaveSeconds: Int
    var me: PageUser?
}

/// What the editor's script sends with each autosave.
struct QuoteDraftBody: Decodable {
    var base: QuoteContent
    var content: QuoteContent
    var history: QuoteHistory
}

/// What the editor's script gets back: the quote as saved (with others' changes merged in), and its state.
struct QuoteDocumentBody: Encodable {
    var number: String
    var revision: Int
    var content: QuoteContent
    var total: String
    var lineTotals: [String: String]
    var history: QuoteHistory
    /// UIDocument's state names that the store knows (the page adds its own: saving, failing).
    var state: [String]
    var editor: String?
    var conflicts: Int
    var madeVersion: Bool

    init(_ quote: Quote, history: QuoteHistory, state: DocumentState, editor: String?, conflicts: Int, madeVersion: Bool = false) {
        number = quote.number
        revision = quote.revision
        content = quote.content
        total = quote.content.total.description
        lineTotals = Dictionary(uniqueKeysWithValues: quote.content.lines.map { ($0.lineID, $0.total.description) })
        self.history = history
        self.state = state.names
        self.editor = editor
        self.conflicts = conflicts
        self.madeVersion = madeVersion
    }
}

extension PageRoutes {
    func registerQuotes(on pages: RouterGroup<WebContext>) {
        pages.get("quotes", use: quotesPage)
        pages.post("quotes", use: createQuote)
        pages.get("quotes/:number", use: quotePage)
        pages.post("quotes/:number/draft", use: saveQuoteDraft)
        pages.post("quotes/:number/ping", use: pingQuote)
        pages.post("quotes/:number/close", use: closeQuote)
        pages.post("quotes/:number/takeover", use: takeOverQuote)
        pages.post("quotes/:number/versions", use: saveQuoteVersion)
        pages.post("quotes/:number/versions/:id/restore", use: restoreQuoteVersion)
        pages.post("quotes/:number/convert", use: convertQuote)
        pages.post("quotes/:number/conflicts/:id", use: resolveQuoteConflict)
    }

    static func editor(_ me: SignedIn) -> QuoteEditor { QuoteEditor(login: me.login, name: me.displayName) }

    @Sendable func quotesPage(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireSignIn()
        let quotes = try await backoffice.quotes.list(all: request.uri.queryParameters["all"] == "1")
        return render("quotes", QuotesPage(quotes: quotes, defaultValidUntil: LocalDate.today.adding(days: 30).description), context: context)
    }

    /// `POST /quotes`: a new, empty quote for a customer; lines are added in the editor.
    @Sendable func createQuote(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let form = try await FormData.read(request, context: context)
        guard let validUntil = LocalDate(form["validUntil"] ?? "") else {
            throw NorthwindError.invalid("validUntil", "must be a date, YYYY-MM-DD")
        }
        let content = QuoteContent(customerCode: (form["customer"] ?? "").trimmingCharacters(in: .whitespaces), validUntil: validUntil, lines: [])
        let quote = try await backoffice.quotes.create(content, by: Self.editor(me))
        return Response.redirect(to: "/quotes/\(quote.number)", type: .normal)
    }

    @Sendable func quotePage(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let number = try context.parameters.require("number")
        let session = try await backoffice.quotes.open(number: number, editor: Self.editor(me))
        let versions = try await backoffice.quotes.versions(number: number)
        let quote = session.quote
        let readOnly = session.state.contains(.editingDisabled)
        let document = QuoteDocumentBody(
            quote,
            history: session.history,
            state: session.state,
            editor: session.editor?.name,
            conflicts: session.conflicts.count
        )
        let conflicts = session.conflicts.map { conflict in
            QuotePage.Conflict(
                id: conflict.id,
                what: conflict.table == "quotes" ? conflict.field : "a line's \(conflict.field)",
                kept: conflict.kept ?? "(none)",
                keptSite: conflict.keptSite ?? "",
                lost: conflict.lost ?? "(none)",
                lostSite: conflict.lostSite ?? ""
            )
        }
        let page = QuotePage(
            number: quote.number,
            status: quote.status.rawValue,
            isDraft: quote.status == .draft,
            orderNumber: quote.orderNumber,
            customerName: quote.customerName,
            lines: quote.content.lines.map { line in
                QuotePage.Line(
                    lineID: line.lineID,
                    productName: line.productName,
                    quantity: line.quantity,
                    unitPrice: line.unitPrice.description,
                    discountPercent: discountText(line.discount),
                    total: line.total.description
                )
            },
            total: quote.content.total.description,
            versions: versions.map { version in
                QuotePage.Version(
                    id: version.id,
                    label: version.label,
                    author: version.author ?? "",
                    createdAt: String(version.createdAt.prefix(16)).replacingOccurrences(of: "T", with: " "),
                    total: version.content.total.description
                )
            },
            conflicts: conflicts,
            hasConflicts: !conflicts.isEmpty,
            readOnly: readOnly,
            editorName: readOnly && quote.status == .draft ? session.editor?.name : nil,
            documentJSON: String(decoding: try Self.json(document), as: UTF8.self),
            autosaveSeconds: Int((try? env.settings.value("documents.autosaveSeconds").value) ?? "") ?? 15
        )
        return render("quote", page, context: context)
    }

    // MARK: The editor's JSON endpoints

    /// `POST /quotes/:number/draft`: the autosave.
    @Sendable func saveQuoteDraft(_ request: Request, context: WebContext) async throws -> Response {
        var request = request
        return await jsonAnswer(request, context) {
            let me = try context.requireSignIn()
            let number = try context.parameters.require("number")
            let body = try JSONDecoder().decode(
                QuoteDraftBody.self,
                from: Data(String(buffer: try await request.collectBody(upTo: context.maxUploadSize)).utf8)
            )
            let saved = try await backoffice.quotes.saveDraft(
                number: number,
                base: body.base,
                content: body.content,
                history: body.history,
                editor: Self.editor(me)
            )
            let session = try await backoffice.quotes.ping(number: number, editor: Self.editor(me))
            return QuoteDocumentBody(
                saved.quote,
                history: body.history,
                state: session.state,
                editor: session.editor?.name,
                conflicts: session.conflicts.count,
                madeVersion: saved.madeVersion
            )
        }
    }

    /// `POST /quotes/:number/ping`: keeps the lease while the page is open; a 409 says who took it over.
    @Sendable func pingQuote(_ request: Request, context: WebContext) async throws -> Response {
        await jsonAnswer(request, context) {
            let me = try context.requireSignIn()
            let session = try await backoffice.quotes.ping(number: try context.parameters.require("number"), editor: Self.editor(me))
            return QuoteDocumentBody(
                session.quote,
                history: session.history,
                state: session.state,
                editor: session.editor?.name,
                conflicts: session.conflicts.count
            )
        }
    }

    /// `POST /quotes/:number/close`: the page is closing; the next person need not wait for the lease.
    @Sendable func closeQuote(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        try await backoffice.quotes.close(number: try context.parameters.require("number"), editor: Self.editor(me))
        return Response(status: .noContent)
    }

    // MARK: Forms

    @Sendable func takeOverQuote(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let number = try context.parameters.require("number")
        _ = try await backoffice.quotes.takeOver(number: number, editor: Self.editor(me))
        return Response.redirect(to: "/quotes/\(number)", type: .normal)
    }

    @Sendable func saveQuoteVersion(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let number = try context.parameters.require("number")
        let form = try await FormData.read(request, context: context)
        _ = try await backoffice.quotes.saveVersion(number: number, label: form["label"] ?? "", editor: Self.editor(me))
        return Response.redirect(to: "/quotes/\(number)", type: .normal)
    }

    @Sendable func restoreQuoteVersion(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let number = try context.parameters.require("number")
        _ = try await backoffice.quotes.restoreVersion(number: number, versionID: try context.parameters.require("id"), editor: Self.editor(me))
        return Response.redirect(to: "/quotes/\(number)", type: .normal)
    }

    @Sendable func convertQuote(_ request: Request, context: WebContext) async throws -> Response {
        let me = try context.requireSignIn()
        let number = try context.parameters.require("number")
        let order = try await backoffice.quotes.convert(number: number, employeeID: me.employee.id, editor: Self.editor(me))
        return Response.redirect(to: "/orders/\(order.order.number)", type: .normal)
    }

    /// `POST /quotes/:number/conflicts/:id`: keep the value that stands (`keep=kept`) or bring the other back (`keep=other`).
    @Sendable func resolveQuoteConflict(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireSignIn()
        let number = try context.parameters.require("number")
        let form = try await FormData.read(request, context: context)
        guard let id = Int64(try context.parameters.require("id")) else { throw NorthwindError.notFound(entity: "conflict", key: "") }
        try await backoffice.sync.resolveConflict(id: id, restoreLost: form["keep"] == "other")
        return Response.redirect(to: "/quotes/\(number)", type: .normal)
    }

    /// Runs `body` and answers JSON: its result, or the problem (status and detail) it threw.
    func jsonAnswer(_ request: Request, _ context: WebContext, _ body: () async throws -> some Encodable) async -> Response {
        do {
            return Self.jsonResponse(try Self.json(try await body()), status: .ok)
        } catch {
            let problem = Problem.from(error, logging: request, context)
            return problem.response()
        }
    }

    static func json(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(value)
    }

    static func jsonResponse(_ data: Data, status: HTTPResponse.Status) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
