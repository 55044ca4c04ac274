import Foundation
import SyncProtocol

/// A field's write time: milliseconds since 1970 and the writing site, as sortable text ("001795460000000.OXF"), so
/// the later write wins on every installation alike and the site code breaks ties.
struct FieldClock: Comparable, Hashable, Sendable {
    let text: String

    init(milliseconds: Int64, site: String) {
        let digits = String(max(milliseconds, 0))
        text = String(repeating: "0", count: max(0, 15 - digits.count)) + digits + "." + site
    }

    init(text: String) { self.text = text }

    var site: String { String(text.split(separator: ".", maxSplits: 1).last ?? "") }

    static func < (a: FieldClock, b: FieldClock) -> Bool { a.text < b.text }

    /// The reserved field that carries a record's field clocks: `{"column": "clock"}` as JSON text. Column names are
    /// SQL identifiers, which never contain "~".
    static let fieldName = FieldClocks.fieldName

    static func clocks(of record: [String: FieldValue]) -> [String: FieldClock] {
        guard case .string(let json)? = record[fieldName], let map = JSONReader.strings(Data(json.utf8)) else { return [:] }
        return map.mapValues(FieldClock.init(text:))
    }

    static func field(_ clocks: [String: FieldClock]) -> FieldValue {
        var writer = JSONWriter(capacity: 32 * clocks.count + 2)
        writer.strings(clocks.mapValues(\.text))
        return .string(writer.text)
    }
}

/// A value a merge discarded: which field, what was kept and what was lost, with their clocks.
struct DiscardedValue: Sendable, Equatable {
    var field: String
    var kept: FieldValue?
    var keptClock: FieldClock?
    var lost: FieldValue?
    var lostClock: FieldClock?
}

/// The three-way merge of one record, field by field: what the server last acknowledged (`base`), what the server
/// has now (`server`), and what this store has (`local`). A field changed on one side only takes that side's value;
/// a field changed on both sides to different values goes to the later clock, and the other value is discarded (the
/// caller records it in the conflict inbox).
enum FieldMerge {
    struct Result: Equatable {
        /// The merged fields, without the clocks field.
        var fields: [String: FieldValue]
        var clocks: [String: FieldClock]
        var discarded: [DiscardedValue]
    }

    /// `held`: a version the server acknowledged before it was restored from a backup, with its clocks: a local
    /// value that is still that version's dates from its own clock, and is no unsent edit. Whichever of two
    /// acknowledged values loses goes to the inbox: the restore took away the record of who had seen what.
    static func merge(
        base: [String: FieldValue],
        server: [String: FieldValue],
        local: [String: FieldValue],
        localClock: FieldClock,
        held: [String: FieldValue] = [:]
    ) -> Result {
        let serverClocks = FieldClock.clocks(of: server)
        let heldClocks = FieldClock.clocks(of: held)
        var clocks = serverClocks
        var fields: [String: FieldValue] = [:]
        var discarded: [DiscardedValue] = []
        let names = Set(base.keys).union(server.keys).union(local.keys).subtracting([FieldClock.fieldName]).sorted()
        // guide: begin field-merge
        for name in names {
            let (b, s, l) = (base[name], server[name], local[name])
            let acknowledged = heldClocks[name].flatMap { held[name] == l ? $0 : nil }
            let localClock = acknowledged ?? localClock
            let merged: FieldValue?
            if let acknowledged, l != s {
                // Two versions the server acknowledged, one before its restore: the later clock wins, and the other
                // goes to the inbox (the later writer may never have seen it).
                if let serverClock = serverClocks[name], serverClock > acknowledged {
                    merged = s
                    discarded.append(DiscardedValue(field: name, kept: s, keptClock: serverClock, lost: l, lostClock: acknowledged))
                } else {
                    merged = l
                    clocks[name] = acknowledged
                    if s != nil {
                        discarded.append(
                            DiscardedValue(field: name, kept: l, keptClock: acknowledged, lost: s, lostClock: serverClocks[name])
                        )
                    }
                }
            } else if l == b || l == s {
                merged = s
            } else if s == b {
                merged = l
                clocks[name] = localClock
            } else {
                // Both changed, to different values. A server value with no clock predates clocks: the local edit,
                // made since, is later.
                let serverClock = serverClocks[name]
                if let serverClock, serverClock > localClock {
                    merged = s
                    discarded.append(DiscardedValue(field: name, kept: s, keptClock: serverClock, lost: l, lostClock: localClock))
                } else {
                    merged = l
                    clocks[name] = localClock
                    discarded.append(DiscardedValue(field: name, kept: l, keptClock: localClock, lost: s, lostClock: serverClock))
                }
            }
            if let merged { fields[name] = merged }
        }
        // guide: end field-merge
        return Result(fields: fields, clocks: clocks, discarded: discarded)
    }
}
