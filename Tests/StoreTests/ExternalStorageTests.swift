import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

@Suite("Binary attributes with external storage")
struct ExternalStorageTests {
    func files(_ store: TemporaryStore) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: store.store.binaries.directory.path)) ?? []).sorted()
    }

    @Test func smallValuesStayInTheRowAndLargeOnesGoToAFile() async throws {
        let store = try TemporaryStore(threshold: 1000)
        let b = store.backoffice
        let category = try await b.records.create(Category(name: "Beverages"))
        let id = try #require(category.id)

        let small = BinaryContent(bytes: Data(repeating: 1, count: 1000), contentType: "image/png")
        try await b.catalogue.setPicture(categoryID: id, small)
        #expect(files(store).isEmpty)
        #expect(try await b.catalogue.picture(categoryID: id) == small)

        let large = BinaryContent(bytes: Data(repeating: 2, count: 1001), contentType: "image/bmp")
        try await b.catalogue.setPicture(categoryID: id, large)
        let first = files(store)
        #expect(first.count == 1)
        #expect(try await b.catalogue.picture(categoryID: id) == large)
        #expect(try store.count("SELECT count(*) FROM categories WHERE picture IS NULL AND pictureFile IS NOT NULL") == 1)

        let replacement = BinaryContent(bytes: Data(repeating: 3, count: 5000), contentType: "image/jpeg")
        try await b.catalogue.setPicture(categoryID: id, replacement)
        let second = files(store)
        #expect(second.count == 1)
        #expect(second != first)
        #expect(try await b.catalogue.picture(categoryID: id) == replacement)

        try await b.catalogue.setPicture(categoryID: id, small)
        #expect(files(store).isEmpty)

        try await b.catalogue.setPicture(categoryID: id, large)
        try await b.catalogue.setPicture(categoryID: id, nil)
        #expect(files(store).isEmpty)
        #expect(try await b.catalogue.picture(categoryID: id) == nil)
    }

    @Test func deletingTheRowRemovesItsFile() async throws {
        let store = try TemporaryStore(threshold: 10)
        let b = store.backoffice
        let employee = try await b.records.create(Employee(firstName: "Nancy", lastName: "Davolio"))
        let id = try #require(employee.id)
        try await b.people.setPhoto(employeeID: id, BinaryContent(bytes: Data(repeating: 7, count: 100), contentType: "image/bmp"))
        #expect(files(store).count == 1)
        try await b.records.delete(Employee.self, id: id)
        #expect(files(store).isEmpty)
    }

    @Test func aRolledBackWriteLeavesNoFile() async throws {
        let store = try TemporaryStore(threshold: 10)
        let category = try await store.backoffice.records.create(Category(name: "Beverages"))
        let binaries = store.store.binaries
        struct Crash: Error {}
        #expect(throws: Crash.self) {
            try store.store.pool.write { db in
                try binaries.save(
                    db,
                    BinaryContent(bytes: Data(repeating: 9, count: 100), contentType: "image/png"),
                    table: "categories",
                    attribute: "picture",
                    id: category.id ?? 0
                )
                #expect(self.files(store).count == 1)
                throw Crash()
            }
        }
        #expect(files(store).isEmpty)
        #expect(try await store.backoffice.catalogue.picture(categoryID: category.id ?? 0) == nil)
    }

    @Test func orphansFromACrashAreSweptWhenTheStoreNextOpens() async throws {
        let store = try TemporaryStore(threshold: 10)
        let category = try await store.backoffice.records.create(Category(name: "Beverages"))
        try await store.backoffice.catalogue.setPicture(
            categoryID: category.id ?? 0,
            BinaryContent(bytes: Data(repeating: 1, count: 50), contentType: "image/png")
        )
        let kept = files(store)
        // A file written just before a crash, which no committed row names.
        let orphan = store.store.binaries.directory.appendingPathComponent(UUID().uuidString.lowercased())
        try Data(repeating: 5, count: 50).write(to: orphan)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: orphan.path)

        // A young orphan may be another process's file about to be committed: it survives a short grace period.
        _ = try store.reopen(gracePeriod: 7200)
        #expect(files(store).count == 2)
        _ = try store.reopen(gracePeriod: 60)
        #expect(files(store) == kept)
        #expect(try await store.backoffice.catalogue.picture(categoryID: category.id ?? 0)?.bytes.count == 50)
    }
}
