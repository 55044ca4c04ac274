// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    // The fault tests' switches (crash points, the commit-order test's hooks) exist in debug builds only, which
    // the tests run: a release binary has no code that reads them, and refuses to start when one is set.
    .define("NORTHWIND_TEST_HOOKS", .when(configuration: .debug)),
]

// SyncAPI is generated code and one hand-written type. The generator lets each shard's public imports go unused
// without a warning only on Swift 6.4 and later (`@diagnose(UnusedImportAccess, as: ignored)`); before, every shard
// that does not use all of them warns.
#if compiler(>=6.4)
let generatedSettings = swiftSettings
#else
let generatedSettings = swiftSettings + [.unsafeFlags(["-suppress-warnings"])]
#endif

let package = Package(
    name: "Northwind",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Northwind", targets: ["Northwind"]),
        // Demo data and the classic import; also what the guide's snippets open their stores with.
        .library(name: "NorthwindLoading", targets: ["NorthwindLoading"]),
        .executable(name: "northwind", targets: ["northwind"]),
        .executable(name: "northwind-bench", targets: ["northwind-bench"]),
        .executable(name: "northwind-sync-server", targets: ["northwind-sync-server"]),
        .executable(name: "northwind-sync-bench", targets: ["northwind-sync-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Settings in layers (command line, environment, a reloaded file, the store, factory defaults).
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Reads openapi.yaml, the API's contract, to serve it as JSON.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // The API's types and server stubs, generated from openapi.yaml.
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-hummingbird", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        // Tests only: the WebDriver client's HTTP (Foundation's URLSession on Linux fails against chromedriver).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        // The sync server's PostgreSQL engine, and TLS to PostgreSQL.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Backups and document packages are ZIP archives.
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        // Metrics: the API (swift-metrics, which Hummingbird records through) and its Prometheus backend.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // The rule between targets, and where to find things, is in docs/architecture.md; ArchitectureTests enforce it.
        // Schema, migrations, records, the change log, external storage, values and the bulk-load entry.
        .target(
            name: "NorthwindStore",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Every domain query and rule, in folders by area: the API that the CLI, web and sync call.
        .target(
            name: "Northwind",
            dependencies: [
                "NorthwindStore",
                "SyncProtocol",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                // The printable renditions inside document packages.
                .product(name: "Mustache", package: "swift-mustache"),
                // Counters of orders taken and executed, for /metrics.
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            resources: [.copy("Reports/reports.sql"), .copy("Documents/Renditions")],
            swiftSettings: swiftSettings
        ),
        // Demo data and the classic import, through the store's bulk-load entry.
        .target(
            name: "NorthwindLoading",
            dependencies: [
                "Northwind", "NorthwindStore",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // What both servers share with the machine they run on: systemd readiness, reload on SIGHUP, and the
        // /healthz, /readyz and /metrics routes over one Prometheus registry; and RawAnswer, for handlers that
        // write their own JSON.
        .target(
            name: "ServerOperations",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings
        ),
        // The shop-floor web application and the JSON API, on Hummingbird, with live updates.
        .target(
            name: "NorthwindWeb",
            dependencies: [
                "Northwind", "NorthwindStore", "SyncProtocol", "ServerOperations",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            resources: [.copy("Templates"), .copy("Static"), .copy("openapi.yaml")],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // Shop sync: the engine that pushes a store's outbox to the sync server and pulls the other sites' changes,
        // through a client generated from the server's contract.
        .target(
            name: "NorthwindSync",
            dependencies: [
                "Northwind", "NorthwindStore", "SyncProtocol", "SyncAPI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // The shop's command-line tool, one folder per command group; `serve` runs the web app.
        .executableTarget(
            name: "northwind",
            dependencies: [
                "Northwind", "NorthwindStore", "NorthwindLoading", "NorthwindWeb", "NorthwindSync", "ServerOperations",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The benchmark: the domain layer against the bare SQLite C API doing the same work, in the same run.
        .executableTarget(
            name: "northwind-bench",
            dependencies: [
                "Northwind", "NorthwindStore", "NorthwindLoading",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // The sync protocol's records, field values, errors and limits, shared by the server and its clients.
        .target(name: "SyncProtocol", swiftSettings: swiftSettings),
        // The protocol's HTTP types, generated once from its contract for the server, the client and the tests.
        .target(
            name: "SyncAPI",
            dependencies: [
                "SyncProtocol",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: generatedSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // The sync server: its rules, its storage engines and its HTTP protocol. It knows nothing of Northwind.
        .target(
            name: "SyncServer",
            dependencies: [
                "SyncProtocol", "SyncAPI", "ServerOperations",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings,
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // The sync server's command: serve, enrol installations, list and revoke them, purge old deletions.
        .executableTarget(
            name: "northwind-sync-server",
            dependencies: [
                "SyncProtocol", "SyncServer", "ServerOperations",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The sync server's benchmark: the real server over HTTP beside the bare SQLite C API or plain PostgresNIO.
        .executableTarget(
            name: "northwind-sync-bench",
            dependencies: [
                "SyncProtocol", "SyncServer", "Northwind", "NorthwindStore", "NorthwindLoading", "NorthwindSync",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Tests, one target per library, so a store change can run the store's tests first
        // (`swift test --filter NorthwindStoreTests`). Shared fixtures: a temporary store, a small known world,
        // the classic files and the real CLI binary.
        .target(
            name: "NorthwindTestSupport",
            dependencies: [
                "Northwind", "NorthwindStore", "NorthwindLoading", "SyncProtocol",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The bare C API, to check a store as tools without the app's SQL functions see it.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            path: "Tests/Support",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NorthwindStoreTests",
            dependencies: ["NorthwindTestSupport", "NorthwindStore", "Northwind", "NorthwindLoading", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/StoreTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NorthwindDomainTests",
            dependencies: [
                "NorthwindTestSupport", "NorthwindStore", "Northwind", "NorthwindLoading", "SyncProtocol",
                .product(name: "GRDB", package: "GRDB.swift"),
                // Crafted archives, to check what import refuses.
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/DomainTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NorthwindLoadingTests",
            dependencies: ["NorthwindTestSupport", "NorthwindStore", "Northwind", "NorthwindLoading", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/LoadingTests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NorthwindWebTests",
            dependencies: [
                "NorthwindTestSupport", "NorthwindStore", "Northwind", "NorthwindLoading", "NorthwindWeb",
                // Some web tests also read poison records back through the CLI binary.
                "northwind",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ],
            path: "Tests/WebTests",
            swiftSettings: swiftSettings,
            // The contract test's client, from the same openapi.yaml.
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .testTarget(
            name: "NorthwindCLITests",
            dependencies: [
                "NorthwindTestSupport", "NorthwindStore", "Northwind", "NorthwindLoading", "northwind", "northwind-bench",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/CLITests",
            swiftSettings: swiftSettings
        ),
        // End to end: the real `northwind serve` driven in headless Chromium through WebDriver.
        .testTarget(
            name: "NorthwindBrowserTests",
            dependencies: [
                "NorthwindTestSupport", "NorthwindStore", "Northwind", "NorthwindLoading", "northwind",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/BrowserTests",
            swiftSettings: swiftSettings
        ),
        // The sync protocol against a real server on loopback, through a client generated from the same contract.
        .testTarget(
            name: "SyncServerTests",
            dependencies: [
                "SyncProtocol", "SyncAPI", "SyncServer", "northwind-sync-server", "NorthwindTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // Reads the contract, to hold the hand-written ModifyRequest to its schema.
                .product(name: "Yams", package: "Yams"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/SyncServerTests",
            swiftSettings: swiftSettings,
            // The tests' client, generated from the protocol's contract; its types are SyncAPI's.
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // Shop sync end to end: real stores, the real `northwind` and a real sync server on loopback.
        .testTarget(
            name: "ShopSyncTests",
            dependencies: [
                "NorthwindTestSupport", "Northwind", "NorthwindStore", "NorthwindLoading", "NorthwindSync", "SyncProtocol", "SyncAPI",
                "SyncServer", "northwind", "northwind-sync-server",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/ShopSyncTests",
            swiftSettings: swiftSettings
        ),
        // The guide (docs/guide): its excerpts, transcripts and snippets checked against the code and programs.
        .testTarget(
            name: "GuideTests",
            dependencies: ["NorthwindTestSupport", "northwind", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Tests/GuideTests",
            swiftSettings: swiftSettings
        ),
        // The dependency rule of docs/architecture.md, checked by reading every target's imports.
        .testTarget(
            name: "ArchitectureTests",
            path: "Tests/ArchitectureTests",
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
