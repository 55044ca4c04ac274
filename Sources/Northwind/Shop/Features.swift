import Foundation
import GRDB
import NorthwindStore

// The domain's features: each owns its queries and its writes, and reaches the store only through the one
// `Backoffice` it came from, so every write is stamped the same way (`Backoffice.write`). A feature is made on
// demand from the current `Backoffice` value, never stored, so it sees a later `refreshBeforeEdit`.

/// What every feature shares: the store, the rules, and the transaction paths of the `Backoffice` it came from.
protocol BackofficeFeature: Sendable {
    var backoffice: Backoffice { get }
}

extension BackofficeFeature {
    var store: Store { backoffice.store }
    var rules: ShopRules { backoffice.rules }
    var refreshBeforeEdit: (@Sendable (_ zone: String) async -> Void)? { backoffice.refreshBeforeEdit }

    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(NorthwindError) -> T {
        try await backoffice.write(body)
    }

    func syncWrite<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(NorthwindError) -> T {
        try await backoffice.syncWrite(body)
    }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(NorthwindError) -> T {
        try await backoffice.read(body)
    }

    func measuredRead<T: Sendable>(
        _ shape: String,
        _ body: @escaping @Sendable (Database) throws -> T
    ) async throws(NorthwindError) -> T {
        try await backoffice.measuredRead(shape, body)
    }

    func quickRead<T>(_ body: (Database) throws -> T) throws(NorthwindError) -> T {
        try backoffice.quickRead(body)
    }
}

extension Backoffice: BackofficeFeature {
    var backoffice: Backoffice { self }
}

/// Products and categories: list, search, edit, and the categories' pictures.
public struct Catalogue: BackofficeFeature { let backoffice: Backoffice }

/// The records kept by form (categories, suppliers, customers, employees, shippers): list, find, create, update,
/// delete, and the choices a form offers.
public struct Records: BackofficeFeature { let backoffice: Backoffice }

/// Customers and employees as people are looked up: search, a customer by code, the employees and their photos.
public struct People: BackofficeFeature { let backoffice: Backoffice }

/// Sign-in, sessions, API tokens and passwords.
public struct Accounts: BackofficeFeature { let backoffice: Backoffice }

/// Orders: take, list, edit, check stock, execute, cancel.
public struct Orders: BackofficeFeature { let backoffice: Backoffice }

/// Quotes: drafts, the edit lease, versions, and turning a quote into an order.
public struct Quotes: BackofficeFeature { let backoffice: Backoffice }

/// Stock at this location: receipts, adjustments, movements, and transfers between locations.
public struct Stock: BackofficeFeature { let backoffice: Backoffice }

/// Purchase orders to suppliers, receipts against them, the reorder proposal and what stock cost.
public struct Purchasing: BackofficeFeature { let backoffice: Backoffice }

/// Invoices and credit notes (issued with shipments and returns), returns, and the tax rates they apply.
public struct Invoicing: BackofficeFeature { let backoffice: Backoffice }

/// Document packages (`.nwdoc`): export a quote, an order or the catalogue, and import one.
public struct Documents: BackofficeFeature { let backoffice: Backoffice }

/// The classic reports, the dashboard, the shop's summary and the server's figures.
public struct Reports: BackofficeFeature { let backoffice: Backoffice }

/// Settings as this store keeps them: the installation's and each user's, with their checks.
public struct ShopSettings: BackofficeFeature { let backoffice: Backoffice }

/// Backups of this store, and the schedule that takes them.
public struct Backups: BackofficeFeature { let backoffice: Backoffice }

/// The first run: the page that names the site and its first manager, and who may finish it.
public struct Setup: BackofficeFeature { let backoffice: Backoffice }

/// Sync as people see it: membership, status, the badge, conflicts and what is still to send.
public struct ShopSync: BackofficeFeature { let backoffice: Backoffice }

/// What only the sync engine does to a store: join, the outbox, acknowledgements, applying what was downloaded.
@_spi(SyncEngine) public struct SyncEngineSide: BackofficeFeature { let backoffice: Backoffice }

/// What only the sync engine does with users' settings: what is pending, acknowledgements, applying downloads.
@_spi(SyncEngine) public struct UserSettingsSyncSide: BackofficeFeature { let backoffice: Backoffice }

extension Backoffice {
    public var catalogue: Catalogue { Catalogue(backoffice: self) }
    public var records: Records { Records(backoffice: self) }
    public var people: People { People(backoffice: self) }
    public var accounts: Accounts { Accounts(backoffice: self) }
    public var orders: Orders { Orders(backoffice: self) }
    public var quotes: Quotes { Quotes(backoffice: self) }
    public var stock: Stock { Stock(backoffice: self) }
    public var purchasing: Purchasing { Purchasing(backoffice: self) }
    public var documents: Documents { Documents(backoffice: self) }
    public var invoicing: Invoicing { Invoicing(backoffice: self) }
    public var reports: Reports { Reports(backoffice: self) }
    public var settings: ShopSettings { ShopSettings(backoffice: self) }
    public var backups: Backups { Backups(backoffice: self) }
    public var setup: Setup { Setup(backoffice: self) }
    public var sync: ShopSync { ShopSync(backoffice: self) }
    @_spi(SyncEngine) public var syncEngine: SyncEngineSide { SyncEngineSide(backoffice: self) }
    @_spi(SyncEngine) public var userSettingsSync: UserSettingsSyncSide { UserSettingsSyncSide(backoffice: self) }
}
