import Foundation
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind

/// The classic scripts live beside the package (`<root>/../shared/northwind`) and are never copied into it,
/// so tests that need them are skipped where they are absent.
enum ClassicFixtures {
    static let directory: URL? = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                let shared = url.deletingLastPathComponent().appendingPathComponent("shared/northwind")
                return FileManager.default.fileExists(atPath: shared.path) ? shared : nil
            }
            url = url.deletingLastPathComponent()
        }
        return nil
    }()

    static func text(_ relativePath: String) throws -> String {
        let directory = try #require(directory)
        return try String(contentsOf: directory.appendingPathComponent(relativePath), encoding: .utf8)
    }

    static func dataset(_ relativePath: String) throws -> ClassicDataset {
        try ClassicScript.parse(text(relativePath))
    }

    static let mssql = "mssql/instnwnd.sql"
    static let sqlite = "sqlite/create.sql"
    static let postgres = "postgres/northwind.sql"
}

let sharedNorthwindAvailable = ClassicFixtures.directory != nil
