// Chapter 15: a new machine's first run, done by the domain as the first-run page does it, and what /readyz reads.
import Foundation
import Northwind
import NorthwindLoading
import NorthwindStore

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
defer { try? FileManager.default.removeItem(at: folder) }
// A new machine's store: empty, as `serve` makes it when setup.firstRun is on.
let backoffice = try Backoffice.open(StoreConfiguration(path: folder.appendingPathComponent("northwind.sqlite").path), seedIfCreated: false)

// guide: begin first-run
print("First run pending: \(try await backoffice.setup.state().pending)")
let weak = FirstRunForm(
    firstName: "Anna",
    lastName: "Kowalska",
    login: "anna.kowalska",
    password: "anna.kowalska1",
    siteName: "Head office",
    siteCode: "hq",
    role: .headOffice
)
for problem in problems(of: weak) { print(problem) }
let form = FirstRunForm(
    firstName: "Anna",
    lastName: "Kowalska",
    login: "anna.kowalska",
    password: "amber-lantern-ferry-42",
    siteName: "Head office",
    siteCode: "HQ",
    role: .headOffice
)
let manager = try await backoffice.setup.complete(form, title: "Sales Manager")
print("Manager \(manager) made; first run pending: \(try await backoffice.setup.state().pending)")

let figures = try await backoffice.reports.serverFigures(backups: BackupFolder(url: folder.appendingPathComponent("backups")))
print("Migrated: \(figures.migrated), joined: \(figures.joined), outbox: \(figures.outboxDepth), no backup yet: \(figures.secondsSinceBackup == nil)")
// guide: end first-run
let site = try await backoffice.sync.siteCode()
precondition(site == "HQ", "the site code chosen on the page numbers this site's orders")

/// What the page shows beside each field: the form's problems, none when it is good.
func problems(of form: FirstRunForm) -> [String] {
    do throws(NorthwindError) {
        try Setup.validate(form)
        return []
    } catch {
        guard case .invalid(let fields) = error else { return [error.description] }
        return fields.map { "\($0.field): \($0.message)" }
    }
}
