import Foundation
import Testing

@testable import NorthwindTestSupport

/// The guide cannot drift from the code: its excerpts are the sources' regions, its transcripts are what the real
/// programs print, and every chapter's snippet runs and checks itself. See `Guide` for the forms of each.
@Suite("The guide", .serialized)
struct GuideTests {
    @Test func everyGuideMarkerInTheSourcesIsWellFormed() {
        // Given every source file's guide markers
        // When they are read
        let problems = Region.scanned.problems
        // Then each region begins and ends once, on lines of their own, and no two share a name
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test func everyExcerptNamesARegionThatExists() throws {
        // Given the sources' regions
        let regions = Region.scanned.regions
        // When every chapter's excerpts are read
        var missing: [String] = []
        for chapter in Guide.chapters {
            for fence in Fence.all(in: try Guide.text(chapter)) {
                if let name = fence.include, regions[name] == nil { missing.append("\(chapter):\(fence.open + 1): \(name)") }
            }
        }
        // Then each names a region some source still marks
        #expect(missing.isEmpty, "Regions the guide includes but no source marks (was a marker removed?):\n\(missing.joined(separator: "\n"))")
    }

    @Test(arguments: Guide.chapters)
    func theChaptersExcerptsAreTheSourcesCode(chapter: String) throws {
        // Given a chapter and the sources' regions
        let regions = Region.scanned.regions
        var text = try Guide.text(chapter)
        // When each excerpt is compared with its region
        var stale: [String] = []
        for fence in Fence.all(in: text).reversed() {
            guard let name = fence.include, let region = regions[name], fence.body != region.excerpt else { continue }
            stale.append("\(chapter):\(fence.open + 1): \(name) differs from \(region.file)")
            text = fence.replacingBody(in: text, with: region.excerpt)
        }
        if Guide.updating && !stale.isEmpty { try Guide.write(chapter, text) }
        // Then each is the source's code as it is now
        #expect(
            stale.isEmpty || Guide.updating,
            "Stale excerpts (NORTHWIND_GUIDE_UPDATE=1 swift test --filter GuideTests rewrites them):\n\(stale.joined(separator: "\n"))"
        )
    }

    @Test func everyExcerptIsFencedInItsSourcesLanguage() throws {
        // Given the sources' regions
        let regions = Region.scanned.regions
        // When every chapter's excerpts are read
        var mislabelled: [String] = []
        for chapter in Guide.chapters {
            for fence in Fence.all(in: try Guide.text(chapter)) {
                guard let name = fence.include, let region = regions[name], fence.info != region.language else { continue }
                mislabelled.append("\(chapter):\(fence.open + 1): \(name) is \(region.language), fenced as '\(fence.info)'")
            }
        }
        // Then each fence names the language of the file it quotes, so that it is highlighted as that language
        #expect(mislabelled.isEmpty, "\(mislabelled.joined(separator: "\n"))")
    }

    @Test(arguments: Guide.chapters)
    func theChaptersTranscriptsPrintWhatTheyShow(chapter: String) async throws {
        // Given a chapter's shell sessions, and a fresh home with no store
        var text = try Guide.text(chapter)
        let fences = Fence.all(in: text).filter { $0.info == "console" }
        guard !fences.isEmpty else { return }
        let session = try GuideSession()
        // When each command runs, in order, against that one store
        var differences: [String] = []
        var rewritten: [(Fence, String)] = []
        for fence in fences {
            var steps = Transcript(fence.body).steps
            for index in steps.indices {
                let actual = try await session.run(steps[index].command)
                guard !Transcript.matches(steps[index].expected, actual) else { continue }
                differences.append(
                    "\(chapter):\(fence.open + 1): $ \(steps[index].command)\n--- shown\n\(steps[index].expected.joined(separator: "\n"))\n--- printed\n\(actual.joined(separator: "\n"))"
                )
                steps[index].expected = Transcript.trimmed(actual)
            }
            rewritten.append((fence, Transcript.render(steps)))
        }
        if Guide.updating && !differences.isEmpty {
            for (fence, body) in rewritten.reversed() { text = fence.replacingBody(in: text, with: body) }
            try Guide.write(chapter, text)
        }
        // Then each prints what the guide shows (… standing for what changes from run to run)
        #expect(differences.isEmpty || Guide.updating, "\(differences.joined(separator: "\n\n"))")
    }

    @Test(arguments: Guide.chapters)
    func everyChapterRunsASnippetOfItsOwn(chapter: String) throws {
        // Given a chapter
        let text = try Guide.text(chapter)
        // When its shell sessions are read
        let programs = Fence.all(in: text).filter { $0.info == "console" }.flatMap { Transcript($0.body).steps }
            .compactMap { Transcript.words($0.command).first }
        // Then one of them runs a snippet in Snippets/
        #expect(programs.contains { Guide.snippets.contains($0) }, "\(chapter) runs no snippet: add `$ NAME` for one in Snippets/")
    }

    @Test func everySnippetIsRunInTheGuide() throws {
        // Given the snippets and every chapter's text
        let texts = try Guide.chapters.map(Guide.text).joined(separator: "\n")
        // When each is looked for in a shell session
        let unused = Guide.snippets.filter { !texts.contains("\n$ \($0)") }
        // Then each is run by some chapter, so none goes unchecked
        #expect(unused.isEmpty, "Snippets no chapter runs: \(unused)")
    }

    @Test func theIndexLinksEveryChapterAndEveryLinkLeadsToAFile() throws {
        // Given the index and the chapters
        let index = try String(contentsOf: Guide.folder.appendingPathComponent("README.md"), encoding: .utf8)
        // When their relative links are followed
        var broken: [String] = []
        for (name, text) in [("README.md", index)] + (try Guide.chapters.map { ($0, try Guide.text($0)) }) {
            for match in text.matches(of: #/\]\(([^)#\s]+)(#[^)\s]*)?\)/#) {
                let target = String(match.1)
                guard !target.contains("://") else { continue }
                let url = Guide.folder.appendingPathComponent(target)
                if !FileManager.default.fileExists(atPath: url.path) { broken.append("\(name): \(target)") }
            }
        }
        // Then the index names every chapter, and every link leads to a file that exists
        #expect(Guide.chapters.count >= 14)
        #expect(Guide.chapters.filter { !index.contains("(\($0))") }.isEmpty, "chapters the index does not link")
        #expect(broken.isEmpty, "\(broken.joined(separator: "\n"))")
    }
}

/// A reader's terminal: a fresh home (so the first `northwind` command makes the default store with demo data), a
/// working folder, and the programs `swift build` made. It understands as much shell as the guide uses:
/// `NAME=value command`, `NAME=$(command)` and `$NAME`, and `command &` for a server that runs until the chapter ends.
final class GuideSession {
    let home: URL
    private var variables: [String: String] = [:]
    private var background: [ChildProcess] = []

    static let programs = ["northwind", "northwind-sync-server", "northwind-bench"]

    init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("northwind-guide-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home.appendingPathComponent("work"), withIntermediateDirectories: true)
    }

    deinit {
        for process in background { process.stop(within: .seconds(20)) }
        try? FileManager.default.removeItem(at: home)
    }

    /// Runs one `$` line and returns what it printed (standard output and error together).
    func run(_ line: String) async throws -> [String] {
        if let capture = line.wholeMatch(of: #/([A-Z_][A-Z0-9_]*)=\$\((.*)\)/#) {
            variables[String(capture.1)] = try await execute(String(capture.2)).output.trimmingCharacters(in: .whitespacesAndNewlines)
            return []
        }
        if line.hasSuffix(" &") {
            try start(String(line.dropLast(2)))
            return []
        }
        return try await execute(line).output.components(separatedBy: "\n")
    }

    private func execute(_ command: String) async throws -> (output: String, status: Int32) {
        let (binary, arguments, environment) = try resolve(command)
        let result = try await ChildProcess.runOffPool(
            binary,
            arguments,
            environment: environment,
            directory: home.appendingPathComponent("work").path,
            mergingErrors: true
        )
        return (result.output, result.termination.status)
    }

    /// A server in the background: started, and waited for until it says it is listening.
    private func start(_ command: String) throws {
        let (binary, arguments, environment) = try resolve(command)
        let process = try ChildProcess(
            binary,
            arguments,
            environment: environment,
            directory: home.appendingPathComponent("work").path,
            output: .pipe,
            errors: .toOutput
        )
        background.append(process)
        guard let output = process.output else { return }
        let seen = process.read(output, until: { $0.contains("listening on") || $0.contains("http://") }, within: .seconds(60))
        // Whatever it prints later must not fill the pipe and stall it.
        drain(output)
        guard process.isRunning else { throw CLIError(description: "\(command) stopped: \(seen)") }
    }

    /// The program, its arguments after `$NAME` expansion, and the environment with any `NAME=value` before it.
    private func resolve(_ command: String) throws -> (String, [String], [String: String]) {
        let expanded = command.replacing(#/\$\{?([A-Z_][A-Z0-9_]*)\}?/#) { match in self.variables[String(match.1)] ?? "" }
        var words = Transcript.words(expanded)
        var environment = [
            "HOME": home.path, "XDG_DATA_HOME": home.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": home.appendingPathComponent("config").path, "NORTHWIND_STORE": "", "NORTHWIND_SETTINGS": "",
            "NORTHWIND_SYNC_DATABASE": "", "COLUMNS": "120", "TZ": "UTC",
        ]
        while let first = words.first, let equals = first.firstIndex(of: "="), first[..<equals].allSatisfy({ $0.isUppercase || $0 == "_" }) {
            environment[String(first[..<equals])] = String(first[first.index(after: equals)...])
            words.removeFirst()
        }
        guard let program = words.first, Self.programs.contains(program) || Guide.snippets.contains(program) else {
            throw CLIError(description: "The guide's shell sessions run \(Self.programs.joined(separator: ", ")) or a snippet: \(command)")
        }
        words.removeFirst()
        guard let binary = CLI.binary(program) else { throw CLIError(description: "\(program) is not built: swift build") }
        return (binary.path, words, environment)
    }
}
