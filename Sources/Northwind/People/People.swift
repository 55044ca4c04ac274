import Foundation
import GRDB
import NorthwindStore

extension People {
    /// Every employee as the list shows them, by last name: the title, and whether a photo exists.
    public func employees() throws(NorthwindError) -> [Listing] {
        try listing(
            """
            SELECT id, firstName || ' ' || lastName, title, photo IS NOT NULL OR photoFile IS NOT NULL
            FROM employees ORDER BY lastName, firstName, id
            """
        )
    }

    public func hasPhoto(id: Int64) throws(NorthwindError) -> Bool {
        try listing("SELECT id, '', NULL, photo IS NOT NULL OR photoFile IS NOT NULL FROM employees WHERE id = ?", [id])
            .first?.hasImage ?? false
    }
}

extension People {
    public func photo(employeeID: Int64) async throws(NorthwindError) -> BinaryContent? {
        try await binary(Employee.self, attribute: "photo", id: employeeID)
    }

    public func setPhoto(employeeID: Int64, _ content: BinaryContent?) async throws(NorthwindError) {
        try await setBinary(Employee.self, attribute: "photo", id: employeeID, content)
    }

    /// Finds a customer by the code staff use on the phone ("VINET"), case-insensitively.
    public func customer(code: String) throws(NorthwindError) -> Customer {
        try quickRead { db in try Records.customer(code: code, db) }
    }
}
