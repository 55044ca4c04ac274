import Foundation
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

private let canonicalCounts: [String: Int] = [
    "Categories": 8, "Customers": 91, "Employees": 9, "EmployeeTerritories": 49, "Order Details": 2155,
    "Orders": 830, "Products": 77, "Region": 4, "Shippers": 3, "Suppliers": 29, "Territories": 53,
    "CustomerCustomerDemo": 0, "CustomerDemographics": 0,
]

private func counts(_ dataset: ClassicDataset) -> [String: Int] {
    dataset.tables.mapValues(\.count)
}

private func parseError(_ text: String) -> ClassicScriptError? {
    do {
        _ = try ClassicScript.parse(text)
        return nil
    } catch {
        return error
    }
}

@Suite("Classic Northwind scripts")
struct ClassicScriptTests {
    // MARK: The three real scripts

    @Test(.enabled(if: sharedNorthwindAvailable, "../shared/northwind is absent"))
    func transactSQLHasTheCanonicalCounts() throws {
        let dataset = try ClassicFixtures.dataset(ClassicFixtures.mssql)
        #expect(dataset.dialect == .transactSQL)
        #expect(counts(dataset) == canonicalCounts)
    }

    @Test(.enabled(if: sharedNorthwindAvailable, "../shared/northwind is absent"))
    func sqliteHasTwoJunkCustomersAndAssignsAutoincrementIDs() throws {
        let dataset = try ClassicFixtures.dataset(ClassicFixtures.sqlite)
        #expect(dataset.dialect == .sqlite)
        var expected = canonicalCounts
        expected["Customers"] = 93
        #expect(counts(dataset) == expected)
        let categoryIDs = dataset.tables["Categories"]?.map { $0.values["CategoryID"] ?? .null }
        #expect(categoryIDs == (1...8).map { ClassicValue.integer(Int64($0)) })
        let employeeIDs = dataset.tables["Employees"]?.map { $0.values["EmployeeID"] ?? .null }
        #expect(employeeIDs == (1...9).map { ClassicValue.integer(Int64($0)) })
    }

    @Test(.enabled(if: sharedNorthwindAvailable, "../shared/northwind is absent"))
    func postgresHasSixShippersAndNoUSStates() throws {
        let dataset = try ClassicFixtures.dataset(ClassicFixtures.postgres)
        #expect(dataset.dialect == .postgres)
        var expected = canonicalCounts
        expected["Shippers"] = 6
        #expect(counts(dataset) == expected)
        #expect(dataset.tables["us_states"] == nil)
    }

    @Test(
        .enabled(if: sharedNorthwindAvailable, "../shared/northwind is absent"),
        arguments: [ClassicFixtures.mssql, ClassicFixtures.sqlite, ClassicFixtures.postgres]
    )
    func order10248ReadsTheSameInEveryDialect(script: String) throws {
        let dataset = try ClassicFixtures.dataset(script)
        let orders = try #require(dataset.tables["Orders"])
        let order = try #require(orders.first { $0.values["OrderID"] == .integer(10248) })
        #expect(order.values["CustomerID"] == .text("VINET"))
        #expect(order.values["EmployeeID"] == .integer(5))
        #expect(order.values["OrderDate"] == .text("1996-07-04"))
        #expect(order.values["RequiredDate"] == .text("1996-08-01"))
        #expect(order.values["ShippedDate"] == .text("1996-07-16"))
        #expect(order.line > 0)
        let details = try #require(dataset.tables["Order Details"]).filter { $0.values["OrderID"] == .integer(10248) }
        #expect(details.count == 3)
        #expect(details.map { $0.values["ProductID"] ?? .null } == [.integer(11), .integer(42), .integer(72)])
    }

    @Test(
        .enabled(if: sharedNorthwindAvailable, "../shared/northwind is absent"),
        arguments: [ClassicFixtures.mssql, ClassicFixtures.sqlite, ClassicFixtures.postgres]
    )
    func product38DecodesNonASCIIAndExactPrice(script: String) throws {
        let dataset = try ClassicFixtures.dataset(script)
        let products = try #require(dataset.tables["Products"])
        let product = try #require(products.first { $0.values["ProductID"] == .integer(38) })
        #expect(product.values["ProductName"] == .text("Côte de Blaye"))
        guard case .number(let price)? = product.values["UnitPrice"] else {
            Issue.record("UnitPrice is not a decimal: \(String(describing: product.values["UnitPrice"]))")
            return
        }
        #expect(Decimal(string: price) == Decimal(string: "263.5"))
        #expect(product.values["Discontinued"] == .integer(0))
    }

    @Test(
        .enabled(if: sharedNorthwindAvailable, "../shared/northwind is absent"),
        arguments: [ClassicFixtures.mssql, ClassicFixtures.sqlite, ClassicFixtures.postgres]
    )
    func datesAreISO(script: String) throws {
        let dataset = try ClassicFixtures.dataset(script)
        let iso = /^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2})?$/
        for (table, columns) in [
            ("Orders", ["OrderDate", "RequiredDate", "ShippedDate"]),
            ("Employees", ["BirthDate", "HireDate"]),
        ] {
            for row in dataset.tables[table] ?? [] {
                for column in columns {
                    switch row.values[column] {
                    case .text(let date)?:
                        #expect(date.wholeMatch(of: iso) != nil, "\(table).\(column) on line \(row.line): \(date)")
                    case .null?:
                        break
                    default:
                        Issue.record("\(table).\(column) on line \(row.line) is \(String(describing: row.values[column]))")
                    }
                }
            }
        }
        let nancy = try #require(dataset.tables["Employees"]?.first { $0.values["EmployeeID"] == .integer(1) })
        #expect(nancy.values["BirthDate"] == .text("1948-12-08"))
    }

    @Test(.enabled(if: sharedNorthwindAvailable, "../shared/northwind is absent"))
    func transactSQLPicturesUnwrapToBitmaps() throws {
        let dataset = try ClassicFixtures.dataset(ClassicFixtures.mssql)
        for (table, column) in [("Categories", "Picture"), ("Employees", "Photo")] {
            let rows = try #require(dataset.tables[table])
            #expect(!rows.isEmpty)
            for row in rows {
                guard case .blob(let wrapped)? = row.values[column] else {
                    Issue.record("\(table).\(column) on line \(row.line) is not binary")
                    continue
                }
                let image = try #require(Picture.unwrap(wrapped))
                #expect(image.contentType == "image/bmp")
                #expect(image.bytes.count < wrapped.count)
                #expect(Array(image.bytes.prefix(2)) == Array("BM".utf8))
                let sizeField =
                    image.bytes.count >= 6
                    ? Int(image.bytes[2]) | Int(image.bytes[3]) << 8 | Int(image.bytes[4]) << 16
                        | Int(image.bytes[5]) << 24
                    : -1
                #expect(sizeField == image.bytes.count)
            }
        }
    }

    @Test(.enabled(if: sharedNorthwindAvailable, "../shared/northwind is absent"))
    func truncatedScriptNamesTheLineOfTheOpenString() throws {
        let text = try ClassicFixtures.text(ClassicFixtures.mssql)
        let range = try #require(text.range(of: "'Côte de Blaye'"))
        let line = text[..<range.lowerBound].utf8.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        let error = try #require(parseError(String(text[..<range.lowerBound]) + "'Côte de"))
        #expect(error.line == line)
        #expect(error.message.contains("unterminated string"))
    }

    // MARK: Small inline scripts

    @Test func unterminatedStringNamesTheLineWhereItStarts() throws {
        let error = try #require(parseError("INSERT \"Region\" VALUES(1,\n'Eastern)\nGO\n"))
        #expect(error.line == 2)
        #expect(error.message.contains("unterminated string"))
        #expect(error.description == "line 2: \(error.message)")
    }

    @Test func badHexNamesItsLine() throws {
        let oddDigits = try #require(
            parseError(
                """
                SET QUOTED_IDENTIFIER ON
                GO
                INSERT "Categories"("CategoryID","CategoryName","Description","Picture") VALUES(1,'A','d',0x151)
                """
            )
        )
        #expect(oddDigits.line == 3)
        let badDigit = try #require(
            parseError(
                """
                PRAGMA foreign_keys=off;
                INSERT INTO Categories VALUES(1,'A','d',
                X'FFZ8');
                """
            )
        )
        #expect(badDigit.line == 3)
        #expect(badDigit.message.contains("hex"))
    }

    @Test func valueCountMismatchNamesTheStatement() throws {
        let error = try #require(parseError("GO\n\nINSERT INTO Region\n(RegionID, RegionDescription)\nVALUES (1)\n"))
        #expect(error.line == 3)
        #expect(error.message.contains("1 values for 2 columns"))
    }

    @Test func unknownTablesAreErrorsExceptUSStates() throws {
        let error = try #require(parseError("INSERT INTO Widgets VALUES (1)\n"))
        #expect(error.line == 1)
        #expect(error.message.contains("Widgets"))
        let dataset = try ClassicScript.parse(
            """
            SET standard_conforming_strings = on;
            INSERT INTO us_states VALUES (1, 'Alabama', 'AL', 'south');
            INSERT INTO region VALUES (1, 'Eastern');
            """
        )
        #expect(dataset.dialect == .postgres)
        #expect(dataset.tables["Region"]?.count == 1)
    }

    @Test func insertsInsideProceduresCommentsAndStringsAreIgnored() throws {
        let dataset = try ClassicScript.parse(
            """
            SET QUOTED_IDENTIFIER ON
            GO
            CREATE PROCEDURE AddRegion AS
            INSERT INTO Region VALUES (99, 'From a procedure')
            GO
            -- INSERT INTO Region VALUES (98, 'From a comment')
            /* INSERT INTO Region VALUES (97, 'From a block comment') */
            INSERT "Region" VALUES(1, N'It''s INSERT INTO Region VALUES (96, ''x'')')
            """
        )
        let rows = try #require(dataset.tables["Region"])
        #expect(rows.count == 1)
        #expect(rows.first?.line == 8)
        #expect(rows.first?.values["RegionDescription"] == .text("It's INSERT INTO Region VALUES (96, 'x')"))
    }

    @Test func valuesAreNormalisedPerColumn() throws {
        let transact = try ClassicScript.parse(
            """
            SET QUOTED_IDENTIFIER ON
            GO
            INSERT INTO "Orders"("OrderID","OrderDate","ShippedDate","Freight") VALUES (1,'7/4/1996','7/16/1996 1:45 PM',32)
            INSERT "Products"("ProductID","ProductName","UnitPrice","Discontinued") VALUES(5,'Gumbo',21.35,1)
            """
        )
        let order = try #require(transact.tables["Orders"]?.first)
        #expect(order.values["OrderDate"] == .text("1996-07-04"))
        #expect(order.values["ShippedDate"] == .text("1996-07-16 13:45:00"))
        #expect(order.values["Freight"] == .number("32"))
        let product = try #require(transact.tables["Products"]?.first)
        #expect(product.values["UnitPrice"] == .number("21.35"))
        #expect(product.values["Discontinued"] == .integer(1))

        let sqlite = try ClassicScript.parse(
            """
            PRAGMA foreign_keys=off;
            CREATE TABLE [Categories] ([CategoryID] INTEGER PRIMARY KEY AUTOINCREMENT, [CategoryName] TEXT,
                [Description] TEXT, [Picture] BLOB);
            INSERT INTO Categories VALUES(null,'A','d',X'FFD8FF');
            INSERT INTO Categories VALUES(null,'B','d',NULL);
            INSERT INTO Orders VALUES ('10248','VINET',5,'1996-07-04 00:00:00.000',NULL,NULL,3,32.38,'a','b','c',NULL,'1','F');
            """
        )
        #expect(sqlite.tables["Categories"]?.map { $0.values["CategoryID"] ?? .null } == [.integer(1), .integer(2)])
        #expect(sqlite.tables["Categories"]?.first?.values["Picture"] == .blob([0xFF, 0xD8, 0xFF]))
        #expect(sqlite.tables["Orders"]?.first?.values["OrderID"] == .integer(10248))
        #expect(sqlite.tables["Orders"]?.first?.values["OrderDate"] == .text("1996-07-04"))

        let postgres = try ClassicScript.parse(
            """
            SET standard_conforming_strings = on;
            INSERT INTO categories VALUES (1, 'Beverages', E'Caf\\u00e9\\n', '\\x424d');
            INSERT INTO products VALUES (1, 'Chai', 1, 1, '10 boxes', 18, 39, 0, 10, true), (2, 'Chang', 1, 1, '24', 19, 17, 40, 25, 'f');
            """
        )
        let category = try #require(postgres.tables["Categories"]?.first)
        #expect(category.values["Description"] == .text("Café\n"))
        #expect(category.values["Picture"] == .blob([0x42, 0x4D]))
        #expect(postgres.tables["Products"]?.map { $0.values["Discontinued"] ?? .null } == [.integer(1), .integer(0)])
    }

    @Test func unwrapImageSniffsAndPassesPlainImagesThrough() {
        #expect(Picture.unwrap([]) == nil)
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]
        #expect(Picture.unwrap(png)?.contentType == "image/png")
        #expect(Picture.unwrap(png)?.bytes == png)
        let wrappedJPEG: [UInt8] = [0x15, 0x1C, 0x2F, 0x00] + [0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xD9] + [0, 0]
        #expect(Picture.unwrap(wrappedJPEG)?.contentType == "image/jpeg")
        #expect(Picture.unwrap(wrappedJPEG)?.bytes == [0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xD9])
    }
}
