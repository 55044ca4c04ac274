import Foundation
import SyncAPI
import SyncProtocol

/// `changes/zone`'s answer: the records' JSON as stored, spliced into the typed envelope, instead of decoding and
/// encoding every record again (5,739 records/s before; see docs/performance.md).
enum ZoneChangesJSON {
    /// `{"zones":[…]}`, each zone's envelope encoded as the generated server would, its empty `"records":[]` then
    /// filled with the stored records. (The marker cannot occur inside a string: a quote there is escaped.)
    static func encode(_ pages: [ZoneChangesPage]) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let marker = Data(#""records":[]"#.utf8)
        var out: [UInt8] = []
        // One allocation for the records (pages run to hundreds of kilobytes), not a doubling copy per size.
        out.reserveCapacity(pages.reduce(256) { total, page in page.records.reduce(total + 512) { $0 + $1.body.utf8.count + 1 } })
        out.append(contentsOf: #"{"zones":["#.utf8)
        for (index, page) in pages.enumerated() {
            if index > 0 { out.append(contentsOf: ",".utf8) }
            let envelope = try encoder.encode(page.envelope)
            guard let at = envelope.range(of: marker) else { throw SyncError(.internalError, "no records in a changes envelope") }
            out.append(contentsOf: envelope[..<at.lowerBound])
            out.append(contentsOf: #""records":["#.utf8)
            for (position, record) in page.records.enumerated() {
                if position > 0 { out.append(contentsOf: ",".utf8) }
                out.append(contentsOf: record.body.utf8)
            }
            out.append(contentsOf: "]".utf8)
            out.append(contentsOf: envelope[at.upperBound...])
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }
}
