import Foundation
import Hummingbird
import Northwind
import NorthwindStore
import SyncProtocol

/// Product search answers, written straight to JSON. Search is what every till sends as people type, and Foundation's
/// encoder, through the generated types, cost about 9 µs a product: a full page of results cost a third more than
/// one result (measured under `wrk` with every answer a cache miss, issue 14). `ProductSearchJSONTests` check that
/// the generated types read these answers back equal to what the generated handler answers.
enum ProductSearchJSON {
    /// `q` and `limit` when the query string is plain, for `OperationGate`'s shortcut; nil leaves the request to the
    /// generated code, which reads every other shape (a `+`, a bad escape, a limit that is no number, a missing or blank `q`) and answers or refuses it.
    /// Other parameters are ignored, as the generated code ignores them.
    static func parameters(_ path: String) -> (text: String, limit: Int?)? {
        guard let query = path.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        var text: String?
        var limit: Int?
        for item in query.split(separator: "&") {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = parts.count > 1 ? parts[1] : ""
            switch parts[0] {
            case "q":
                guard text == nil, !value.contains("+"), let decoded = String(value).removingPercentEncoding else { return nil }
                text = decoded
            case "limit":
                // Digits only: anything else ("+5", "-1", a repeat) is the generated code's to read or refuse.
                guard limit == nil, !value.isEmpty, value.count <= 9, value.allSatisfy({ $0.isASCII && $0.isNumber }),
                    let number = Int(value)
                else { return nil }
                limit = number
            default: continue
            }
        }
        guard let text = text.flatMap(nonBlank) else { return nil }
        return (text, limit)
    }

    /// `{"items":[…]}` with each product's keys sorted, as the generated handler's encoder writes them.
    static func list(_ rows: [ProductRow]) -> ByteBuffer {
        var json = JSONWriter(capacity: 64 + 480 * rows.count)
        json.raw(#"{"items":["#)
        for (index, row) in rows.enumerated() {
            if index > 0 { json.raw(",") }
            product(row, into: &json)
        }
        json.raw("]}")
        return ByteBuffer(bytes: json.bytes)
    }

    /// Keys are written as fragments with their punctuation: the first key present opens the object.
    private static func product(_ row: ProductRow, into json: inout JSONWriter) {
        let p = row.product
        json.raw("{")
        if let id = p.categoryID {
            json.raw(#""categoryID":"#)
            json.number(id)
            json.raw(",")
        }
        if let name = row.categoryName {
            json.raw(#""categoryName":"#)
            json.string(name)
            json.raw(",")
        }
        json.raw(p.discontinued ? #""discontinued":true,"id":"# : #""discontinued":false,"id":"#)
        json.number(p.id ?? 0)
        json.raw(row.isLowStock ? #","lowStock":true,"name":"# : #","lowStock":false,"name":"#)
        json.string(p.name)
        if let quantity = p.quantityPerUnit {
            json.raw(#","quantityPerUnit":"#)
            json.string(quantity)
        }
        json.raw(#","recordID":"#)
        json.string(p.recordID)
        json.raw(#","reorderLevel":"#)
        json.number(Int64(p.reorderLevel))
        if let id = p.supplierID {
            json.raw(#","supplierID":"#)
            json.number(id)
        }
        if let name = row.supplierName {
            json.raw(#","supplierName":"#)
            json.string(name)
        }
        json.raw(#","unitPrice":""#)
        json.raw(p.unitPrice.description)
        json.raw(#"","unitsInStock":"#)
        json.number(Int64(p.unitsInStock))
        json.raw(#","unitsOnOrder":"#)
        json.number(Int64(p.unitsOnOrder))
        json.raw(#","version":"#)
        json.number(Int64(p.version))
        json.raw("}")
    }
}
