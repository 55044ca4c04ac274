import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NorthwindLoading
import NorthwindStore
import Testing
import Yams

@testable import Northwind
@testable import NorthwindTestSupport
@testable import NorthwindWeb

/// Checks real responses against the served OpenAPI document: the operation exists, the status is documented,
/// and the body matches the schema (types, required fields, no undocumented fields, enums and patterns).
struct OpenAPIDocument {
    let root: [String: Any]

    init(_ data: Data) throws {
        root = try #require(try JSONValue.parse(data) as? [String: Any])
    }

    /// The schema documented for `method path` answering `status`, or a message saying what is undocumented.
    func responseSchema(method: String, path: String, status: Int) -> Result<[String: Any], ContractError> {
        let paths = root["paths"] as? [String: Any] ?? [:]
        let concrete = path.split(separator: "?")[0].split(separator: "/")
        // A literal segment wins over a parameter, as in the router: /products/search is not /products/{id}.
        let candidates = paths.filter { template, _ in
            let parts = template.split(separator: "/")
            return parts.count == concrete.count && zip(parts, concrete).allSatisfy { $0.hasPrefix("{") || $0 == $1 }
        }.sorted { $0.key.filter { $0 == "{" }.count < $1.key.filter { $0 == "{" }.count }
        guard let (_, item) = candidates.first, let operations = item as? [String: Any] else { return .failure(.init("no path matches \(path)")) }
        guard let operation = operations[method.lowercased()] as? [String: Any] else {
            return .failure(.init("\(method) \(path) is not documented"))
        }
        guard let response = (operation["responses"] as? [String: Any])?[String(status)] as? [String: Any] else {
            return .failure(.init("\(method) \(path) does not document status \(status)"))
        }
        let resolved = resolve(response)
        guard let content = resolved["content"] as? [String: Any] else { return .success([:]) }
        // JSON is what these tests read; a report's CSV is documented beside it.
        guard let media = (content["application/json"] ?? content.values.first) as? [String: Any], let schema = media["schema"] as? [String: Any]
        else {
            return .failure(.init("\(method) \(path) \(status) has no schema"))
        }
        return .success(schema)
    }

    func resolve(_ node: [String: Any]) -> [String: Any] {
        guard let reference = node["$ref"] as? String else { return node }
        var current: Any = root
        for part in reference.dropFirst(2).split(separator: "/") {
            current = (current as? [String: Any])?[String(part)] ?? [:]
        }
        return resolve(current as? [String: Any] ?? [:])
    }

    /// Every way `value` breaks `schema`, as "path: problem".
    func violations(_ value: Any, _ schema: [String: Any], at path: String = "$") -> [String] {
        let schema = resolve(schema)
        var problems: [String] = []
        if let types = schema["type"].map({ $0 as? [String] ?? [$0 as? String ?? ""] }) {
            guard types.contains(where: { matches(value, $0) }) else { return ["\(path): \(value) is not \(types)"] }
        }
        if let options = schema["enum"] as? [Any], !options.contains(where: { "\($0)" == "\(value)" }) {
            problems.append("\(path): \(value) is not one of \(options)")
        }
        if let pattern = schema["pattern"] as? String, let text = value as? String,
            text.range(of: pattern, options: .regularExpression) == nil
        {
            problems.append("\(path): '\(text)' does not match \(pattern)")
        }
        if (schema["format"] as? String) == "date", let text = value as? String, LocalDate(text) == nil {
            problems.append("\(path): '\(text)' is not a date")
        }
        if let object = value as? [String: Any] {
            let properties = schema["properties"] as? [String: Any] ?? [:]
            for key in schema["required"] as? [String] ?? [] where object[key] == nil {
                problems.append("\(path): missing required \(key)")
            }
            for (key, item) in object {
                if let property = properties[key] as? [String: Any] {
                    problems += violations(item, property, at: path + "." + key)
                } else if (schema["additionalProperties"] as? Bool) == false {
                    problems.append("\(path): undocumented field \(key)")
                }
            }
        }
        if let array = value as? [Any], let itemSchema = schema["items"] as? [String: Any] {
            for (index, item) in array.enumerated() { problems += violations(item, itemSchema, at: "\(path)[\(index)]") }
        }
        return problems
    }

    func matches(_ value: Any, _ type: String) -> Bool {
        switch (type, value) {
        case ("null", is NSNull), ("boolean", is Bool), ("string", is String), ("array", is [Any]),
            ("object", is [String: Any]):
            return true
        case ("integer", is Int), ("number", is Int), ("number", is Double): return true
        default: return false
        }
    }
}

/// JSON parsed strictly: JSONSerialization would let 1 pass for true, so booleans and numbers are told apart by
/// decoding.
enum JSONValue: Decodable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let v = try? c.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? c.decode(Int.self) {
            self = .int(v)
        } else if let v = try? c.decode(Double.self) {
            self = .double(v)
        } else if let v = try? c.decode(String.self) {
            self = .string(v)
        } else if let v = try? c.decode([JSONValue].self) {
            self = .array(v)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    /// Plain Swift values: NSNull, Bool, Int, Double, String, arrays and dictionaries.
    var plain: Any {
        switch self {
        case .null: NSNull()
        case let .bool(v): v
        case let .int(v): v
        case let .double(v): v
        case let .string(v): v
        case let .array(v): v.map(\.plain)
        case let .object(v): v.mapValues(\.plain)
        }
    }

    static func parse(_ data: Data) throws -> Any { try JSONDecoder().decode(JSONValue.self, from: data).plain }
}

struct ContractError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

@Suite("API contract") struct WebAPIContractTests {
    @Test func theServedDocumentIsOpenAPIYAML() async throws {
        // Given the contract's source, parsed by Yams on its own
        var root = URL(fileURLWithPath: #filePath)
        while !FileManager.default.fileExists(atPath: root.appendingPathComponent("Package.swift").path) { root.deleteLastPathComponent() }
        let yaml = try String(contentsOf: root.appendingPathComponent("Sources/NorthwindWeb/openapi.yaml"), encoding: .utf8)
        let source = try #require(try Yams.load(yaml: yaml) as? NSDictionary)
        // Both sides in one canonical JSON form: sorted keys, the same number spelling.
        let expected = try JSONSerialization.data(withJSONObject: source, options: [.sortedKeys])
        let fixture = try await WebFixture.make()
        try await fixture.test { client in
            // When a client reads /api/openapi.json
            let response = try await client.execute(uri: "/api/openapi.json", method: .get)
            // Then it is that document, as JSON
            #expect(response.headers[.contentType] == "application/json")
            let served = try #require(try JSONSerialization.jsonObject(with: Data(response.body.readableBytesView)) as? NSDictionary)
            #expect(served.count > 3)
            #expect(try JSONSerialization.data(withJSONObject: served, options: [.sortedKeys]) == expected)
        }
    }

    @Test func realResponsesMatchTheServedOpenAPIDocument() async throws {
        let fixture = try await WebFixture.make()
        let w = fixture.world
        let order = try await fixture.store.backoffice.createOrder(
            OrderDraft(customerCode: "VINET", employeeID: w.nancy.id, lines: [OrderLineDraft(productID: w.chai.key, quantity: 1)])
        )
        try await fixture.test { client in
            let spec = try OpenAPIDocument(Data(try await client.execute(uri: "/api/openapi.json", method: .get).body.readableBytesView))
            #expect(spec.root["openapi"] as? String == "3.1.0")
            let token = fixture.managerToken
            let requests: [(HTTPRequest.Method, String, String?, String)] = [
                (.get, "/api/v1/me", nil, token), (.get, "/api/v1/summary", nil, token),
                (.get, "/api/v1/products?limit=2", nil, token), (.get, "/api/v1/products?lowStock=true", nil, token),
                (.get, "/api/v1/products/search?q=ch", nil, token), (.get, "/api/v1/products/\(w.chai.key)", nil, token),
                (.get, "/api/v1/products/\(w.chai.key)/movements", nil, token),
                (.post, "/api/v1/products", #"{"name": "Tofu", "unitPrice": "23.25", "unitsInStock": 4}"#, token),
                (.patch, "/api/v1/products/\(w.cote.key)", #"{"reorderLevel": 3, "quantityPerUnit": null, "version": 1}"#, token),
                (.delete, "/api/v1/products/\(w.oldTea.key)", nil, token),
                (.get, "/api/v1/orders?status=new", nil, token), (.get, "/api/v1/orders/\(order.order.number)", nil, token),
                (.post, "/api/v1/orders", #"{"customerCode": "ALFKI", "lines": [{"productID": \#(w.mustard.key), "quantity": 9}]}"#, token),
                (.post, "/api/v1/orders/\(order.order.number)/execute", nil, token),
                (.post, "/api/v1/orders/\(order.order.number)/cancel", nil, token),
                (.get, "/api/v1/customers", nil, token), (.get, "/api/v1/customers?q=vin", nil, token),
                (.get, "/api/v1/customers/ALFKI", nil, token),
                (.post, "/api/v1/customers", #"{"code": "TOMSP", "companyName": "Toms Spezialitäten"}"#, token),
                (.get, "/api/v1/categories", nil, token), (.get, "/api/v1/categories/\(w.condiments.id ?? 0)", nil, token),
                (.post, "/api/v1/categories", #"{"name": "Produce"}"#, token),
                (.patch, "/api/v1/categories/\(w.condiments.id ?? 0)", #"{"description": "Sauces", "version": 1}"#, token),
                (.get, "/api/v1/suppliers", nil, token), (.get, "/api/v1/suppliers/\(w.supplier.id ?? 0)", nil, token),
                (.get, "/api/v1/employees", nil, token), (.get, "/api/v1/employees/\(w.nancy.id ?? 0)", nil, token),
                (.get, "/api/v1/shippers", nil, token),
                (.get, "/api/v1/reports", nil, token), (.get, "/api/v1/reports/invoices", nil, token),
                (.get, "/api/v1/reports/cust-orders-orders?customer=ALFKI", nil, token),
                (.get, "/api/v1/reports/sales-by-year?from=2000-01-01&to=1999-01-01", nil, token),
                (.get, "/api/v1/reports/no-such-report", nil, token), (.get, "/api/v1/reports", nil, fixture.repToken),
                (.get, "/api/v1/products/999", nil, token), (.get, "/api/v1/me", nil, "wrong"),
                (.patch, "/api/v1/products/\(w.chai.key)", #"{"version": 1}"#, fixture.repToken),
                (.post, "/api/v1/orders", #"{"customerCode": "VINET", "lines": []}"#, token),
                (.delete, "/api/v1/categories/\(w.beverages.id ?? 0)", nil, token),
            ]
            var statuses: Set<Int> = []
            for (method, uri, body, token) in requests {
                let response = try await client.execute(uri: uri, method: method, headers: bearer(token), body: body.map { ByteBuffer(string: $0) })
                let status = Int(response.status.code)
                statuses.insert(status)
                let schema = try spec.responseSchema(method: method.rawValue, path: uri, status: status).get()
                guard response.status != .noContent else { continue }
                let value = try JSONValue.parse(Data(response.body.readableBytesView))
                #expect(spec.violations(value, schema) == [], "\(method) \(uri) → \(status)")
            }
            #expect(statuses == [200, 201, 204, 401, 403, 404, 409, 422])
        }
    }

    @Test func theValidatorCatchesADriftedResponse() throws {
        let spec = try OpenAPIDocument(StaticFiles.openAPI)
        let schema = try spec.responseSchema(method: "GET", path: "/api/v1/summary", status: 200).get()
        #expect(spec.violations(["newOrders": 1, "lowStockProducts": 2], schema) == [])
        #expect(
            spec.violations(["newOrders": "1", "lowStockProducts": 2, "extra": true], schema).sorted()
                == ["$.newOrders: 1 is not [\"integer\"]", "$: undocumented field extra"]
        )
        #expect(spec.violations(["newOrders": 1], schema) == ["$: missing required lowStockProducts"])
        let product = try spec.responseSchema(method: "GET", path: "/api/v1/products/1", status: 200).get()
        #expect(spec.violations(["unitPrice": 18.0], spec.resolve(product)).contains("$.unitPrice: 18.0 is not [\"string\"]"))
        #expect(throws: ContractError.self) { try spec.responseSchema(method: "PUT", path: "/api/v1/products/1", status: 200).get() }
    }
}
