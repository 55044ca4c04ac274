// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Northwind",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "Northwind", targets: ["Northwind"]),
        .executable(name: "northwind", targets: ["northwind"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // Schema, migrations, records and the file-backed blob store: everything that knows SQL.
        .target(
            name: "NorthwindStore",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Domain operations, demo data and classic import: the API that the CLI, web and sync call.
        .target(
            name: "Northwind",
            dependencies: [
                "NorthwindStore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // The `northwind` command-line tool, including `bench`, which compares the domain layer with bare SQLite.
        .executableTarget(
            name: "northwind",
            dependencies: [
                "Northwind",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // The bare C API, for the benchmark's baseline.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "NorthwindTests",
            dependencies: ["Northwind", "northwind", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
