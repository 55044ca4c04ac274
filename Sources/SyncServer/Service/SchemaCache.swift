import Foundation
import SyncAPI
import Synchronization

/// Containers' schemas as decoded from their stored JSON, kept while the JSON stays the same. Every batch for the
/// shared database checks its records against the schema; decoding it with `JSONDecoder` each time took 5% of the
/// server's CPU with five shops taking orders (`northwind-sync-bench company`, under `perf record`).
final class SchemaCache: Sendable {
    private let decoded = Mutex<[String: (json: String, schema: Components.Schemas.ContainerSchema?)]>([:])

    /// The schema `json` holds; nil when it cannot be read, as before there was a cache.
    func schema(container: String, json: String) -> Components.Schemas.ContainerSchema? {
        if let kept = decoded.withLock({ $0[container] }), kept.json == json { return kept.schema }
        let schema = try? JSONDecoder().decode(Components.Schemas.ContainerSchema.self, from: Data(json.utf8))
        decoded.withLock { $0[container] = (json, schema) }
        return schema
    }
}
