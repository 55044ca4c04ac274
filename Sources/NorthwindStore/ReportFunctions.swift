import Foundation
import GRDB

/// SQL functions the classic reports need to compute exactly as SQL Server does.
enum ReportFunctions {
    /// `f32(x)`: `x` rounded to the nearest IEEE-754 binary32 value. SQL Server's `real` is binary32, and the
    /// originals round every real-typed step of an amount to it; Microsoft's published figures depend on that.
    static let f32 = DatabaseFunction("f32", argumentCount: 1, pure: true) { values in
        guard let x = Double.fromDatabaseValue(values[0]) else { return nil }
        return Double(Float(x))
    }

    /// `sqlserver_ci_as`: the order of SQL Server's default collation (case- and accent-insensitive), close enough
    /// for ordering names: compare with accents, case, apostrophes and hyphens removed, then break ties exactly.
    /// Plain BINARY would put "Pâté chinois" after "Perth Pasties".
    static let sqlServerOrder = DatabaseCollation("sqlserver_ci_as") { left, right in
        let (a, b) = (fold(left), fold(right))
        if a != b { return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) ? .orderedAscending : .orderedDescending }
        if left == right { return .orderedSame }
        return left.unicodeScalars.lexicographicallyPrecedes(right.unicodeScalars) ? .orderedAscending : .orderedDescending
    }

    static func fold(_ text: String) -> String {
        let stripped = text.decomposedStringWithCanonicalMapping.unicodeScalars
            .filter { !(0x300...0x36F).contains($0.value) && $0 != "'" && $0 != "-" }
        return String(String.UnicodeScalarView(stripped)).lowercased()
    }

    static func register(_ db: Database) {
        db.add(function: f32)
        db.add(collation: sqlServerOrder)
    }
}
