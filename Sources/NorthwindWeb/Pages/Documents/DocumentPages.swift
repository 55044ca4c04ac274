import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// Packages in the browser: each quote, order and the catalogue downloads as a `.nwdoc`; managers upload one, see
/// what it would add and update, and import it.
struct ImportPage: PageModel {
    var me: PageUser?
}

/// What the import page's script gets back: the plan, and whether it was carried out.
struct ImportPlanBody: Encodable {
    var title: String
    var lines: [String]
    var imported: Bool
}

extension PageRoutes {
    /// Packages can be larger than a form: a catalogue with its pictures.
    static let maxPackageSize = 256 * 1024 * 1024

    func registerDocuments(on pages: RouterGroup<WebContext>) {
        pages.get("quotes/:number/package", use: downloadQuote)
        pages.get("orders/:number/package", use: downloadOrder)
        pages.get("catalog/package", use: downloadCatalog)
        pages.get("documents/import", use: importPage)
        pages.post("documents/import", use: importPackage)
    }

    @Sendable func downloadQuote(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireSignIn()
        let number = try context.parameters.require("number")
        return try await download("quote-\(number).nwdoc", kind: .quote) { file in
            try await backoffice.documents.exportQuote(number: number, to: file)
        }
    }

    @Sendable func downloadOrder(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireSignIn()
        let number = try context.parameters.require("number")
        return try await download("order-\(number).nwdoc", kind: .order) { file in
            try await backoffice.documents.exportOrder(number: number, to: file)
        }
    }

    @Sendable func downloadCatalog(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireSignIn()
        let category = request.uri.queryParameters["category"].flatMap { Int64(String($0)) }
        return try await download("catalog\(category.map { "-\($0)" } ?? "").nwdoc", kind: .catalog) { file in
            try await backoffice.documents.exportCatalog(categoryID: category, to: file)
        }
    }

    @Sendable func importPage(_ request: Request, context: WebContext) async throws -> Response {
        _ = try context.requireManager(env.policy, to: "import documents")
        return render("import", ImportPage(), context: context)
    }

    /// `POST /documents/import`: the package is the body. `?dryRun=1` only says what it would do.
    @Sendable func importPackage(_ request: Request, context: WebContext) async throws -> Response {
        var request = request
        return await jsonAnswer(request, context) {
            _ = try context.requireManager(env.policy, to: "import documents")
            let bytes = try await request.collectBody(upTo: Self.maxPackageSize)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-upload-\(UUID().uuidString).nwdoc")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data(bytes.readableBytesView).write(to: file)
            let dryRun = request.uri.queryParameters["dryRun"] == "1"
            let plan = try await backoffice.documents.importFile(file, dryRun: dryRun)
            return ImportPlanBody(title: plan.title, lines: Array(plan.lines.dropFirst()), imported: !dryRun)
        }
    }

    /// Writes a package to a temporary file and answers with it as an attachment.
    func download(_ name: String, kind: DocumentKind, _ write: (URL) async throws -> Void) async throws -> Response {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-\(UUID().uuidString).nwdoc")
        defer { try? FileManager.default.removeItem(at: file) }
        try await write(file)
        let data = try Data(contentsOf: file)
        let safeName = name.filter { $0.isLetter || $0.isNumber || "-_.".contains($0) }
        return Response(
            status: .ok,
            headers: [.contentType: kind.mediaType, .contentDisposition: "attachment; filename=\"\(safeName)\""],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}
