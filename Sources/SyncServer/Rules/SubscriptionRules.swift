import Foundation
import SyncAPI
import SyncProtocol

/// Which subscriptions a zone's changes fire, and why. Pure rules: the event stream reads the changes and asks.
enum SubscriptionRules {
    typealias Subscription = Components.Schemas.Subscription
    typealias Reason = Components.Schemas.FiredSubscription.ReasonsPayloadPayload

    static let maximumPerDatabase = 100
    static let namesPerNotice = 100

    /// Checks a subscription before it is saved.
    static func check(_ subscription: Subscription) throws(SyncError) {
        let id = subscription.subscriptionID
        if id.isEmpty || id.utf8.count > 200 { throw SyncError(.badRequest, "subscriptionID must be 1 to 200 characters") }
        switch subscription.subscriptionType {
        case .database:
            if subscription.zoneID != nil || subscription.recordType != nil || subscription.filterBy != nil {
                throw SyncError(.badRequest, "subscription \(id) watches the whole database: send no zoneID, recordType or filterBy")
            }
        case .zone:
            if subscription.zoneID == nil { throw SyncError(.badRequest, "zone subscription \(id) needs the zoneID it watches") }
            if subscription.recordType != nil || subscription.filterBy != nil {
                throw SyncError(.badRequest, "zone subscription \(id) fires on every record; use a query subscription to filter")
            }
        case .query:
            guard subscription.zoneID != nil, let type = subscription.recordType, !type.isEmpty else {
                throw SyncError(.badRequest, "query subscription \(id) needs a zoneID and a recordType")
            }
            if (subscription.filterBy ?? []).count > 20 { throw SyncError(.limitExceeded, "a query subscription has at most 20 filters") }
        }
        if subscription.firesOn?.isEmpty == true {
            throw SyncError(.badRequest, "subscription \(id) has an empty firesOn; leave it out to fire on create, update and delete")
        }
    }

    /// What a zone's changes fire of `subscription`. `records` nil means they could not all be read (too many, or
    /// purged): it fires on everything it watches, saying more records changed than are named.
    static func fired(_ subscription: Subscription, by records: [SyncRecord]?, complete: Bool) -> Components.Schemas.FiredSubscription? {
        let firesOn = Set((subscription.firesOn ?? [.create, .update, .delete]).map { Reason(rawValue: $0.rawValue)! })
        guard let records else {
            return .init(subscriptionID: subscription.subscriptionID, reasons: firesOn.sorted(by: order), recordNames: [], moreRecords: true)
        }
        var reasons = Set<Reason>()
        var names: [String] = []
        for record in records {
            if subscription.subscriptionType == .query {
                guard record.recordType == subscription.recordType else { continue }
                // A deletion has no fields left to filter on: it fires every query of its type.
                if !record.deleted && !RecordQuery.matches(record, subscription.filterBy ?? []) { continue }
            }
            let reason = reason(record)
            guard firesOn.contains(reason) else { continue }
            reasons.insert(reason)
            names.append(record.recordName)
        }
        guard !reasons.isEmpty || !complete else { return nil }
        if !complete { reasons = firesOn }
        return .init(
            subscriptionID: subscription.subscriptionID,
            reasons: reasons.sorted(by: order),
            recordNames: Array(names.prefix(namesPerNotice)),
            moreRecords: !complete || names.count > namesPerNotice
        )
    }

    static func reason(_ record: SyncRecord) -> Reason {
        if record.deleted { return .delete }
        return record.created == record.modified ? .create : .update
    }

    private static func order(_ a: Reason, _ b: Reason) -> Bool { a.rawValue < b.rawValue }
}
