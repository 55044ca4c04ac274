// Chapter 5: full-text search that ignores accents, and what SQLite plans to do with a query.
import Foundation
import GRDB
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
let path = folder.appendingPathComponent("northwind.sqlite").path
let backoffice = try Backoffice.open(StoreConfiguration(path: path))

// guide: begin search-products
for text in ["cote", "PÂTÉ", "choco"] {
    let names = try backoffice.catalogue.search(text).map(\.product.name)
    print("\(text): \(names.joined(separator: ", "))")
}
// guide: end search-products
let cote = try backoffice.catalogue.search("cote").map(\.product.name)
precondition(cote.contains("Côte du Rhône Villages"), "accents and case do not matter")

// guide: begin query-plans
// EXPLAIN QUERY PLAN, on a connection of our own to the same file.
let reader = try DatabaseQueue(
    path: path,
    configuration: {
        var c = Configuration()
        c.readonly = true
        return c
    }()
)
func plan(_ sql: String, _ arguments: StatementArguments = []) throws -> String {
    try reader.read { db in
        try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
    }.joined(separator: "; ")
}
let plans = [
    ("Name contains, with LIKE", try plan("SELECT id FROM products WHERE name LIKE ?", ["%cote%"])),
    ("Name search, with FTS5", try plan(Catalogue.searchSQL, ["\"cote\"*", 50, 20])),
    ("Ten dearest, no index", try plan("SELECT name FROM products NOT INDEXED ORDER BY unitPriceCents DESC LIMIT 10")),
    ("Ten dearest, with index", try plan("SELECT name FROM products ORDER BY unitPriceCents DESC LIMIT 10")),
]
for (query, plan) in plans { print("\(query):\n  \(plan)") }
// guide: end query-plans

precondition(plans[0].1.contains("SCAN products"), "LIKE with a leading % reads every row")
precondition(plans[1].1.contains("VIRTUAL TABLE INDEX"), "FTS5 answers from its index")
precondition(plans[2].1.contains("TEMP B-TREE"), "without the index, every row is sorted")
precondition(plans[3].1.contains("products_on_unitPriceCents"), "with it, the first ten rows of the index are read")
