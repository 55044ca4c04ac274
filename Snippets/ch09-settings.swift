// Chapter 9: a setting's value comes from the first layer that has one; the catalogue says what is valid.
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
let backoffice = try Backoffice.open(StoreConfiguration(path: folder.appendingPathComponent("northwind.sqlite").path))

// guide: begin settings-layers
// The environment of a server started with NORTHWIND_PAGES_PAGE_SIZE=40, and no settings file.
let sources = SettingsSources(environment: ["NORTHWIND_PAGES_PAGE_SIZE": "40"], file: folder.appendingPathComponent("none.json").path)
let settings = try await Settings(sources: sources, backoffice: backoffice)
// A manager stores values for this installation, as the settings page does.
try await backoffice.settings.set("pages.pageSize", "100", by: "guide")
try await backoffice.settings.set("stock.lowStockMargin", "5", by: "guide")
try await settings.reload(from: backoffice)
for key in ["pages.pageSize", "stock.lowStockMargin", "session.lifetimeHours"] {
    let value = try settings.value(key)
    print("\(key) = \(value.value), from \(value.origin)")
}
// guide: end settings-layers
let pageSize = try settings.value("pages.pageSize").value
precondition(pageSize == "40", "the environment is above this installation's value")
precondition(backoffice.rules.lowStockMargin == 5, "the domain's rules read the stored margin")

// guide: begin settings-refused
do {
    try await backoffice.settings.set("pages.pageSize", "5000")
} catch {
    print(error)
}
// guide: end settings-refused
