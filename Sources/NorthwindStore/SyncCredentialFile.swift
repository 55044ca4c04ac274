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
        let temporary = syncCredential.deletingLastPathComponent()
            .appendingPathComponent(".\(syncCredential.lastPathComponent).\(UUID().uuidString)")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .storeUnavailable("Cannot write the sync credential beside the store (\(temporary.path)): \(String(cString: strerror(errno)))")
        }
        let bytes = Array((credential + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let flushed = fsync(descriptor) == 0
        close(descriptor)
        guard written == bytes.count, flushed, rename(temporary.path, syncCredential.path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary.path)
            throw .storeUnavailable("Cannot write the sync credential to \(syncCredential.path): \(reason)")
        }
        try? Self.syncFolder(of: syncCredential)
    }

    /// Held while the credential is rotated, so that two processes of one store never rotate at once (the second
    /// would leave the file naming a credential the server replaced). Nil while another process holds it.
    public func rotatingSyncCredential() -> StoreLock? { StoreLock.exclusive(syncCredentialLock) }
}
