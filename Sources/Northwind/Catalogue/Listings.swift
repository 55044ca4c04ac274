import Foundation
import GRDB
import NorthwindStore

extension Catalogue {
    /// Every category as its list shows it, in name order: no cap, and no picture bytes, only whether one exists.
    public func categories() throws(NorthwindError) -> [Listing] {
        try listing(
            """
            SELECT id, name, description, picture IS NOT NULL OR pictureFile IS NOT NULL
            FROM categories ORDER BY name, id
            """
        )
    }

    public func hasPicture(id: Int64) throws(NorthwindError) -> Bool {
        try listing("SELECT id, '', NULL, picture IS NOT NULL OR pictureFile IS NOT NULL FROM categories WHERE id = ?", [id])
            .first?.hasImage ?? false
    }
}

extension BackofficeFeature {
    func listing(_ sql: String, _ arguments: StatementArguments = []) throws(NorthwindError) -> [Listing] {
        try quickRead { db in
            try Row.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
                .map { Listing(id: $0[0], name: $0[1], detail: $0[2], hasImage: $0[3]) }
        }
    }
}

/// A category or employee in a list: its name, a line about it (description, title), and whether it has an image.
public struct Listing: Sendable, Hashable {
    public var id: Int64
    public var name: String
    public var detail: String?
    public var hasImage: Bool
}

/// A record as a form offers it: its id and the name a person picks it by.
public struct Choice: Sendable, Hashable {
    public var id: Int64
    public var name: String
}

extension Records {
    /// Every record of a kind as a choice, in its list order: all of them, however many, so a form never lacks the
    /// record it is editing. Two columns only: categories and employees carry pictures.
    public func choices<R: ManagedRecord>(_ type: R.Type) async throws(NorthwindError) -> [Choice] {
        try await read { db in
            try R.select([Column("id"), R.choiceName], as: Row.self).order(R.defaultOrdering + [Column("id")])
                .fetchAll(db).map { Choice(id: $0[0], name: $0[1]) }
        }
    }
}

extension Catalogue {
    public func picture(categoryID: Int64) async throws(NorthwindError) -> BinaryContent? {
        try await binary(Category.self, attribute: "picture", id: categoryID)
    }

    public func setPicture(categoryID: Int64, _ content: BinaryContent?) async throws(NorthwindError) {
        try await setBinary(Category.self, attribute: "picture", id: categoryID, content)
    }
}

extension Catalogue {
    /// The products of one category, by name.
    public func products(categoryID: Int64) async throws(NorthwindError) -> [Product] {
        try await read { db in
            try Product.filter(Product.Columns.categoryID == categoryID).order(Product.Columns.name).fetchAll(db)
        }
    }
}
