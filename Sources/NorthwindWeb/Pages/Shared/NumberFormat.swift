import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// `display.numberFormat`: how the pages a person reads write amounts, each person's own. Form fields keep the plain
/// form (`1234.56`), which is what they accept; so do the API, the CLI and report downloads.
struct NumberFormat: Sendable, Equatable {
    let grouping: String
    let decimal: String

    init(_ choice: String) {
        switch choice {
        case "de": (grouping, decimal) = (".", ",")
        // A narrow no-break space, as French typography groups digits.
        case "fr": (grouping, decimal) = ("\u{202F}", ",")
        case "ch": (grouping, decimal) = ("'", ".")
        default: (grouping, decimal) = (",", ".")
        }
    }

    /// `1234.56` as this format writes it: `1,234.56`, `1.234,56`, `1 234,56` or `1'234.56`.
    func money(_ money: Money) -> String {
        let plain = money.description
        let negative = plain.hasPrefix("-")
        let parts = plain.dropFirst(negative ? 1 : 0).split(separator: ".")
        var whole = ""
        for (index, digit) in parts[0].enumerated() {
            if index > 0, (parts[0].count - index) % 3 == 0 { whole += grouping }
            whole.append(digit)
        }
        return (negative ? "-" : "") + whole + decimal + (parts.count > 1 ? parts[1] : "00")
    }

    /// The signed-in person's format, for the page being rendered.
    @TaskLocal static var current = NumberFormat("en")
}

extension Money {
    /// As the signed-in person reads amounts (`display.numberFormat`).
    var shown: String { NumberFormat.current.money(self) }
}

/// Renders each page in its reader's number format.
struct NumberFormatMiddleware: RouterMiddleware {
    typealias Context = WebContext
    let env: WebEnvironment

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let login = context.identity?.login else { return try await next(request, context) }
        return try await NumberFormat.$current.withValue(NumberFormat(env.setting("display.numberFormat", user: login))) {
            try await next(request, context)
        }
    }
}
