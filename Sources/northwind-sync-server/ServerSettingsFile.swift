import ArgumentParser
import Foundation

/// The sync server's settings file (`--settings-file`, else `$NORTHWIND_SYNC_SETTINGS`): a JSON object whose keys
/// are `serve`'s long options in camel case, such as `{"host": "0.0.0.0", "port": 8444, "rate": 100}`. An option
/// on the command line wins over the file; the file wins over the built-in default. `systemctl reload` (SIGHUP)
/// reads it again: the rate limit changes at once, and a change to anything else is logged as needing a restart.
struct ServerSettingsFile: Equatable, Decodable {
    var host: String?
    var port: Int?
    var rate: Double?
    var burst: Double?
    var tombstoneDays: Int?
    var assetQuotaMb: Int?
    var pingSeconds: Int?
    var credentialDays: Int?
    var database: String?

    static let keys: Set<String> = [
        "host", "port", "rate", "burst", "tombstoneDays", "assetQuotaMb", "pingSeconds", "credentialDays", "database",
    ]

    /// Where the Debian package puts it.
    static let installed = "/etc/northwind/sync-server.json"

    /// The file `explicit` names, else the environment's; nil when neither names one.
    static func path(_ explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let explicit, !explicit.isEmpty { return explicit }
        if let path = environment["NORTHWIND_SYNC_SETTINGS"], !path.isEmpty { return path }
        return nil
    }

    /// Reads the file. A missing file is empty settings; a malformed one, an unknown key or a value of the wrong
    /// type is an error that says which.
    static func load(_ path: String?) throws -> ServerSettingsFile {
        guard let path, FileManager.default.fileExists(atPath: path) else { return ServerSettingsFile() }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ValidationError("Cannot read the settings file \(path): \(error.localizedDescription).")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw ValidationError("The settings file \(path) is not a JSON object, such as {\"host\": \"127.0.0.1\", \"port\": 8444}.")
        }
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            throw ValidationError("The settings file \(path) names no setting '\(unknown)'; it takes \(keys.sorted().joined(separator: ", ")).")
        }
        do {
            return try JSONDecoder().decode(ServerSettingsFile.self, from: data)
        } catch let DecodingError.typeMismatch(type, context) {
            let key = context.codingPath.last?.stringValue ?? "?"
            let kind = type == String.self ? "text" : type == Int.self ? "a whole number" : "a number"
            throw ValidationError("In the settings file \(path), '\(key)' must be \(kind).")
        } catch {
            throw ValidationError("The settings file \(path) cannot be read: \(error).")
        }
    }

    /// Limits that would stop every installation are refused: a rate of at least one request a minute, a burst of
    /// at least one request.
    func checkLimits() throws {
        if let rate, !(rate >= 1.0 / 60) { throw ValidationError("The rate must be at least 0.0167 requests a second (one a minute), not \(rate).") }
        if let burst, !(burst >= 1) { throw ValidationError("The burst must be at least 1 request, not \(burst).") }
        if let port, !(0...65535).contains(port) { throw ValidationError("The port must be from 0 to 65535, not \(port).") }
    }

    /// The keys whose values differ between two readings, other than the rate limit (which reloads live).
    func needingRestart(comparedWith other: ServerSettingsFile) -> [String] {
        var changed: [String] = []
        if host != other.host { changed.append("host") }
        if port != other.port { changed.append("port") }
        if tombstoneDays != other.tombstoneDays { changed.append("tombstoneDays") }
        if assetQuotaMb != other.assetQuotaMb { changed.append("assetQuotaMb") }
        if pingSeconds != other.pingSeconds { changed.append("pingSeconds") }
        if credentialDays != other.credentialDays { changed.append("credentialDays") }
        if database != other.database { changed.append("database") }
        return changed
    }
}
