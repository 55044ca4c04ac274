import Foundation

/// The store's sync credential, kept in a file beside the store that only its owner can read, and never in the
/// store: a backup or a copy of the store file carries no credential, so whoever holds one cannot sync as the site.
extension StoreFiles {
    public var syncCredential: URL { URL(fileURLWithPath: path + ".sync-credential") }
    var syncCredentialLock: URL { URL(fileURLWithPath: path + ".sync-credential.lock") }

    /// The credential, or nil when the file is missing (a store restored or copied onto another machine).
    public func readSyncCredential() -> String? {
        guard let data = FileManager.default.contents(atPath: syncCredential.path) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// Replaces the credential whole: written under a temporary name created with mode 0600 (never readable by
    /// others, not even for a moment), flushed, then renamed over the old one.
    public func writeSyncCredential(_ credential: String) throws(NorthwindError) {
        try Self.replace(syncCredential, with: credential + "\n", what: "the sync credential")
    }

    /// Writes `text` under a temporary name created with mode 0600, flushes it, and renames it over `file`.
    private static func replace(_ file: URL, with text: String, what: String) throws(NorthwindError) {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString)")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .storeUnavailable("Cannot write \(what) beside the store (\(temporary.path)): \(String(cString: strerror(errno)))")
        }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let flushed = fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, flushed, rename(temporary.path, file.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw .storeUnavailable("Cannot write \(what) to \(file.path): \(reason)")
        }
        try? Self.syncFolder(of: file)
    }

    /// How many batches the sync server has taken from each client this store file has been, the current one last
    /// ("CLIENT-ID COUNT" lines). It lives beside the store, so a store file put back to an older copy of itself
    /// (by hand, or by a tool that restores files) is seen to know of fewer batches than the server took, before
    /// it executes an order that shipped since.
    public var syncWatermark: URL { URL(fileURLWithPath: path + ".sync-batches") }

    public func readSyncWatermark() -> [(clientID: String, batches: Int64)] {
        guard let data = FileManager.default.contents(atPath: syncWatermark.path) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let batches = Int64(parts[1]) else { return nil }
            return (String(parts[0]), batches)
        }
    }

    /// Notes that the server has taken `batches` batches from `clientID`, this store's client now. The clients it
    /// was before stay listed (the last 20), so a copy from before a restore is known too.
    public func writeSyncWatermark(clientID: String, batches: Int64) throws(NorthwindError) {
        var entries = readSyncWatermark().filter { $0.clientID != clientID }.suffix(19).map { ($0.clientID, $0.batches) }
        entries.append((clientID, batches))
        try Self.replace(syncWatermark, with: entries.map { "\($0.0) \($0.1)\n" }.joined(), what: "the sync watermark")
    }

    /// Held while the credential is rotated, so that two processes of one store never rotate at once (the second
    /// would leave the file naming a credential the server replaced). Nil while another process holds it.
    public func rotatingSyncCredential() -> StoreLock? { StoreLock.exclusive(syncCredentialLock) }
}
