import Foundation
import HTTPTypes
import Testing
import Yams

@testable import SyncServer

/// What the server decides before its router, by a path's shape, held to the contract's paths.
struct SyncContractTests {
    static let contract = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/SyncAPI/openapi.yaml").standardizedFileURL

    static let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]

    @Test func everyPathTakesExactlyTheMethodsTheContractGivesIt() throws {
        // Given every path of the contract, its placeholders filled, and the methods it declares
        let document = try #require(try Yams.load(yaml: String(contentsOf: Self.contract, encoding: .utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        #expect(paths.count > 10)
        for (template, item) in paths {
            let declared = Set(item.keys.filter(Self.methods.contains).map { $0.uppercased() })
            for database in template.contains("{database}") ? ["shared", "private"] : [""] {
                let path = template.replacingOccurrences(of: "{container}", with: "acme")
                    .replacingOccurrences(of: "{database}", with: database)
                    .replacingOccurrences(of: "{sha256}", with: String(repeating: "ab", count: 32))
                // When the gate is asked which methods the path takes
                let allowed = SyncGate.allowedMethods(path).map { Set($0.map(\.rawValue)) }
                // Then they are the contract's
                #expect(allowed == declared, "\(path)")
            }
        }
    }

    @Test func aPathTheContractDoesNotHaveIsNoneOfTheProtocols() {
        // Given paths beside the protocol's
        for path in ["/sync/v2/enroll", "/sync/v1", "/sync/v1/acme/public/records/modify", "/health", "/sync/v1/acme/shared/records"] {
            // Then the gate does not claim them
            #expect(SyncGate.allowedMethods(path) == nil, "\(path)")
        }
    }
}
