// Chapter 6: a classic report through the domain layer, and why its money needs float32 to match Microsoft's.
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
let backoffice = try Backoffice.open(StoreConfiguration(path: folder.appendingPathComponent("northwind.sqlite").path))

// guide: begin run-report
let table = try await backoffice.reports.run("ten-most-expensive-products")
for row in table.rows.prefix(3) { print(row.map(\.description).joined(separator: "  ")) }
// guide: end run-report
let prices = table.rows.compactMap { row -> Int? in if case .money(let m) = row[1] { Int(m.cents) } else { nil } }
precondition(table.rows.count == 10 && prices == prices.sorted(by: >), "ten rows, dearest first")

// guide: begin float32-money
// A line's amount, exactly: price × quantity × (1 − discount), rounded half away from zero to the cent.
func exact(_ cents: Int64, _ quantity: Int64, _ discount: Decimal) -> Int64 {
    var amount = Decimal(cents * quantity) * (1 - discount)
    var rounded = Decimal()
    NSDecimalRound(&rounded, &amount, 0, .plain)
    return NSDecimalNumber(decimal: rounded).int64Value
}
// The same line as SQL Server computes it in the classic views, with float32 (`real`) steps.
func sqlServer(_ cents: Int64, _ quantity: Int64, _ discount: Double) -> Int64 {
    ReportFunctions.extendedPriceCents(unitPriceCents: cents, quantity: quantity, discount: discount) ?? -1
}
var (differ, lines) = (0, 0)
for cents in stride(from: Int64(100), through: 5000, by: 5) {
    for quantity in [Int64(1), 6, 12, 35] {
        for (discount, decimal) in [(0.05, Decimal(string: "0.05")!), (0.15, Decimal(string: "0.15")!), (0.25, Decimal(string: "0.25")!)] {
            lines += 1
            let (a, b) = (exact(cents, quantity, decimal), sqlServer(cents, quantity, discount))
            if a != b {
                if differ == 0 { print("\(cents) cents × \(quantity) less \(discount): exactly \(a), SQL Server \(b)") }
                differ += 1
            }
        }
    }
}
print("\(differ) of \(lines) lines differ by a cent")
// guide: end float32-money
precondition(differ > 0, "float32 changes some amounts by a cent")
