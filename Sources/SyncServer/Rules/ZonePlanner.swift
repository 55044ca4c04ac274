import SyncAPI
import SyncProtocol

/// The rules of `zones/modify`: a shop creates only its own `site-CODE` zone; head office creates and deletes the
/// shared zones; in a private database the installation does as it likes.
struct ZonePlanner: Sendable {
    let caller: Installation
    let scope: DatabaseScope
    let operations: [Components.Schemas.ZoneOperation]

    /// One operation's outcome: the zone as written, or why not.
    struct Outcome: Sendable {
        var zoneID: ZoneID
        var result: Result<ZoneState, SyncError>
    }

    func plan(_ current: [String: ZoneState]) -> ([ZoneState], [Outcome]) {
        var writes: [ZoneState] = []
        var results: [Outcome] = []
        for operation in operations {
            let name = operation.zoneID.zoneName
            do throws(SyncError) {
                let zone = try apply(operation, current: current[name])
                writes.append(zone)
                results.append(Outcome(zoneID: operation.zoneID, result: .success(zone)))
            } catch {
                results.append(Outcome(zoneID: operation.zoneID, result: .failure(error)))
            }
        }
        return (writes, results)
    }

    private func apply(_ operation: Components.Schemas.ZoneOperation, current: ZoneState?) throws(SyncError) -> ZoneState {
        let name = operation.zoneID.zoneName
        guard name.wholeMatch(of: /[A-Za-z0-9][A-Za-z0-9_.-]{0,63}/) != nil else {
            throw SyncError(.badRequest, "a zone name is 1 to 64 letters, digits, '.', '_' or '-'")
        }
        let siteZone = name.hasPrefix("site-") ? String(name.dropFirst(5)) : nil
        var owner: String? = nil
        var writers = ZoneWriters(rawValue: operation.writers?.rawValue ?? "all") ?? .all
        switch scope {
        case .privateTo(let site):
            owner = site
            writers = .owner
        case .user:
            // Whichever installation the user works at writes their zones.
            writers = .all
        case .shared:
            if let siteZone {
                guard siteZone == caller.siteCode else {
                    throw SyncError(
                        .accessDenied,
                        "zone \(name) belongs to site \(siteZone); \(caller.siteCode) may manage only site-\(caller.siteCode)"
                    )
                }
                owner = siteZone
                writers = .owner
            } else {
                guard caller.role == .hq else {
                    throw SyncError(.accessDenied, "only head office creates and deletes shared zones such as \(name)")
                }
                owner = caller.siteCode
            }
        }
        switch operation.operationType {
        case .create:
            if let current, !current.deleted {
                throw SyncError(.exists, "zone \(name) already exists")
            }
            // A zone created again continues its numbering; tokens from its former life expire.
            let seq = (current?.seq ?? 0) + 1
            return ZoneState(
                zoneID: operation.zoneID,
                owner: owner,
                writers: writers,
                seq: seq,
                purgedThrough: current == nil ? 0 : seq,
                checksum: 0,
                deleted: false
            )
        case .delete:
            guard var zone = current, !zone.deleted else { throw SyncError(.zoneNotFound, "zone \(name) does not exist") }
            // A site's zone holds its ledger (stock movements, which are append-only): deleting it would erase them
            // everywhere. A site stops by being revoked; its zone stays readable.
            if case .shared = scope, siteZone != nil {
                throw SyncError(
                    .accessDenied,
                    "zone \(name) holds a site's ledger and is never deleted; to close the site, the server's administrator retires it "
                        + "(northwind-sync-server shops retire), and its records stay readable"
                )
            }
            zone.seq += 1
            zone.purgedThrough = zone.seq
            zone.checksum = 0
            zone.deleted = true
            return zone
        }
    }
}
