import GRDB

/// Storage failures a client should retry rather than report.
enum StorageFailure {
    static func isBusy(_ error: any Error) -> Bool {
        if let error = error as? DatabaseError { return error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED }
        return false
    }
}
