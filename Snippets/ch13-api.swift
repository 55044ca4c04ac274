// Chapter 13: the JSON API as a client sees it: a bearer token, JSON answers, and problems that say what is wrong.
// Usage: swift run ch13-api URL TOKEN, against a running `northwind serve`.
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

let arguments = CommandLine.arguments
guard arguments.count == 3, let base = URL(string: arguments[1]) else {
    print("Usage: ch13-api URL TOKEN (a token from `northwind employees token ID`)")
    exit(64)
}

// guide: begin api-client
func get(_ path: String, token: String?) async throws -> (status: Int, json: [String: Any]) {
    var request = URLRequest(url: URL(string: path, relativeTo: base)!)
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    let (data, response) = try await URLSession.shared.data(for: request)
    let json = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
}
let token = arguments[2]
let found = try await get("/api/v1/products/search?q=cote", token: token)
let items = found.json["items"] as? [[String: Any]] ?? []
print("\(found.status): \(items.map { "\($0["name"] ?? "?") at \($0["unitPrice"] ?? "?")" }.joined(separator: ", "))")
// A mistake is a problem document (RFC 9457): a status, a title, and a detail a person can act on.
for (path, token) in [("/api/v1/products/999", token), ("/api/v1/products/search?q=cote&limit=5000", token), ("/api/v1/me", nil)] {
    let answer = try await get(path, token: token)
    print("\(answer.status) \(answer.json["title"] ?? ""): \(answer.json["detail"] ?? "")")
}
// guide: end api-client
precondition(found.status == 200 && !items.isEmpty, "search answers")
