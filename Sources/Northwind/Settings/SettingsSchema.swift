import Foundation

/// The JSON Schema (draft 2020-12) of the settings file, made from the catalogue: one object per group, one
/// property per setting, with its type, default, rules and texts.
public enum SettingsSchema {
    /// The schema as pretty, sorted JSON.
    public static func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // Encoding a tree of strings, numbers and booleans cannot fail.
        return String(decoding: (try? encoder.encode(schema)) ?? Data(), as: UTF8.self)
    }

    static var schema: Node {
        var groups: [String: Node] = [:]
        for (group, title) in Setting.groups {
            let settings = Setting.all.filter { $0.group == group }
            guard !settings.isEmpty else { continue }
            var properties: [String: Node] = [:]
            for setting in settings { properties[String(setting.key.dropFirst(group.count + 1))] = property(setting) }
            groups[group] = .object([
                "type": .string("object"), "title": .string(title), "properties": .object(properties),
                "additionalProperties": .bool(false),
            ])
        }
        return .object([
            "$schema": .string("https://json-schema.org/draft/2020-12/schema"),
            "$id": .string("https://northwind.example/settings.schema.json"),
            "title": .string("Northwind settings file"),
            "description": .string(
                "The operators' layer of Northwind's settings: above the values stored in the store, below the environment and the command line."
            ),
            "type": .string("object"),
            "properties": .object(groups),
            "additionalProperties": .bool(false),
        ])
    }

    private static func property(_ setting: Setting) -> Node {
        var node: [String: Node] = [
            "title": .string(setting.title),
            "description": .string(
                setting.footer + " Scope: \(setting.scope.rawValue); takes effect: \(setting.apply == .live ? "at once" : "at restart")."
            ),
        ]
        switch setting.kind {
        case .bool:
            node["type"] = .string("boolean")
            node["default"] = .bool(setting.defaultValue == "true")
        case .int:
            node["type"] = .string("integer")
            node["default"] = .number(Decimal(string: setting.defaultValue) ?? 0)
        case .decimal:
            node["type"] = .string("number")
            node["multipleOf"] = .number(Decimal(string: "0.01")!)
            node["default"] = .number(Decimal(string: setting.defaultValue) ?? 0)
        case .string, .secret:
            node["type"] = .string("string")
            node["default"] = .string(setting.defaultValue)
            if setting.kind == .secret { node["writeOnly"] = .bool(true) }
        case .choice(let choices):
            node["type"] = .string("string")
            node["enum"] = .array(choices.map { .string($0.value) })
            node["default"] = .string(setting.defaultValue)
        }
        if let minimum = setting.rules.minimum { node["minimum"] = .number(minimum) }
        if let maximum = setting.rules.maximum { node["maximum"] = .number(maximum) }
        if let pattern = setting.rules.pattern { node["pattern"] = .string("^(?:\(pattern))$") }
        if let maximumLength = setting.rules.maximumLength { node["maxLength"] = .number(Decimal(maximumLength)) }
        return .object(node)
    }

    /// A JSON value.
    enum Node: Encodable {
        case string(String)
        case number(Decimal)
        case bool(Bool)
        case array([Node])
        case object([String: Node])

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .number(let value): try container.encode(value)
            case .bool(let value): try container.encode(value)
            case .array(let value): try container.encode(value)
            case .object(let value): try container.encode(value)
            }
        }
    }
}
