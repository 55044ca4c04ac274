import GRDB
import PostgresNIO

/// Storage failures a client should retry rather than report.
enum StorageFailure {
    static func isBusy(_ error: any Error) -> Bool {
        if let error = error as? DatabaseError { return error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED }
        if let error = error as? PSQLError {
            // No server answer: the connection failed or PostgreSQL is down, which a retry may outlast.
            guard let state = error.serverInfo?[.sqlState] else { return true }
            // Serialization failure, deadlock, lock timeout, and a replayed batch racing its first copy.
            return ["40001", "40P01", "55P03", "23505", "57P01", "53300"].contains(state)
        }
        return false
    }
}
