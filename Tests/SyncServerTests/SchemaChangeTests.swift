import SyncAPI
import SyncProtocol
import Testing

@testable import NorthwindTestSupport

/// The server keeps a container's schema decoded between batches (`SchemaCache`); a schema declared anew must still
/// hold from the next batch on.
struct SchemaChangeTests {
    static func schema(nameRequired: Bool) -> Components.Schemas.ContainerSchema {
        .init(recordTypes: [.init(name: "Product", fields: [.init(name: "name", _type: .string, required: nameRequired)])])
    }

    @Test(arguments: SyncEngine.all) func aSchemaDeclaredAgainHoldsFromTheNextBatch(_ engine: SyncEngine) async throws {
        try await SyncHarness.with(engine) { server in
            // Given head office's schema, under which a product needs a name, and a nameless product refused by it
            let (hq, _) = try await server.company()
            _ = try await hq.putSchema(path: .init(container: "acme"), body: .json(Self.schema(nameRequired: true))).ok
            let refused = try await hq.modify([(.create, record("p1", ["unitPrice": .decimal("18.00")]))])
            // When head office declares a schema under which the name is optional and sends the product again, then
            // declares the first schema again and sends another nameless product
            _ = try await hq.putSchema(path: .init(container: "acme"), body: .json(Self.schema(nameRequired: false))).ok
            let taken = try await hq.modify([(.create, record("p1", ["unitPrice": .decimal("18.00")]))])
            _ = try await hq.putSchema(path: .init(container: "acme"), body: .json(Self.schema(nameRequired: true))).ok
            let refusedAgain = try await hq.modify([(.create, record("p2", ["unitPrice": .decimal("19.00")]))])
            // Then each batch was judged by the schema declared last before it
            #expect(refused.value?.records.first?.error?.serverErrorCode == .schemaViolation, "\(refused)")
            #expect(taken.value?.records.first?.record != nil, "\(taken)")
            #expect(refusedAgain.value?.records.first?.error?.serverErrorCode == .schemaViolation, "\(refusedAgain)")
        }
    }
}
