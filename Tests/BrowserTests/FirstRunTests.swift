import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NorthwindLoading
import NorthwindStore
import Synchronization
import Testing

@testable import Northwind
@testable import NorthwindTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The real `northwind serve` with `setup.firstRun` on, on a new store, driven over HTTP as a browser would.
final class FirstRunServer: Sendable {
    let process: ChildProcess
    let directory: URL
    let storePath: String
    let base: String
    private let printed = Printed()

    private final class Printed: Sendable {
        let text = Mutex("")
    }

    /// `arguments` add to `serve`'s (such as `--setting sync.server=…`); `prepare` gets the store's path before the
    /// server starts.
    init(arguments: [String] = [], prepare: (String) throws -> Void = { _ in }) async throws {
        guard let binary = CLI.binary("northwind") else { throw CLIError(description: "no northwind binary: build it first (swift build)") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-firstrun-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        storePath = directory.appendingPathComponent("shop.sqlite").path
        try prepare(storePath)
        process = try ChildProcess(
            binary.path,
            ["serve", "--store", storePath, "--port", "0", "--setting", "setup.firstRun=true"] + arguments,
            environment: [
                "NORTHWIND_SETTINGS": directory.appendingPathComponent("none.json").path,
                "NORTHWIND_BACKUP_DIRECTORY": directory.appendingPathComponent("backups").path,
            ],
            output: .pipe,
            errors: .toOutput
        )
        let output = process.output!
        let printed = self.printed
        Thread.detachNewThread {
            while case let data = output.availableData, !data.isEmpty { printed.text.withLock { $0 += String(decoding: data, as: UTF8.self) } }
        }
        let process = self.process
        try await waitFor("the server to offer its first run", timeout: .seconds(120)) {
            printed.text.withLock { $0.contains("First run: open") } || !process.isRunning
        }
        guard let address = printed.text.withLock({ $0 }).firstMatch(of: /Northwind is serving .* at (http:\/\/\S+)\//)?.1 else {
            throw CLIError(description: "serve printed no address: \(printed.text.withLock { $0 })")
        }
        base = String(address)
    }

    var log: String { printed.text.withLock { $0 } }

    func backoffice() throws -> Backoffice { try Backoffice.open(StoreConfiguration(path: storePath), seedIfCreated: false) }

    func stop() async {
        process.signal(SIGTERM)
        if await process.exit(within: .seconds(10)) == nil {
            process.signal(SIGKILL)
            await process.exit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    struct Answer {
        var status: Int
        var location: String?
        var body: String
        var cookies: [String]
    }

    /// A client that shows redirects rather than following them. Never shut down: it lives as long as the tests.
    static let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(redirectConfiguration: .disallow))

    /// One request, with the cookies given; redirects are not followed. `forwardedFor`: as if through a proxy, for
    /// a caller on the LAN.
    func send(
        _ method: HTTPMethod,
        _ path: String,
        form: [String: String]? = nil,
        cookies: [String] = [],
        forwardedFor: String? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let forwardedFor { request.headers.add(name: "X-Forwarded-For", value: forwardedFor) }
        if !cookies.isEmpty { request.headers.add(name: "Cookie", value: cookies.joined(separator: "; ")) }
        if let form {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            let body = form.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await Self.client.execute(request, timeout: .seconds(120))
        let body = String(buffer: try await response.body.collect(upTo: 8 << 20))
        let set = response.headers["Set-Cookie"].compactMap { $0.split(separator: ";").first.map(String.init) }
        return Answer(status: Int(response.status.code), location: response.headers.first(name: "Location"), body: body, cookies: set)
    }

    /// Opens the first-run page and posts `fields` with its form token, as a browser would.
    func submit(_ fields: [String: String]) async throws -> Answer {
        let page = try await send(.GET, "/setup")
        let token = try #require(page.body.firstMatch(of: /name="_csrf" value="([^"]+)"/)?.1)
        return try await send(.POST, "/setup", form: fields.merging(["_csrf": String(token)]) { $1 }, cookies: page.cookies)
    }

    static func form(
        role: String,
        login: String = "anna.kowalska",
        password: String = "amber-lantern-ferry-42",
        code: String = "KRK"
    ) -> [String: String] {
        [
            "firstName": "Anna", "lastName": "Kowalska", "login": login, "password": password, "passwordAgain": password,
            "siteName": "Kraków shop", "siteCode": code, "role": role,
        ]
    }
}

@Suite(.serialized) struct FirstRunTests {
    @Test func everyPageLeadsToTheFirstRunUntilItIsDone() async throws {
        // Given a new machine with the first run on
        let server = try await FirstRunServer()
        defer { Task { await server.stop() } }
        // When someone opens a page, the sign-in, or the API
        let products = try await server.send(.GET, "/products")
        let signIn = try await server.send(.GET, "/signin")
        let api = try await server.send(.GET, "/api/v1/products")
        let setup = try await server.send(.GET, "/setup")
        // Then the pages lead to the first run, the API says why it cannot answer, and no demo password was printed
        #expect(products.status == 302 && products.location == "/setup")
        #expect(signIn.status == 302 && signIn.location == "/setup")
        #expect(api.status == 503 && api.body.contains("/setup"), "\(api.body)")
        #expect(setup.status == 200 && setup.body.contains("The first manager"))
        #expect(!server.log.contains("Demo sign-in"))
        #expect(try server.backoffice().store.isEmpty())
        #expect(!FileManager.default.fileExists(atPath: server.directory.appendingPathComponent(".setup-done").path))
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/sys/kernel/random/boot_id"), "Linux's boot id"))
    func aStoreMadeDuringThisBootOffersItsFirstRunToTheLAN() async throws {
        // Given a machine whose store the server made during this boot
        let server = try await FirstRunServer()
        defer { Task { await server.stop() } }
        // When a computer on the LAN opens the first-run page (through a proxy that says whom it forwards for)
        let answer = try await server.send(.GET, "/setup", forwardedFor: "192.168.1.20")
        // Then the page answers it
        #expect(answer.status == 200 && answer.body.contains("The first manager"), "\(answer.status)")
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/sys/kernel/random/boot_id"), "Linux's boot id"))
    func aStoreWithoutTheBootThatMadeItIsClosedToTheLANUntilReopened() async throws {
        // Given a store made before the server started, with no record of the boot that made it (an older version's,
        // or one whose record a power cut lost)
        let server = try await FirstRunServer { path in
            _ = try Backoffice.open(StoreConfiguration(path: path), seedIfCreated: false)
        }
        defer { Task { await server.stop() } }
        // When a computer on the LAN opens the first-run page, then this machine does
        let lan = try await server.send(.GET, "/setup", forwardedFor: "192.168.1.20")
        let local = try await server.send(.GET, "/setup")
        // Then the LAN is refused with what to do, and this machine is answered
        #expect(lan.status == 403 && lan.body.contains("setup reopen"), "\(lan.status)")
        #expect(local.status == 200)
        // When `northwind setup reopen` runs on the console, the LAN is answered, without a restart
        let reopened = try await CLI.run(["setup", "reopen", "--store", server.storePath], environment: ["NORTHWIND_SETTINGS": "/nonexistent"])
        #expect(reopened.status == 0, "\(reopened.stdout)\(reopened.stderr)")
        #expect(try await server.send(.GET, "/setup", forwardedFor: "192.168.1.20").status == 200)
    }

    @Test func aWeakPasswordIsRefusedAndNothingIsSaved() async throws {
        // Given a new machine
        let server = try await FirstRunServer()
        defer { Task { await server.stop() } }
        // When the owner picks a password that is the login with digits
        let answer = try await server.submit(FirstRunServer.form(role: "demo", password: "anna.kowalska1"))
        // Then the form comes back saying why, and the store is as it was: empty, the first run still to do
        #expect(answer.status == 422)
        #expect(answer.body.contains(#"data-field="password""#), "\(answer.body)")
        let office = try server.backoffice()
        #expect(try office.store.isEmpty())
        #expect(try await office.setup.state().pending)
    }

    @Test func aFormPostedWithoutItsTokenIsRefused() async throws {
        // Given a new machine, and another site that makes a browser post the form
        let server = try await FirstRunServer()
        defer { Task { await server.stop() } }
        // When the form arrives without the page's token
        let answer = try await server.send(.POST, "/setup", form: FirstRunServer.form(role: "headOffice"))
        // Then it is refused, and no manager was made
        #expect(answer.status == 403)
        #expect(try await server.backoffice().setup.state().pending)
    }

    @Test func aDemoFirstRunMakesAManagerWhoIsSignedInAndNumbersOrdersWithTheSiteCode() async throws {
        // Given a new machine
        let server = try await FirstRunServer()
        defer { Task { await server.stop() } }
        // When the owner sets it up as a demo
        let answer = try await server.submit(FirstRunServer.form(role: "demo"))
        let home = try await server.send(.GET, "/", cookies: answer.cookies)
        // Then the manager is signed in, the demo data is there, orders are numbered KRK-…, and the page is gone
        #expect(answer.status == 302 && answer.location == "/", "\(answer.body)")
        #expect(home.status == 200 && home.body.contains("Anna"), "\(home.body.prefix(500))")
        let office = try server.backoffice()
        let orders = try await office.orders.list(OrderQuery()).items
        #expect(!orders.isEmpty && orders.allSatisfy { $0.order.number.hasPrefix("KRK-") })
        #expect(try await server.send(.GET, "/setup").location == "/signin")
        #expect(FileManager.default.fileExists(atPath: server.directory.appendingPathComponent(".setup-done").path), "the console banner's mark")
        let (_, signedIn) = try await office.accounts.signIn(login: "anna.kowalska", password: "amber-lantern-ferry-42")
        #expect(AccessPolicy().isManager(signedIn.employee))
    }

    @Test func aHeadOfficeFirstRunLeavesOnlyItsManagerInTheStore() async throws {
        // Given a new machine
        let server = try await FirstRunServer()
        defer { Task { await server.stop() } }
        // When the owner sets it up as head office
        let answer = try await server.submit(FirstRunServer.form(role: "headOffice", code: "HQ"))
        // Then it holds one employee, the manager, no demo data, and the site's code and name
        #expect(answer.status == 302, "\(answer.body)")
        let office = try server.backoffice()
        #expect(try await office.records.list(Employee.self).items.map(\.firstName) == ["Anna"])
        #expect(try await office.records.list(Customer.self).items.isEmpty)
        #expect(try await office.sync.siteCode() == "HQ")
        #expect(try await office.setup.siteName() == "Kraków shop")
    }

    @Test func headOfficeWithASyncServerSetUpJoinsItAndSaysHowShopsJoin() async throws {
        // Given a sync server on this machine, and head office's enrolment token in the settings (as the appliance
        // sets them up at its first boot)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("firstrun-hq-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("sync.sqlite").path
        let sync = try ServerProcess.start(["serve", "--database", database, "--port", "0"])
        defer { sync.stop() }
        let made = try await CLI.run(["enroll", "--database", database, "--container", "acme", "--role", "hq"], program: "northwind-sync-server")
        let token = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try await FirstRunServer(arguments: [
            "--setting", "sync.server=http://127.0.0.1:\(sync.port)", "--setting", "sync.enrolmentToken=\(token)",
        ])
        defer { Task { await server.stop() } }
        // When the owner sets the machine up as head office
        let answer = try await server.submit(FirstRunServer.form(role: "headOffice", code: "HQ"))
        // Then head office joined as HQ with the code chosen, and the page says how a shop joins
        #expect(answer.status == 200, "\(answer.body)")
        #expect(answer.body.contains("enroll --container acme --role shop"), "\(answer.body)")
        let membership = try await server.backoffice().sync.membership()
        #expect(membership?.role == "hq" && membership?.siteCode == "HQ")
        #expect(!server.log.contains("Joined container"), "joined before the first run chose the site code")
    }

    @Test func aShopWhoseSyncServerCannotBeReachedIsToldAndNothingChanges() async throws {
        // Given a new machine, and a sync server address where nothing listens
        let server = try await FirstRunServer()
        defer { Task { await server.stop() } }
        var form = FirstRunServer.form(role: "shop")
        form["server"] = "http://127.0.0.1:9"
        form["token"] = "not-a-real-token"
        // When the owner asks to join it
        let answer = try await server.submit(form)
        // Then the form says so, and the store is still empty and unjoined
        #expect(answer.status == 422)
        #expect(answer.body.contains(#"data-field="token""#), "\(answer.body)")
        let office = try server.backoffice()
        #expect(try office.store.isEmpty())
        #expect(try await office.sync.membership() == nil)
        #expect(try await office.setup.state().pending)
    }

    /// A sync server with head office joined and uploaded (the demo data), for shops' first runs.
    final class Company: Sendable {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("firstrun-company-\(UUID().uuidString)")
        let database: String
        let sync: ServerProcess
        var url: String { "http://127.0.0.1:\(sync.port)" }
        var hq: [String] { ["--store", folder.appendingPathComponent("hq.sqlite").path] }
        var environment: [String: String] { ["NORTHWIND_SETTINGS": folder.appendingPathComponent("none.json").path] }

        init() async throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            database = folder.appendingPathComponent("sync.sqlite").path
            sync = try ServerProcess.start(["serve", "--database", database, "--port", "0"])
            try #require(try await CLI.run(["sync", "join", url, try await token("hq")] + hq, environment: environment).status == 0)
            try #require(try await CLI.run(["sync", "now"] + hq, environment: environment).status == 0)
        }

        deinit {
            sync.stop()
            try? FileManager.default.removeItem(at: folder)
        }

        /// The first-run form of a shop that joins this company as `code`, with a new shop token.
        func shopForm(code: String) async throws -> [String: String] {
            var form = FirstRunServer.form(role: "shop", code: code)
            form["server"] = url
            form["token"] = try await token("shop")
            return form
        }

        /// A token; `site` makes it for that site alone (`enroll --site`).
        func token(_ role: String, site: String? = nil) async throws -> String {
            let made = try await CLI.run(
                ["enroll", "--database", database, "--container", "acme", "--role", role] + (site.map { ["--site", $0] } ?? []),
                program: "northwind-sync-server"
            )
            return made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test func aShopJoinsHeadOfficeFromTheFirstRunPageAndItsOrderReachesHeadOffice() async throws {
        // Given a sync server, and head office joined with the demo data and uploaded
        let company = try await Company()
        let (hq, environment) = (company.hq, company.environment)
        // When a new machine is set up as a shop with head office's address and a shop token
        let shop = try await FirstRunServer()
        defer { Task { await shop.stop() } }
        let answer = try await shop.submit(try await company.shopForm(code: "KRK"))
        // Then the shop is set up with head office's catalogue, and an order taken there reaches head office
        #expect(answer.status == 302, "\(answer.body)")
        let office = try shop.backoffice()
        #expect(try await office.sync.membership()?.siteCode == "KRK")
        let customer = try #require(try await office.records.list(Customer.self, limit: 1).items.first)
        let product = try #require(try await office.catalogue.list().items.first { !$0.product.discontinued }?.product)
        let order = try await office.orders.create(
            OrderDraft(customerCode: customer.code, employeeID: nil, lines: [OrderLineDraft(productID: product.id!, quantity: 1)])
        )
        try await waitFor("the order to reach head office", timeout: .seconds(60)) {
            try await Task.sleep(for: .seconds(1))
            _ = try? await CLI.run(["sync", "now"] + hq, environment: environment)
            let shown = try? await CLI.run(["orders", "show", order.order.number] + hq, environment: environment)
            return shown?.status == 0
        }
    }

    @Test func aShopWhoseSiteCodeTheCompanyHasGivenIsRefusedAndNothingIsJoined() async throws {
        // Given a company where a shop KRK has joined already
        let company = try await Company()
        let krk = ["--store", company.folder.appendingPathComponent("krk.sqlite").path, "--empty"]
        let joined = try await CLI.run(
            ["sync", "join", company.url, try await company.token("shop", site: "KRK")] + krk,
            environment: company.environment
        )
        try #require(joined.stdout.contains("as KRK"), "\(joined.stdout)\(joined.stderr)")
        // When a new machine's first run asks to join as KRK too
        let shop = try await FirstRunServer()
        defer { Task { await shop.stop() } }
        let answer = try await shop.submit(try await company.shopForm(code: "KRK"))
        // Then the form says the code is taken, and the machine has joined nothing and still offers its first run
        #expect(answer.status == 422)
        let said = answer.body.firstMatch(of: /<li data-field="siteCode">([^<]*)<\/li>/).map { String($0.1) } ?? ""
        #expect(said.contains("KRK is already enrolled"), "\(answer.body)")
        let office = try shop.backoffice()
        #expect(try office.store.isEmpty())
        #expect(try await office.sync.membership() == nil)
        #expect(try await office.setup.state().pending)
    }
}
