import Foundation

extension Setting {
    /// Every setting, in the order the page and the docs show them.
    public static let all: [Setting] = [
        Setting(
            "server.host",
            .string,
            default: "127.0.0.1",
            title: "Address to listen on",
            footer: "127.0.0.1 serves this machine only; 0.0.0.0 serves the shop's network.",
            rules: Rules(maximumLength: 255, host: true),
            scope: .system,
            apply: .restart
        ),
        Setting(
            "server.port",
            .int,
            default: "8080",
            title: "Port",
            footer: "0 picks a free port and prints it.",
            rules: Rules(minimum: 0, maximum: 65535),
            scope: .system,
            apply: .restart
        ),
        Setting(
            "server.secureCookies",
            .bool,
            default: "true",
            title: "Session cookie over HTTPS only",
            footer: "Turn off on a shop's network without TLS, or nobody can stay signed in there. Loopback needs no change.",
            scope: .system,
            apply: .restart
        ),
        Setting(
            "setup.firstRun",
            .bool,
            default: "false",
            title: "First-run page on a new store",
            footer:
                "On: a new store starts empty, and the first visitor is led to a page that makes the first manager, names the site and says whether this is head office, a shop or a demo. Off: a new store gets the demo data and prints demo sign-ins. The appliance turns it on.",
            control: .readOnly,
            scope: .system,
            apply: .restart,
            outsideStore: true
        ),
        Setting(
            "store.path",
            .string,
            default: "",
            title: "Store file",
            footer:
                "Empty: northwind/northwind.sqlite in the data folder ($XDG_DATA_HOME, else ~/.local/share). Set on the command line (--store), in the environment or in the settings file: the store cannot hold its own path.",
            control: .readOnly,
            scope: .system,
            apply: .restart,
            outsideStore: true
        ),
        Setting(
            "log.level",
            .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"].map { Choice($0, $0) }),
            default: "info",
            title: "Log level",
            footer: "The least severe message the server logs.",
            scope: .system,
            apply: .live
        ),
        Setting(
            "log.sqlDebug",
            .bool,
            default: "false",
            title: "Log every SQL statement",
            footer: "For finding a slow query; the log grows fast.",
            scope: .system,
            apply: .restart
        ),
        Setting(
            "sync.server",
            .string,
            default: "",
            title: "Sync server address",
            footer:
                "Empty: the address given to `northwind sync join`. Set it when the sync server moves, or with an enrolment token for a shop that joins by itself. Set on the command line, in the environment or in the settings file: the installation's sync credential goes to this address, so the settings page cannot change it.",
            control: .readOnly,
            rules: Rules(pattern: "(https?://[^ ]+)?", patternMeaning: "an http:// or https:// address", maximumLength: 2048),
            scope: .shop,
            apply: .restart,
            outsideStore: true
        ),
        Setting(
            "sync.enrolmentToken",
            .secret,
            default: "",
            title: "Enrolment token",
            footer:
                "A one-time token from `northwind-sync-server enroll`. With the sync server's address, a store that has not joined joins when the server starts: for installing a shop unattended.",
            rules: Rules(maximumLength: 200),
            scope: .system,
            apply: .restart
        ),
        Setting(
            "sync.interval",
            .int,
            default: "60",
            title: "Seconds between syncs",
            footer: "When nothing prompts one: a change here or a notice from the server syncs at once.",
            rules: Rules(minimum: 1, maximum: 86400),
            scope: .shop,
            apply: .live
        ),
        Setting(
            "backup.directory",
            .string,
            default: "",
            title: "Backup folder",
            footer:
                "Empty: northwind/backups in the data folder ($XDG_DATA_HOME, else ~/.local/share). Put it on another disk to survive losing this one. Set on the command line, in the environment or in the settings file: a backup must be found without the store.",
            control: .readOnly,
            rules: Rules(maximumLength: 4096),
            scope: .system,
            apply: .live,
            outsideStore: true
        ),
        Setting(
            "backup.every",
            .choice([Choice("off", "Never"), Choice("hourly", "Every hour"), Choice("daily", "Every day")]),
            default: "hourly",
            title: "Back up automatically",
            footer: "While `northwind serve` runs. Each backup is checked as it is written.",
            scope: .system,
            apply: .live
        ),
        Setting(
            "backup.keepHourly",
            .int,
            default: "24",
            title: "Hourly backups to keep",
            footer: "The newest backup of each of this many recent hours.",
            rules: Rules(minimum: 0, maximum: 10000),
            scope: .system,
            apply: .live
        ),
        Setting(
            "backup.keepDaily",
            .int,
            default: "14",
            title: "Daily backups to keep",
            footer: "The newest backup of each of this many recent days.",
            rules: Rules(minimum: 0, maximum: 10000),
            scope: .system,
            apply: .live
        ),
        Setting(
            "backup.keepWeekly",
            .int,
            default: "8",
            title: "Weekly backups to keep",
            footer: "The newest backup of each of this many recent weeks (from Monday).",
            rules: Rules(minimum: 0, maximum: 10000),
            scope: .system,
            apply: .live
        ),
        Setting(
            "backup.keepMonthly",
            .int,
            default: "12",
            title: "Monthly backups to keep",
            footer:
                "The newest backup of each of this many recent months. Backups made by hand and before a restore are never removed, nor is the newest good one.",
            rules: Rules(minimum: 0, maximum: 10000),
            scope: .system,
            apply: .live
        ),
        Setting(
            "stock.lowStockMargin",
            .int,
            default: "0",
            title: "Low-stock margin",
            footer: "A product is low when its stock plus what is on order is at or below its reorder level plus this many units.",
            rules: Rules(minimum: 0, maximum: 1_000_000),
            scope: .shop,
            apply: .live
        ),
        Setting(
            "purchasing.targetCover",
            .decimal,
            default: "2.00",
            title: "Reorder target",
            footer: "A reorder proposal brings a product's stock plus what is on order up to this multiple of its reorder level.",
            rules: Rules(minimum: 1, maximum: 100),
            scope: .shop,
            apply: .live
        ),
        Setting(
            "orders.defaultShipper",
            .int,
            default: "0",
            title: "Default shipper",
            footer: "The shipper a new order starts with (its number); 0 for none.",
            rules: Rules(minimum: 0, maximum: 1_000_000_000),
            scope: .shop,
            apply: .live
        ),
        Setting(
            "orders.defaultFreight",
            .decimal,
            default: "0.00",
            title: "Default freight",
            footer: "The freight a new order starts with.",
            rules: Rules(minimum: 0, maximum: Decimal(string: "9999999.99")!),
            scope: .shop,
            apply: .live
        ),
        Setting(
            "invoices.sellerName",
            .string,
            default: "Northwind Traders",
            title: "Seller's name on invoices",
            footer: "As an invoice issued today prints it; an invoice already issued keeps what it said.",
            rules: Rules(maximumLength: 100),
            scope: .shop,
            apply: .live
        ),
        Setting(
            "invoices.sellerAddress",
            .string,
            default: "",
            title: "Seller's address on invoices",
            footer: "One line, for example: ul. Floriańska 1, 31-019 Kraków, Poland.",
            rules: Rules(maximumLength: 300),
            scope: .shop,
            apply: .live
        ),
        Setting(
            "invoices.sellerTaxID",
            .string,
            default: "",
            title: "Seller's tax number",
            footer: "Printed on invoices and credit notes; empty prints none.",
            rules: Rules(maximumLength: 40),
            scope: .shop,
            apply: .live
        ),
        Setting(
            "invoices.numberFormat",
            .string,
            default: "{site}/{year}/{counter:6}",
            title: "Invoice number format",
            footer:
                "{site} is this site's code, {year} the year of issue, {counter} the invoice's place in the site's series for the year ({counter:6} pads it to six digits). Each site and year numbers 1, 2, … without a gap.",
            rules: Rules(maximumLength: 60, documentNumberFormat: true),
            scope: .shop,
            apply: .live
        ),
        Setting(
            "invoices.creditNoteNumberFormat",
            .string,
            default: "{site}/CN/{year}/{counter:6}",
            title: "Credit note number format",
            footer: "As for invoices: credit notes are a series of their own.",
            rules: Rules(maximumLength: 60, documentNumberFormat: true),
            scope: .shop,
            apply: .live
        ),
        Setting(
            "tax.rates",
            .string,
            default: "23 Standard; 8 Reduced; 5 Super-reduced; 0 Zero",
            title: "Tax rates",
            footer:
                "Each rate in percent and its name, separated by semicolons. The first applies to a product whose category and product name none.",
            rules: Rules(maximumLength: 500, taxRates: true),
            scope: .shop,
            apply: .live
        ),
        Setting(
            "tax.rounding",
            .choice([Choice("line", "Per line"), Choice("rate", "Per rate, on the sum of its lines")]),
            default: "line",
            title: "Round tax",
            footer: "Per line rounds each line's tax to the cent; per rate rounds once for each rate on the invoice.",
            scope: .shop,
            apply: .live
        ),
        Setting(
            "documents.autosaveSeconds",
            .int,
            default: "15",
            title: "Autosave after (seconds)",
            footer: "A document being edited saves by itself this long after the last change, and when its page closes.",
            rules: Rules(minimum: 1, maximum: 600),
            scope: .shop,
            apply: .live
        ),
        // guide: begin setting-entry
        Setting(
            "pages.pageSize",
            .int,
            default: "25",
            title: "Rows per page",
            footer: "In the lists of products, customers and orders.",
            control: .slider(minimum: 10, maximum: 200, step: 1),
            rules: Rules(minimum: 10, maximum: 200),
            scope: .shop,
            apply: .live
        ),
        // guide: end setting-entry
        Setting(
            "session.lifetimeHours",
            .int,
            default: "168",
            title: "Stay signed in for (hours)",
            footer: "After this long a browser must sign in again.",
            rules: Rules(minimum: 1, maximum: 8760),
            scope: .shop,
            apply: .live
        ),
        Setting(
            "session.managerTitles",
            .string,
            default: "Vice President, Sales; Sales Manager",
            title: "Manager titles",
            footer: "Job titles whose holders may change the catalogue and read reports, separated by semicolons.",
            rules: Rules(maximumLength: 1000, heldTitles: true),
            scope: .shop,
            apply: .live
        ),
        Setting(
            "display.density",
            .choice([Choice("comfortable", "Comfortable"), Choice("compact", "Compact")]),
            default: "comfortable",
            title: "List density",
            footer: "Compact fits more rows on a screen.",
            scope: .user,
            apply: .live,
            syncs: true
        ),
        Setting(
            "display.startPage",
            .choice([
                Choice("dashboard", "Dashboard"), Choice("products", "Products"), Choice("orders", "Orders"),
                Choice("customers", "Customers"), Choice("reports", "Reports"),
            ]),
            default: "dashboard",
            title: "Page after signing in",
            footer: "Where you land when you sign in.",
            scope: .user,
            apply: .live,
            syncs: true
        ),
        Setting(
            "display.numberFormat",
            .choice([Choice("en", "1,234.56"), Choice("de", "1.234,56"), Choice("fr", "1 234,56"), Choice("ch", "1'234.56")]),
            default: "en",
            title: "Number format",
            footer: "How amounts and quantities are written on the pages you see.",
            scope: .user,
            apply: .live,
            syncs: true
        ),
    ]

    /// Every setting's factory default, by key: the last layer, which always answers.
    public static var factoryDefaults: [String: String] {
        Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0.defaultValue) })
    }
}
