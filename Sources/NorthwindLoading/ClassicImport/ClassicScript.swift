import Foundation
import NorthwindStore

/// A literal value from a classic script, before it is mapped to our schema.
public enum ClassicValue: Sendable, Equatable {
    case null
    case integer(Int64)
    /// A decimal literal kept as written, e.g. "18.00" or "0.15", so callers can parse it exactly with `Decimal`
    /// instead of inheriting binary floating-point rounding.
    case number(String)
    case text(String)
    case blob([UInt8])
}

public struct ClassicRow: Sendable {
    /// 1-based line where the row's INSERT statement starts, so import problems can point back into the script.
    public var line: Int
    /// Keyed by canonical (Microsoft) column name, e.g. "CategoryID", "UnitPrice".
    public var values: [String: ClassicValue]

    public init(line: Int, values: [String: ClassicValue]) {
        self.line = line
        self.values = values
    }
}

/// Rows per canonical table name: "Categories", "Customers", "Employees", "EmployeeTerritories", "Order Details",
/// "Orders", "Products", "Region", "Shippers", "Suppliers", "Territories", "CustomerCustomerDemo",
/// "CustomerDemographics". Every canonical table is present, empty when the script inserts nothing into it.
public struct ClassicDataset: Sendable {
    public var tables: [String: [ClassicRow]]
    public var dialect: ClassicDialect

    public init(tables: [String: [ClassicRow]], dialect: ClassicDialect) {
        self.tables = tables
        self.dialect = dialect
    }
}

public enum ClassicDialect: String, Sendable {
    case transactSQL, sqlite, postgres
}

public struct ClassicScriptError: Error, Sendable, CustomStringConvertible {
    public var line: Int
    public var message: String
    public var description: String { "line \(line): \(message)" }

    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }
}

public enum ClassicScript {
    /// Detects the dialect from the text and parses every INSERT into the dataset.
    ///
    /// Values are normalised per canonical column so that the three dialects agree: dates become ISO text,
    /// bits and booleans become 0/1, money and real columns become `.number`, integers written as strings
    /// become `.integer`, and PostgreSQL `'\x…'` bytea strings become `.blob`.
    public static func parse(_ text: String) throws(ClassicScriptError) -> ClassicDataset {
        let bytes = Array(text.utf8)
        return try parse(bytes: bytes, dialect: detectDialect(bytes))
    }

    static func parse(bytes: [UInt8], dialect: ClassicDialect) throws(ClassicScriptError) -> ClassicDataset {
        var parser = ClassicScriptParser(bytes: bytes, dialect: dialect)
        return try parser.run()
    }

    /// Scores dialect-specific markers, because none of the scripts names its dialect reliably; a script
    /// with no markers at all is taken to be Microsoft's, the canonical one.
    static func detectDialect(_ bytes: [UInt8]) -> ClassicDialect {
        let markers: [(ClassicDialect, [String])] = [
            (
                .transactSQL,
                [
                    "identity_insert", "quoted_identifier", "nvarchar", "[dbo]", "\"dbo\"", "\ngo\n",
                    "\ngo\r\n", "ntext",
                ]
            ),
            (.sqlite, ["pragma ", "autoincrement", "sqlite", "without rowid"]),
            (
                .postgres,
                [
                    "postgresql", "standard_conforming_strings", "character varying", "bytea",
                    "search_path", "set client_encoding",
                ]
            ),
        ]
        var best = ClassicDialect.transactSQL
        var bestScore = 0
        for (dialect, words) in markers {
            let score = words.reduce(0) { $0 + (containsCaseInsensitive(bytes, $1) ? 1 : 0) }
            if score > bestScore {
                best = dialect
                bestScore = score
            }
        }
        return best
    }

    private static func containsCaseInsensitive(_ bytes: [UInt8], _ needle: String) -> Bool {
        let pattern = Array(needle.utf8)
        guard let first = pattern.first, bytes.count >= pattern.count else { return false }
        let last = bytes.count - pattern.count
        var index = 0
        while index <= last {
            if lowercased(bytes[index]) == first {
                var matched = 1
                while matched < pattern.count, lowercased(bytes[index + matched]) == pattern[matched] { matched += 1 }
                if matched == pattern.count { return true }
            }
            index += 1
        }
        return false
    }

    static func lowercased(_ b: UInt8) -> UInt8 {
        b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z") ? b + 32 : b
    }
}

// MARK: - Canonical schema

/// How a canonical column's literals are normalised, since each dialect spells dates, money and bits its own way.
enum ClassicColumnKind: Sendable {
    case integer, decimal, text, date, flag, blob
}

struct ClassicTableSchema: Sendable {
    struct Column: Sendable {
        var name: String
        var kind: ClassicColumnKind
    }

    var name: String
    var columns: [Column]
    /// Column index by `ClassicCatalog.key`, so snake_case and bracketed spellings find the canonical column.
    var columnIndex: [String: Int]

    init(_ name: String, _ columns: [(String, ClassicColumnKind)]) {
        self.name = name
        self.columns = columns.map { Column(name: $0.0, kind: $0.1) }
        var index: [String: Int] = [:]
        for (offset, column) in columns.enumerated() { index[ClassicCatalog.key(column.0)] = offset }
        self.columnIndex = index
    }
}

enum ClassicCatalog {
    /// Matches names across dialects: "order_details", "[Order Details]" and "OrderDetails" all become
    /// "orderdetails".
    static func key(_ name: String) -> String {
        var result = [UInt8]()
        result.reserveCapacity(name.utf8.count)
        for b in name.utf8 {
            let lower = ClassicScript.lowercased(b)
            if (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z")) || ClassicLexer.isDigit(lower) || b >= 0x80 {
                result.append(lower)
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    static let tables: [ClassicTableSchema] = [
        ClassicTableSchema(
            "Categories",
            [
                ("CategoryID", .integer), ("CategoryName", .text), ("Description", .text), ("Picture", .blob),
            ]
        ),
        ClassicTableSchema(
            "Customers",
            [
                ("CustomerID", .text), ("CompanyName", .text), ("ContactName", .text), ("ContactTitle", .text),
                ("Address", .text), ("City", .text), ("Region", .text), ("PostalCode", .text), ("Country", .text),
                ("Phone", .text), ("Fax", .text),
            ]
        ),
        ClassicTableSchema(
            "Employees",
            [
                ("EmployeeID", .integer), ("LastName", .text), ("FirstName", .text), ("Title", .text),
                ("TitleOfCourtesy", .text), ("BirthDate", .date), ("HireDate", .date), ("Address", .text),
                ("City", .text), ("Region", .text), ("PostalCode", .text), ("Country", .text), ("HomePhone", .text),
                ("Extension", .text), ("Photo", .blob), ("Notes", .text), ("ReportsTo", .integer), ("PhotoPath", .text),
            ]
        ),
        ClassicTableSchema("EmployeeTerritories", [("EmployeeID", .integer), ("TerritoryID", .text)]),
        ClassicTableSchema(
            "Order Details",
            [
                ("OrderID", .integer), ("ProductID", .integer), ("UnitPrice", .decimal), ("Quantity", .integer),
                ("Discount", .decimal),
            ]
        ),
        ClassicTableSchema(
            "Orders",
            [
                ("OrderID", .integer), ("CustomerID", .text), ("EmployeeID", .integer), ("OrderDate", .date),
                ("RequiredDate", .date), ("ShippedDate", .date), ("ShipVia", .integer), ("Freight", .decimal),
                ("ShipName", .text), ("ShipAddress", .text), ("ShipCity", .text), ("ShipRegion", .text),
                ("ShipPostalCode", .text), ("ShipCountry", .text),
            ]
        ),
        ClassicTableSchema(
            "Products",
            [
                ("ProductID", .integer), ("ProductName", .text), ("SupplierID", .integer), ("CategoryID", .integer),
                ("QuantityPerUnit", .text), ("UnitPrice", .decimal), ("UnitsInStock", .integer),
                ("UnitsOnOrder", .integer), ("ReorderLevel", .integer), ("Discontinued", .flag),
            ]
        ),
        ClassicTableSchema("Region", [("RegionID", .integer), ("RegionDescription", .text)]),
        ClassicTableSchema("Shippers", [("ShipperID", .integer), ("CompanyName", .text), ("Phone", .text)]),
        ClassicTableSchema(
            "Suppliers",
            [
                ("SupplierID", .integer), ("CompanyName", .text), ("ContactName", .text), ("ContactTitle", .text),
                ("Address", .text), ("City", .text), ("Region", .text), ("PostalCode", .text), ("Country", .text),
                ("Phone", .text), ("Fax", .text), ("HomePage", .text),
            ]
        ),
        ClassicTableSchema(
            "Territories",
            [
                ("TerritoryID", .text), ("TerritoryDescription", .text), ("RegionID", .integer),
            ]
        ),
        ClassicTableSchema("CustomerCustomerDemo", [("CustomerID", .text), ("CustomerTypeID", .text)]),
        ClassicTableSchema("CustomerDemographics", [("CustomerTypeID", .text), ("CustomerDesc", .text)]),
    ]

    /// Canonical schema by name key, plus the SQLite conversion's plural "Regions".
    static let byKey: [String: ClassicTableSchema] = {
        var result: [String: ClassicTableSchema] = [:]
        for table in tables { result[key(table.name)] = table }
        result["regions"] = result["region"]
        return result
    }()

    /// Tables that conversions add and the import deliberately drops.
    static let ignoredKeys: Set<String> = ["usstates"]
}

// MARK: - Parser

/// A literal as the script wrote it, before the canonical column decides what it means.
enum ClassicRawValue {
    case null
    case integer(Int64, literal: String)
    case number(String)
    case text(String)
    case blob([UInt8])
    case boolean(Bool, literal: String)
}

/// Walks the token stream statement by statement: INSERTs become rows, CREATE TABLE supplies column order for
/// INSERTs without a column list, routine bodies are skipped whole so INSERTs inside them are never executed,
/// and everything else is passed over token by token.
struct ClassicScriptParser {
    private struct DeclaredTable {
        var columns: [String]
        /// SQLite's INTEGER PRIMARY KEY column, where NULL means "the next id".
        var rowIDColumn: Int?
    }

    private var lexer: ClassicLexer
    private var token: ClassicToken
    private let dialect: ClassicDialect
    private var declared: [String: DeclaredTable] = [:]
    private var rows: [String: [ClassicRow]] = [:]
    private var lastRowID: [String: Int64] = [:]

    init(bytes: [UInt8], dialect: ClassicDialect) {
        self.lexer = ClassicLexer(bytes: bytes, dialect: dialect)
        self.dialect = dialect
        self.token = ClassicToken(kind: .end, start: 0, end: 0, line: 1, firstOnLine: true, needsUnescaping: false)
    }

    private var bytes: [UInt8] { lexer.bytes }

    mutating func run() throws(ClassicScriptError) -> ClassicDataset {
        try advance()
        while token.kind != .end {
            if token.kind == .word {
                if isWord("INSERT") {
                    try parseInsert()
                    continue
                }
                if isWord("CREATE") || isWord("ALTER") {
                    try parseCreateOrAlter()
                    continue
                }
                if dialect == .postgres, isWord("COPY") {
                    try rejectCopy()
                    continue
                }
            }
            try advance()
        }
        var tables = rows
        for table in ClassicCatalog.tables where tables[table.name] == nil { tables[table.name] = [] }
        return ClassicDataset(tables: tables, dialect: dialect)
    }

    // MARK: Token helpers

    private mutating func advance() throws(ClassicScriptError) {
        token = try lexer.next()
    }

    /// Case-insensitive keyword test; `keyword` must be upper-case ASCII.
    private func isWord(_ keyword: String) -> Bool {
        guard token.kind == .word, token.end - token.start == keyword.utf8.count else { return false }
        var index = token.start
        for k in keyword.utf8 {
            let b = bytes[index]
            guard b == k || (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z") && b - 32 == k) else { return false }
            index += 1
        }
        return true
    }

    private func isWord(anyOf keywords: [String]) -> Bool {
        token.kind == .word && keywords.contains { isWord($0) }
    }

    private func isPunctuation(_ c: Character) -> Bool {
        token.kind == .punctuation && c.asciiValue == bytes[token.start]
    }

    private func isName() -> Bool {
        switch token.kind {
        case .word, .quotedName: return true
        default: return false
        }
    }

    private func name(of t: ClassicToken) -> String? {
        switch t.kind {
        case .word:
            return String(decoding: bytes[t.start..<t.end], as: UTF8.self)
        case .quotedName(let closing):
            guard t.needsUnescaping else { return String(decoding: bytes[t.start..<t.end], as: UTF8.self) }
            return String(decoding: collapsingDoubled(closing, t.start, t.end), as: UTF8.self)
        default:
            return nil
        }
    }

    /// `schema.table` or `[dbo].[Region]`: only the last part names the table.
    private mutating func parseQualifiedName() throws(ClassicScriptError) -> String? {
        guard var result = name(of: token) else { return nil }
        try advance()
        while isPunctuation(".") {
            try advance()
            guard let part = name(of: token) else { break }
            result = part
            try advance()
        }
        return result
    }

    private func describe(_ t: ClassicToken) -> String {
        if t.kind == .end { return "the end of the script" }
        let end = min(t.end, t.start + 40)
        return "'\(String(decoding: bytes[t.start..<end], as: UTF8.self))'"
    }

    private func collapsingDoubled(_ quote: UInt8, _ start: Int, _ end: Int) -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(end - start)
        var index = start
        while index < end {
            let b = bytes[index]
            result.append(b)
            index += (b == quote && index + 1 < end && bytes[index + 1] == quote) ? 2 : 1
        }
        return result
    }

    // MARK: Statements other than INSERT

    private mutating func parseCreateOrAlter() throws(ClassicScriptError) {
        let creating = isWord("CREATE")
        try advance()
        while isWord(anyOf: [
            "OR", "REPLACE", "ALTER", "TEMP", "TEMPORARY", "UNLOGGED", "GLOBAL", "LOCAL",
            "CONSTRAINT", "DEFINER",
        ]) {
            try advance()
        }
        if creating, isWord("TABLE") {
            try parseCreateTable()
        } else if isWord(anyOf: ["PROCEDURE", "PROC", "FUNCTION", "TRIGGER", "RULE"]) {
            try skipRoutine()
        }
    }

    /// Skips a routine's body, whose INSERTs would run only when it is called, if ever.
    private mutating func skipRoutine() throws(ClassicScriptError) {
        switch dialect {
        case .transactSQL:
            // A T-SQL body runs to the end of the batch: the next `GO` on a line of its own.
            while token.kind != .end, !(token.firstOnLine && isWord("GO")) { try advance() }
        case .sqlite:
            guard isWord("TRIGGER") else { return }
            var depth = 0
            while token.kind != .end {
                if isWord("BEGIN") || isWord("CASE") {
                    depth += 1
                } else if isWord("END") {
                    depth -= 1
                    if depth <= 0 {
                        try advance()
                        return
                    }
                }
                try advance()
            }
        case .postgres:
            // Bodies are dollar- or quote-delimited strings, so the statement ends at the next top-level `;`.
            var depth = 0
            while token.kind != .end {
                if isPunctuation("(") {
                    depth += 1
                } else if isPunctuation(")") {
                    depth -= 1
                } else if depth <= 0, isPunctuation(";") {
                    return
                }
                try advance()
            }
        }
    }

    private mutating func parseCreateTable() throws(ClassicScriptError) {
        let line = token.line
        try advance()
        if isWord("IF") {
            try advance()
            if isWord("NOT") { try advance() }
            if isWord("EXISTS") { try advance() }
        }
        guard let tableName = try parseQualifiedName(), isPunctuation("(") else { return }
        try advance()
        var columns: [String] = []
        var rowIDColumn: Int?
        let constraintWords = [
            "CONSTRAINT", "PRIMARY", "FOREIGN", "UNIQUE", "CHECK", "KEY", "INDEX", "EXCLUDE",
            "LIKE", "FULLTEXT", "PERIOD",
        ]
        while true {
            let columnName = isWord(anyOf: constraintWords) ? nil : name(of: token)
            if token.kind == .end { break }
            try advance()
            var depth = 0
            var typeSeen = false
            var integerType = false
            var previousWasPrimary = false
            var primaryKey = false
            while true {
                if token.kind == .end {
                    throw ClassicScriptError(line: line, message: "The definition of table \(tableName) starting here is not closed")
                }
                if isPunctuation("(") {
                    depth += 1
                } else if isPunctuation(")") {
                    if depth == 0 { break }
                    depth -= 1
                } else if depth == 0, isPunctuation(",") {
                    break
                }
                if !typeSeen {
                    typeSeen = true
                    integerType = isWord("INTEGER")
                }
                if isWord("KEY"), previousWasPrimary { primaryKey = true }
                previousWasPrimary = isWord("PRIMARY")
                try advance()
            }
            if let columnName {
                if dialect == .sqlite, integerType, primaryKey, rowIDColumn == nil { rowIDColumn = columns.count }
                columns.append(columnName)
            }
            let closed = isPunctuation(")")
            try advance()
            if closed { break }
        }
        declared[ClassicCatalog.key(tableName)] = DeclaredTable(columns: columns, rowIDColumn: rowIDColumn)
    }

    /// pg_dump's default COPY blocks hold tab-separated data the tokenizer cannot read; say how to get INSERTs.
    private mutating func rejectCopy() throws(ClassicScriptError) {
        let line = token.line
        try advance()
        var sawFrom = false
        while token.kind != .end, !isPunctuation(";") {
            if isWord("FROM") {
                sawFrom = true
            } else if sawFrom, isWord("STDIN") {
                throw ClassicScriptError(
                    line: line,
                    message:
                        "COPY … FROM stdin data is not supported; dump the database with pg_dump --inserts"
                )
            }
            try advance()
        }
    }

    // MARK: INSERT

    private mutating func parseInsert() throws(ClassicScriptError) {
        let line = token.line
        try advance()
        if isWord("OR") {  // SQLite's INSERT OR REPLACE / OR IGNORE
            try advance()
            try advance()
        }
        if isWord("INTO") { try advance() }
        // GRANT INSERT ON, AFTER INSERT ON, FOR INSERT, UPDATE AS …: the word, not a statement.
        guard isName(), !isWord(anyOf: ["ON", "TO", "AS", "OF"]) else { return }
        guard let tableName = try parseQualifiedName() else { return }
        let key = ClassicCatalog.key(tableName)
        let schema = ClassicCatalog.byKey[key]
        if schema == nil, !ClassicCatalog.ignoredKeys.contains(key) {
            throw ClassicScriptError(line: line, message: "INSERT into unknown table '\(tableName)'")
        }
        let displayName = schema?.name ?? tableName

        var columnList: [String]?
        if isPunctuation("(") {
            try advance()
            var names: [String] = []
            while true {
                guard let column = name(of: token) else {
                    throw ClassicScriptError(
                        line: token.line,
                        message:
                            "expected a column name in INSERT into \(displayName), found \(describe(token))"
                    )
                }
                names.append(column)
                try advance()
                if isPunctuation(",") {
                    try advance()
                } else if isPunctuation(")") {
                    try advance()
                    break
                } else {
                    throw ClassicScriptError(
                        line: token.line,
                        message:
                            "expected ',' or ')' in the column list of INSERT into \(displayName), found \(describe(token))"
                    )
                }
            }
            columnList = names
        }

        guard isWord("VALUES") else {
            if isWord(anyOf: ["SELECT", "EXEC", "EXECUTE", "WITH", "DEFAULT", "SET"]) {
                throw ClassicScriptError(
                    line: line,
                    message:
                        "INSERT into \(displayName) has no VALUES list; only literal VALUES rows can be imported"
                )
            }
            throw ClassicScriptError(
                line: token.line,
                message:
                    "expected VALUES in INSERT into \(displayName), found \(describe(token))"
            )
        }
        try advance()

        var tuples: [[(ClassicRawValue, Int)]] = []
        while true {
            guard isPunctuation("(") else {
                throw ClassicScriptError(
                    line: token.line,
                    message:
                        "expected '(' to start a row of INSERT into \(displayName), found \(describe(token))"
                )
            }
            try advance()
            var values: [(ClassicRawValue, Int)] = []
            if isPunctuation(")") {
                try advance()
            } else {
                while true {
                    values.append(try parseValue(table: displayName))
                    if isPunctuation(",") {
                        try advance()
                    } else if isPunctuation(")") {
                        try advance()
                        break
                    } else {
                        throw ClassicScriptError(
                            line: token.line,
                            message:
                                "expected ',' or ')' after a value in INSERT into \(displayName), found \(describe(token))"
                        )
                    }
                }
            }
            tuples.append(values)
            guard isPunctuation(",") else { break }
            try advance()
        }

        guard let schema else { return }
        try store(tuples, into: schema, columnList: columnList, sourceKey: key, line: line)
    }

    private mutating func store(
        _ tuples: [[(ClassicRawValue, Int)]],
        into schema: ClassicTableSchema,
        columnList: [String]?,
        sourceKey: String,
        line: Int
    ) throws(ClassicScriptError) {
        let sourceColumns: [String]
        var rowIDIndex: Int?
        let declaration = declared[sourceKey]
        if let columnList {
            sourceColumns = columnList
            if let declaration, let rowID = declaration.rowIDColumn {
                let rowIDKey = ClassicCatalog.key(declaration.columns[rowID])
                rowIDIndex = columnList.firstIndex { ClassicCatalog.key($0) == rowIDKey }
            }
        } else if let declaration {
            sourceColumns = declaration.columns
            rowIDIndex = declaration.rowIDColumn
        } else {
            sourceColumns = schema.columns.map(\.name)
        }
        var targets: [Int] = []
        targets.reserveCapacity(sourceColumns.count)
        for column in sourceColumns {
            guard let target = schema.columnIndex[ClassicCatalog.key(column)] else {
                throw ClassicScriptError(line: line, message: "unknown column '\(column)' in INSERT into \(schema.name)")
            }
            targets.append(target)
        }

        // Taken out of the dictionary while appending, so the array is not copied for every statement.
        var stored = rows.removeValue(forKey: schema.name) ?? []
        for values in tuples {
            guard values.count == targets.count else {
                throw ClassicScriptError(
                    line: line,
                    message:
                        "INSERT into \(schema.name) has \(values.count) values for \(targets.count) columns"
                )
            }
            var row: [String: ClassicValue] = Dictionary(minimumCapacity: targets.count)
            for (offset, (raw, valueLine)) in values.enumerated() {
                let column = schema.columns[targets[offset]]
                var value = try coerce(raw, to: column.kind, column: "\(schema.name).\(column.name)", line: valueLine)
                if offset == rowIDIndex {
                    let last = lastRowID[schema.name] ?? 0
                    if value == .null { value = .integer(last + 1) }
                    if case .integer(let id) = value { lastRowID[schema.name] = max(last, id) }
                }
                row[column.name] = value
            }
            stored.append(ClassicRow(line: line, values: row))
        }
        rows[schema.name] = stored
    }

    private mutating func parseValue(table: String) throws(ClassicScriptError) -> (ClassicRawValue, Int) {
        let line = token.line
        var sign = ""
        if isPunctuation("-") || isPunctuation("+") {
            if isPunctuation("-") { sign = "-" }
            try advance()
            guard token.kind == .number else {
                throw ClassicScriptError(
                    line: token.line,
                    message:
                        "expected a number after the sign in INSERT into \(table), found \(describe(token))"
                )
            }
        }
        let raw: ClassicRawValue
        switch token.kind {
        case .number:
            let literal = sign + String(decoding: bytes[token.start..<token.end], as: UTF8.self)
            let integral = !bytes[token.start..<token.end].contains { !ClassicLexer.isDigit($0) }
            if integral, let value = Int64(literal) {
                raw = .integer(value, literal: literal)
            } else {
                raw = .number(literal)
            }
        case .string(let escapes):
            raw = .text(decodeString(token, escapes: escapes))
        case .hex(let quoted):
            try ClassicLexer.checkHex(bytes, token.start, token.end, line: token.line)
            if quoted || dialect == .transactSQL {
                raw = .blob(ClassicLexer.decodeHex(bytes, token.start, token.end))
            } else {
                // SQLite and PostgreSQL read 0x… as a hexadecimal integer, not as binary.
                let digits = String(decoding: bytes[token.start..<token.end], as: UTF8.self)
                guard let value = UInt64(digits, radix: 16) else {
                    throw ClassicScriptError(line: line, message: "hex integer 0x\(digits) is too large")
                }
                raw = .integer(Int64(bitPattern: value), literal: "0x" + digits)
            }
        case .word where isWord("NULL"):
            raw = .null
        case .word where isWord("TRUE") || isWord("FALSE"):
            raw = .boolean(isWord("TRUE"), literal: String(decoding: bytes[token.start..<token.end], as: UTF8.self))
        default:
            throw ClassicScriptError(
                line: line,
                message:
                    "expected a literal value in INSERT into \(table), found \(describe(token))"
            )
        }
        try advance()
        // PostgreSQL casts such as '1996-07-04'::date change nothing we keep; skip to the value's end.
        if isPunctuation(":") {
            var depth = 0
            while token.kind != .end {
                if isPunctuation("(") {
                    depth += 1
                } else if isPunctuation(")") {
                    if depth == 0 { break }
                    depth -= 1
                } else if depth == 0, isPunctuation(",") {
                    break
                }
                try advance()
            }
        }
        return (raw, line)
    }

    private func decodeString(_ t: ClassicToken, escapes: Bool) -> String {
        guard t.needsUnescaping else { return String(decoding: bytes[t.start..<t.end], as: UTF8.self) }
        guard escapes else {
            return String(decoding: collapsingDoubled(UInt8(ascii: "'"), t.start, t.end), as: UTF8.self)
        }
        return String(decoding: unescapePostgres(t.start, t.end), as: UTF8.self)
    }

    /// PostgreSQL E'' escapes: \n \t \r \b \f, octal \ooo, \xhh, \uXXXX, \UXXXXXXXX; anything else is itself.
    private func unescapePostgres(_ start: Int, _ end: Int) -> [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(end - start)
        var index = start
        func digits(_ from: Int, max: Int, radix: Int) -> (UInt32, Int) {
            var value: UInt32 = 0
            var i = from
            while i < end, i - from < max {
                let digit: UInt8?
                if radix == 8 {
                    digit =
                        bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "7")
                        ? bytes[i] - UInt8(ascii: "0") : nil
                } else {
                    digit = ClassicLexer.hexValue(bytes[i])
                }
                guard let digit else { break }
                value = value * UInt32(radix) + UInt32(digit)
                i += 1
            }
            return (value, i - from)
        }
        while index < end {
            let b = bytes[index]
            if b == UInt8(ascii: "'"), index + 1 < end, bytes[index + 1] == UInt8(ascii: "'") {
                result.append(b)
                index += 2
                continue
            }
            guard b == UInt8(ascii: "\\"), index + 1 < end else {
                result.append(b)
                index += 1
                continue
            }
            let e = bytes[index + 1]
            index += 2
            switch e {
            case UInt8(ascii: "n"): result.append(0x0A)
            case UInt8(ascii: "t"): result.append(0x09)
            case UInt8(ascii: "r"): result.append(0x0D)
            case UInt8(ascii: "b"): result.append(0x08)
            case UInt8(ascii: "f"): result.append(0x0C)
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                let (value, used) = digits(index - 1, max: 3, radix: 8)
                result.append(UInt8(truncatingIfNeeded: value))
                index += used - 1
            case UInt8(ascii: "x"):
                let (value, used) = digits(index, max: 2, radix: 16)
                if used == 0 { result.append(e) } else { result.append(UInt8(truncatingIfNeeded: value)) }
                index += used
            case UInt8(ascii: "u"), UInt8(ascii: "U"):
                let (value, used) = digits(index, max: e == UInt8(ascii: "u") ? 4 : 8, radix: 16)
                if used > 0, let scalar = Unicode.Scalar(value) {
                    result.append(contentsOf: Array(String(Character(scalar)).utf8))
                } else {
                    result.append(e)
                }
                index += used
            default:
                result.append(e)
            }
        }
        return result
    }

    // MARK: Normalising values per column

    private func coerce(
        _ raw: ClassicRawValue,
        to kind: ClassicColumnKind,
        column: String,
        line: Int
    ) throws(ClassicScriptError) -> ClassicValue {
        func fail(_ expected: String, _ found: String) -> ClassicScriptError {
            ClassicScriptError(line: line, message: "\(column): expected \(expected), found \(found)")
        }
        if case .null = raw { return .null }
        switch kind {
        case .integer:
            switch raw {
            case .integer(let value, _): return .integer(value)
            case .boolean(let flag, _): return .integer(flag ? 1 : 0)
            case .number(let literal):
                guard let value = Self.integralValue(literal) else { throw fail("an integer", literal) }
                return .integer(value)
            case .text(let text):
                // SQLite's integer affinity turns '10248' into 10248, and its conversion writes OrderIDs so.
                guard let value = Int64(text.trimmingCharacters(in: .whitespaces)) else {
                    throw fail("an integer", "'\(text)'")
                }
                return .integer(value)
            case .blob: throw fail("an integer", "binary data")
            case .null: return .null
            }
        case .decimal:
            switch raw {
            case .integer(_, let literal), .number(let literal): return .number(literal)
            case .text(let text):
                let trimmed = text.trimmingCharacters(in: .whitespaces)
                guard Self.isDecimalLiteral(trimmed) else { throw fail("a number", "'\(text)'") }
                return .number(trimmed)
            case .boolean(_, let literal): throw fail("a number", literal)
            case .blob: throw fail("a number", "binary data")
            case .null: return .null
            }
        case .text:
            switch raw {
            case .text(let text): return .text(text)
            case .integer(_, let literal), .number(let literal), .boolean(_, let literal): return .text(literal)
            case .blob: throw fail("text", "binary data")
            case .null: return .null
            }
        case .date:
            guard case .text(let text) = raw else { throw fail("a date string", "a non-string literal") }
            guard let iso = Self.isoDate(text) else { throw fail("a date", "'\(text)'") }
            return .text(iso)
        case .flag:
            switch raw {
            case .integer(let value, _): return .integer(value == 0 ? 0 : 1)
            case .boolean(let flag, _): return .integer(flag ? 1 : 0)
            case .number(let literal):
                guard let value = Self.integralValue(literal) else { throw fail("0 or 1", literal) }
                return .integer(value == 0 ? 0 : 1)
            case .text(let text):
                switch text.trimmingCharacters(in: .whitespaces).lowercased() {
                case "1", "true", "t", "yes", "y", "on": return .integer(1)
                case "0", "false", "f", "no", "n", "off": return .integer(0)
                default: throw fail("a boolean", "'\(text)'")
                }
            case .blob(let data):
                guard data.count == 1 else { throw fail("a boolean", "binary data") }
                return .integer(data[0] == 0 ? 0 : 1)
            case .null: return .null
            }
        case .blob:
            switch raw {
            case .blob(let data): return .blob(data)
            case .text(let text):
                // PostgreSQL's bytea hex format: '\x' followed by pairs of hex digits.
                let utf8 = Array(text.utf8)
                guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] | 0x20 == UInt8(ascii: "x") else {
                    throw fail("binary data ('\\x…' or a hex literal)", "text")
                }
                try ClassicLexer.checkHex(utf8, 2, utf8.count, line: line)
                return .blob(ClassicLexer.decodeHex(utf8, 2, utf8.count))
            case .integer(_, let literal), .number(let literal), .boolean(_, let literal):
                throw fail("binary data", literal)
            case .null: return .null
            }
        }
    }

    /// "1", "1.0", "-2.00" → integer; anything with a non-zero fraction or exponent → nil.
    static func integralValue(_ literal: String) -> Int64? {
        let parts = literal.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].allSatisfy({ $0 == "0" }) else { return Int64(literal) }
        return Int64(parts[0])
    }

    static func isDecimalLiteral(_ text: String) -> Bool {
        var digits = 0
        var dots = 0
        for (offset, c) in text.utf8.enumerated() {
            if ClassicLexer.isDigit(c) {
                digits += 1
            } else if c == UInt8(ascii: ".") {
                dots += 1
            } else if !(offset == 0 && (c == UInt8(ascii: "-") || c == UInt8(ascii: "+"))) {
                return false
            }
        }
        return digits > 0 && dots <= 1
    }

    // MARK: Dates

    /// Reads 'M/D/YYYY' (Microsoft's US form), 'YYYY-MM-DD' and 'YYYYMMDD', each with an optional
    /// 'H:MM[:SS[.fff]]' time and AM/PM, and writes "YYYY-MM-DD" at midnight or "YYYY-MM-DD HH:MM:SS" otherwise
    /// (with the fraction only when it is not zero).
    static func isoDate(_ text: String) -> String? {
        let b = Array(text.utf8)
        var i = 0
        func number(maxDigits: Int) -> Int? {
            var value = 0
            let start = i
            while i < b.count, i - start < maxDigits, ClassicLexer.isDigit(b[i]) {
                value = value * 10 + Int(b[i] - UInt8(ascii: "0"))
                i += 1
            }
            return i > start ? value : nil
        }
        func skipSpaces() { while i < b.count, b[i] == UInt8(ascii: " ") { i += 1 } }
        func expect(_ c: Character) -> Bool {
            guard i < b.count, b[i] == c.asciiValue else { return false }
            i += 1
            return true
        }

        skipSpaces()
        let year: Int
        let month: Int
        let day: Int
        let start = i
        guard let first = number(maxDigits: 8) else { return nil }
        let firstLength = i - start
        if firstLength == 8 {
            (year, month, day) = (first / 10000, first / 100 % 100, first % 100)
        } else if firstLength == 4 {
            guard expect("-") || expect("/"), let m = number(maxDigits: 2), expect("-") || expect("/"),
                let d = number(maxDigits: 2)
            else { return nil }
            (year, month, day) = (first, m, d)
        } else if firstLength <= 2 {
            guard expect("/"), let d = number(maxDigits: 2), expect("/"), let y = number(maxDigits: 4) else {
                return nil
            }
            (year, month, day) = (y, first, d)
        } else {
            return nil
        }
        guard LocalDate(year: year, month: month, day: day) != nil else { return nil }

        var hour = 0
        var minute = 0
        var second = 0
        var fraction = ""
        if i < b.count, b[i] == UInt8(ascii: "T") { i += 1 } else { skipSpaces() }
        if i < b.count {
            guard let h = number(maxDigits: 2), expect(":"), let m = number(maxDigits: 2) else { return nil }
            (hour, minute) = (h, m)
            if expect(":") {
                guard let s = number(maxDigits: 2) else { return nil }
                second = s
                if expect(".") {
                    let fractionStart = i
                    while i < b.count, ClassicLexer.isDigit(b[i]) { i += 1 }
                    fraction = String(decoding: b[fractionStart..<i], as: UTF8.self)
                    while fraction.hasSuffix("0") { fraction.removeLast() }
                }
            }
            skipSpaces()
            if i + 1 < b.count, b[i + 1] | 0x20 == UInt8(ascii: "m") {
                let marker = b[i] | 0x20
                guard marker == UInt8(ascii: "a") || marker == UInt8(ascii: "p"), (1...12).contains(hour) else {
                    return nil
                }
                hour = hour % 12 + (marker == UInt8(ascii: "p") ? 12 : 0)
                i += 2
                skipSpaces()
            }
            guard i == b.count, hour < 24, minute < 60, second < 60 else { return nil }
        }

        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let date = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
        if hour == 0, minute == 0, second == 0, fraction.isEmpty { return date }
        return "\(date) \(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))" + (fraction.isEmpty ? "" : ".\(fraction)")
    }
}
