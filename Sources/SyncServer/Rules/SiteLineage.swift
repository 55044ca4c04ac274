import SyncAPI
import SyncProtocol

/// What the server remembers of each site's batches in the shared database: the client that sends them and how
/// many it has had acknowledged. A store put back to an older copy of its file, or a second copy of a store, sends
/// a sequence the server has passed, or another client's ID: refused (STORE_DIVERGED), so that neither loses its
/// changes silently nor mixes its ledger with the other's. A restore or `northwind sync resume` takes the site over.
struct SiteLineage: Sendable, Equatable {
    var siteCode: String
    var clientID: String
    var sequence: Int64
    var takeOver: Bool

    /// The request's claim, or nil when it makes none (an older client, or a private database).
    init?(site: String, request: Components.Schemas.ModifyRequest, scope: DatabaseScope) {
        guard case .shared = scope, let sequence = request.sequence else { return nil }
        siteCode = site
        clientID = request.clientID
        self.sequence = sequence
        takeOver = request.takeOver ?? false
    }

    /// Refuses the batch unless it continues what the server remembers (`clientID`, `sequence`; nil when nothing).
    func check(rememberedClient: String?, rememberedSequence: Int64) throws(SyncError) {
        guard !takeOver, let rememberedClient else { return }
        if rememberedClient != clientID {
            throw SyncError(
                .storeDiverged,
                "site \(siteCode) is synced from another copy of its store now, so this copy's changes were not taken. "
                    + "Stop using this copy; if it is the one to keep, run `northwind sync resume` on it (the other copy is then refused)"
            )
        }
        if sequence <= rememberedSequence {
            throw SyncError(
                .storeDiverged,
                "the server has taken \(rememberedSequence) batches from site \(siteCode), and this store knows of \(sequence - 1): "
                    + "it was put back to an older copy of its file, or another copy of it syncs as \(siteCode). Nothing was applied. "
                    + "If this is the only copy in use, run `northwind sync resume`, which fetches what it lacks and sends what it holds; "
                    + "otherwise stop using this copy"
            )
        }
    }
}
