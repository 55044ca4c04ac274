import SyncAPI
import SyncProtocol

/// The container's schema as `records/modify` checks it, in the shared database: each record's type must be declared,
/// its declared fields must have their types, a new record its required fields, a reference the type it must name,
/// and a field bound to the zone's owner the owner's code. Fields a type does not declare pass (a newer installation's
/// new column); the reserved `~clocks` is the protocol's. Refusals are SCHEMA_VIOLATION, per operation.
struct SchemaRules: Sendable {
    private let types: [String: Components.Schemas.RecordTypeSchema]

    /// Nil when the container has no schema (or an empty one): then only the protocol's own rules apply.
    init?(_ schema: Components.Schemas.ContainerSchema?) {
        guard let schema, !schema.recordTypes.isEmpty else { return nil }
        types = Dictionary(schema.recordTypes.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
    }

    func check(
        _ operation: Components.Schemas.RecordOperation,
        zone: ZoneState,
        records: [RecordKey: StoredRecord]
    ) throws(SyncError) {
        let record = operation.record
        guard let type = types[record.recordType] else {
            throw violation(record, "its type \(record.recordType) is not in the container's schema")
        }
        let adding = operation.operationType == .create || operation.operationType == .append
        if type.appendOnly == true && operation.operationType != .append {
            throw violation(record, "\(record.recordType) records are only appended (a ledger): send them with append")
        }
        guard !record.deleted, operation.operationType != .delete, operation.operationType != .forceDelete else { return }
        if type.clocked == true {
            guard record.fields[FieldClocks.fieldName] != nil, let clocks = FieldClocks.milliseconds(in: record.fields), !clocks.isEmpty else {
                throw violation(record, "it lacks readable \(FieldClocks.fieldName), which every save of a \(record.recordType) record carries")
            }
        }
        for field in type.fields {
            let value = record.fields[field.name]
            if value == nil || value == .null {
                if field.required == true && (adding || value == .null) {
                    throw violation(record, "it lacks \(field.name), which every \(record.recordType) record must have")
                }
                if field.ownerBound == true && adding {
                    throw violation(record, "it lacks \(field.name), which must name the zone's owner \(zone.owner ?? "(none)")")
                }
                continue
            }
            guard let value else { continue }
            if let expected = field._type, !Self.matches(value, expected) {
                throw violation(record, "its field \(field.name) is not of type \(expected.rawValue)")
            }
            if field.ownerBound == true, value != .string(zone.owner ?? "") {
                throw violation(
                    record,
                    "its field \(field.name) must name the zone's owner \(zone.owner ?? "(none)"): no installation writes it for another"
                )
            }
            if let referenceType = field.referenceType, case .reference(let reference) = value,
                let named = records[RecordKey(zoneName: reference.zoneName ?? record.zoneID.zoneName, recordName: reference.recordName)],
                !named.record.deleted, named.record.recordType != referenceType
            {
                throw violation(record, "its field \(field.name) must name a \(referenceType), not a \(named.record.recordType)")
            }
        }
    }

    private static func matches(_ value: FieldValue, _ type: Components.Schemas.FieldSchema._TypePayload) -> Bool {
        switch (value, type) {
        case (.string, .string), (.int64, .int64), (.double, .double), (.int64, .double), (.decimal, .decimal),
            (.timestamp, .timestamp), (.bytes, .bytes), (.reference, .reference), (.asset, .asset), (.list, .list):
            true
        default: false
        }
    }

    private func violation(_ record: SyncRecord, _ why: String) -> SyncError {
        SyncError(.schemaViolation, "record \(record.recordName) breaks the container's schema: \(why)")
    }
}
