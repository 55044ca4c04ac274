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

    /// `sqlserver_key(text)`: the sort key of SQL Server's default collation (case- and accent-insensitive), close
    /// enough for ordering names: the text without accents, case, apostrophes and hyphens. The reports sort with
    /// `ORDER BY sqlserver_key(x), x`, so ties break on the exact text. Plain BINARY would put "Pâté chinois" after
    /// "Perth Pasties". A key per row costs far less than a collation that folds both sides of every comparison.
    static let sqlServerKey = DatabaseFunction("sqlserver_key", argumentCount: 1, pure: true) { values in
        String.fromDatabaseValue(values[0]).map(fold)
    }

    static func fold(_ text: String) -> String {
        let stripped = text.decomposedStringWithCanonicalMapping.unicodeScalars
            .filter { !(0x300...0x36F).contains($0.value) && $0 != "'" && $0 != "-" }
        return String(String.UnicodeScalarView(stripped)).lowercased()
    }

    static func register(_ db: Database) {
        db.add(function: f32)
        db.add(function: sqlServerKey)
    }
}
