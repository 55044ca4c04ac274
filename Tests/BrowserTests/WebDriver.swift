import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NorthwindLoading
import NorthwindStore
import Synchronization
import Testing

@testable import NorthwindTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Whether the end-to-end tests can drive a real browser. CI sets `NORTHWIND_E2E=require` so that a missing browser
/// fails the run instead of skipping it.
enum BrowserSupport {
    static let chromedriver = "/usr/bin/chromedriver"
    static let chromium = "/usr/bin/chromium"
    static let required = ProcessInfo.processInfo.environment["NORTHWIND_E2E"] == "require"
    static let installed =
        FileManager.default.isExecutableFile(atPath: chromedriver)
        && FileManager.default.isExecutableFile(atPath: chromium)
    static var enabled: Bool { installed || required }
    static let skipMessage = "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)"
}

struct WebDriverError: Error, CustomStringConvertible {
    var description: String
}

/// Debian's chromedriver, on a free loopback port, for the length of one test.
final class ChromeDriver: Sendable {
    let process: ChildProcess
    let base: URL
    private let sessions = Mutex<[Browser]>([])

    init() async throws {
        guard BrowserSupport.installed else { throw WebDriverError(description: BrowserSupport.skipMessage) }
        let port = try freeLoopbackPort()
        let process = try ChildProcess(BrowserSupport.chromedriver, ["--port=\(port)", "--log-level=OFF"])
        self.process = process
        base = URL(string: "http://127.0.0.1:\(port)")!
        var lastError = ""
        do {
            try await waitFor("chromedriver to listen on port \(port) (\(lastError))", timeout: .seconds(20)) {
                do {
                    try await WebDriverHTTP.send("GET", base.appendingPathComponent("status"))
                    return true
                } catch {
                    lastError = "\(error)"
                    return false
                }
            }
        } catch {
            stopProcess()
            throw error
        }
    }

    /// A new headless Chromium with its own profile, so two sessions share no cookies.
    func newBrowser(width: Int = 1280, height: Int = 900) async throws -> Browser {
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:loggingPrefs": ["browser": "ALL"],
                    "goog:chromeOptions": [
                        "binary": BrowserSupport.chromium,
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                            "--window-size=\(width),\(height)", "--lang=en-GB", "--hide-scrollbars",
                        ],
                    ],
                ]
            ]
        ]
        let value = try await WebDriverHTTP.send("POST", base.appendingPathComponent("session"), capabilities)
        guard let id = (value as? [String: Any])?["sessionId"] as? String else {
            throw WebDriverError(description: "chromedriver made no session: \(String(describing: value))")
        }
        let browser = Browser(session: base.appendingPathComponent("session").appendingPathComponent(id))
        sessions.withLock { $0.append(browser) }
        return browser
    }

    /// Closes every browser, then the driver.
    func stop() async {
        for browser in sessions.withLock({ $0 }) { await browser.close() }
        // chromedriver may ignore SIGTERM; its own shutdown command is the polite way.
        _ = try? await WebDriverHTTP.send("GET", base.appendingPathComponent("shutdown"))
        try? await waitFor("chromedriver to exit", timeout: .seconds(5)) { !process.isRunning }
        stopProcess()
    }

    private func stopProcess() {
        process.signal(SIGKILL)
        process.waitUntilExit()
    }
}

/// One browser window, driven through the W3C WebDriver protocol.
struct Browser: Sendable {
    let session: URL

    @discardableResult
    func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> Any? {
        try await WebDriverHTTP.send(method, path.isEmpty ? session : session.appendingPathComponent(path), body ?? (method == "POST" ? [:] : nil))
    }

    func go(_ url: String) async throws { try await command("POST", "url", ["url": url]) }
    func refresh() async throws { try await command("POST", "refresh") }
    var url: String { get async throws { try await command("GET", "url") as? String ?? "" } }
    var title: String { get async throws { try await command("GET", "title") as? String ?? "" } }

    /// The first element matching `css`, waiting for it to appear.
    @discardableResult
    func find(_ css: String, timeout: Duration = .seconds(10)) async throws -> Element {
        var found: Element?
        try await waitFor("an element matching \(css)", timeout: timeout) {
            found = try await findNow(css).first
            return found != nil
        }
        return found!
    }

    /// The elements matching `css` now, without waiting.
    func findNow(_ css: String) async throws -> [Element] {
        let value = try await command("POST", "elements", ["using": "css selector", "value": css])
        return (value as? [[String: Any]] ?? []).compactMap { $0[Element.key] as? String }.map { Element(browser: self, id: $0) }
    }

    func text(_ css: String) async throws -> String { try await find(css).text }

    @discardableResult
    func execute(_ script: String, _ arguments: [Any] = []) async throws -> Any? {
        try await command("POST", "execute/sync", ["script": script, "args": arguments])
    }

    /// Waits until the text of `css` satisfies `condition`, and returns it.
    @discardableResult
    func waitForText(
        _ css: String,
        _ description: String,
        timeout: Duration = .seconds(10),
        _ condition: @escaping (String) -> Bool
    ) async throws -> String {
        var last = ""
        try await waitFor("\(css) to show \(description) (last seen: \"\(last)\")", timeout: timeout) {
            guard let element = try await findNow(css).first else { return false }
            last = (try? await element.text) ?? ""
            return condition(last)
        }
        return last
    }

    /// What the page's scripts logged at level SEVERE (errors), since the last call.
    func consoleErrors() async throws -> [String] {
        let entries = try await command("POST", "se/log", ["type": "browser"]) as? [[String: Any]] ?? []
        return entries.filter { $0["level"] as? String == "SEVERE" }.compactMap { $0["message"] as? String }
    }

    func acceptAlert() async throws { try await command("POST", "alert/accept") }

    /// Emulates a device `width` CSS pixels wide, as a phone would report it.
    func emulate(width: Int, height: Int, mobile: Bool) async throws {
        try await command(
            "POST",
            "goog/cdp/execute",
            [
                "cmd": "Emulation.setDeviceMetricsOverride",
                "params": [
                    "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile,
                ],
            ]
        )
    }

    /// A PNG of the whole page at the emulated width, and how wide the page laid itself out there.
    func screenshot(width: Int, mobile: Bool) async throws -> (png: Data, scrollWidth: Int) {
        try await emulate(width: width, height: 900, mobile: mobile)
        let scrollWidth = try await execute("return document.documentElement.scrollWidth") as? Int ?? 0
        let height = try await execute("return Math.ceil(document.documentElement.scrollHeight)") as? Int ?? 900
        try await emulate(width: width, height: min(max(height, 640), 6000), mobile: mobile)
        let base64 = try await command("GET", "screenshot") as? String
        try await command("POST", "goog/cdp/execute", ["cmd": "Emulation.clearDeviceMetricsOverride", "params": [String: Any]()])
        guard let base64, let png = Data(base64Encoded: base64) else {
            throw WebDriverError(description: "the browser returned no screenshot")
        }
        return (png, scrollWidth)
    }

    func close() async { _ = try? await WebDriverHTTP.send("DELETE", session) }
}

struct Element: Sendable {
    static let key = "element-6066-11e4-a52e-4f735466cecf"
    let browser: Browser
    let id: String

    @discardableResult
    private func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) async throws -> Any? {
        try await browser.command(method, "element/\(id)" + (path.isEmpty ? "" : "/\(path)"), body)
    }

    func click() async throws { try await command("POST", "click") }
    func clear() async throws { try await command("POST", "clear") }
    /// Types as a person would: one key at a time, each firing the page's input events.
    func type(_ text: String) async throws { try await command("POST", "value", ["text": text]) }
    func replace(with text: String) async throws {
        try await clear()
        try await type(text)
    }
    var text: String { get async throws { try await command("GET", "text") as? String ?? "" } }
    var isEnabled: Bool { get async throws { try await command("GET", "enabled") as? Bool ?? false } }
    func property(_ name: String) async throws -> Any? { try await command("GET", "property/\(name)") }
    func attribute(_ name: String) async throws -> String? { try await command("GET", "attribute/\(name)") as? String }
    var value: String { get async throws { try await property("value") as? String ?? "" } }
}

enum WebDriverHTTP {
    /// Sends one WebDriver command and returns its `value`, or throws the driver's error message.
    @discardableResult
    static func send(_ method: String, _ url: URL, _ body: [String: Any]? = nil) async throws -> Any? {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .RAW(value: method)
        if let body {
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
            request.headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let data = Data((try await response.body.collect(upTo: 64 << 20)).readableBytesView)
        let json = data.isEmpty ? nil : try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        let value = (json as? [String: Any])?["value"]
        if response.status.code >= 400 {
            let error = value as? [String: Any]
            throw WebDriverError(description: "\(method) \(url.path): \(error?["error"] ?? response.status.code): \(error?["message"] ?? "")")
        }
        return value is NSNull ? nil : value
    }
}

/// Polls `condition` until it holds, failing with `description` after `timeout`.
func waitFor(
    _ description: @autoclosure () -> String,
    timeout: Duration = .seconds(10),
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return }
        if ContinuousClock.now > deadline { throw WebDriverError(description: "timed out waiting for \(description())") }
        try await Task.sleep(for: .milliseconds(100))
    }
}

/// A port nobody listens on now; the kernel hands out ports from a range, so a reuse race is unlikely.
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw WebDriverError(description: "no socket for a free port") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw WebDriverError(description: "could not find a free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}
