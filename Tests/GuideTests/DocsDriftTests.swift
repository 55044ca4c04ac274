import ArgumentParser
import Foundation
import Testing

@testable import northwind

/// Every Markdown file a reader opens (the README, `docs/`, the guide), held to the code it names: a path in
/// backticks exists, and a `northwind` command line parses as the program would parse it.
@Suite("The documents and the code they name")
struct DocsDriftTests {
    /// The README, `docs/*.md`, the guide's chapters, the appliance's README and the packages' README.Debian (not
    /// `docs/research/`, which quotes other projects).
    static let documents: [String] = {
        let docs = ((try? FileManager.default.contentsOfDirectory(atPath: Guide.root.appendingPathComponent("docs").path)) ?? [])
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/\($0)" }
        let guide = ((try? FileManager.default.contentsOfDirectory(atPath: Guide.folder.path)) ?? [])
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/guide/\($0)" }
        let packaged = [
            "appliance/README.md", "packaging/northwind/root/usr/share/doc/northwind/README.Debian",
            "packaging/northwind-sync-server/root/usr/share/doc/northwind-sync-server/README.Debian",
        ]
        return ["README.md"] + docs + guide + packaged
    }()

    static func text(_ document: String) throws -> String {
        try String(contentsOf: Guide.root.appendingPathComponent(document), encoding: .utf8)
    }

    @Test(arguments: documents)
    func everyRepositoryPathInBackticksExists(document: String) throws {
        // Given a document's backticked paths into the repository (a placeholder or a pattern is not a path)
        let text = try Self.text(document)
        var missing: [String] = []
        for match in text.matches(of: #/`((?:Sources|Tests|scripts|docs|packaging|appliance|Snippets|\.ci)/[^`\s]*)`/#) {
            var path = String(match.1)
            if path.contains(where: { "*…<{$".contains($0) }) || path.contains("NAME") { continue }
            // A line or anchor after the path: `File.swift:12`, `file.md#part`.
            path = path.replacing(#/(:\d+([-–]\d+)?|#.*)$/#, with: "")
            while let last = path.last, ".,;:".contains(last) { path.removeLast() }
            // When each is looked for
            if !FileManager.default.fileExists(atPath: Guide.root.appendingPathComponent(path).path) { missing.append(path) }
        }
        // Then every one exists
        #expect(missing.isEmpty, "\(document) names paths that do not exist: \(missing.joined(separator: ", "))")
    }

    @Test(arguments: documents)
    func everyNorthwindCommandLineParses(document: String) throws {
        // Given a document's `northwind …` lines in code blocks (what a reader types), and its mentions in the text
        let text = try Self.text(document)
        var problems: [String] = []
        var fenced = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                fenced.toggle()
                continue
            }
            if fenced {
                guard let words = Self.commandWords(String(line)) else { continue }
                // When a line is parsed as `northwind` parses its arguments
                do {
                    _ = try NorthwindCommand.parseAsRoot(words)
                } catch {
                    // --help is a request, not a mistake.
                    if NorthwindCommand.exitCode(for: error) != .success {
                        problems.append("\(line.trimmingCharacters(in: .whitespaces)): \(NorthwindCommand.message(for: error))")
                    }
                }
            } else {
                // A mention in the text (`northwind backup restore`) names a command that exists.
                for match in line.matches(of: #/`northwind ([a-z][a-z-]*(?: [a-z][a-z-]*)?)/#) {
                    let path = match.1.split(separator: " ").map(String.init)
                    if !Self.namesACommand(path) { problems.append("`northwind \(match.1)`: no such command") }
                }
            }
        }
        // Then every one parses, and every mention names a command
        #expect(problems.isEmpty, "\(document):\n\(problems.joined(separator: "\n"))")
    }

    /// The arguments of a code line that runs `northwind`, as a shell would split them (quotes, `$VARIABLE`), up to
    /// a comment, a pipe, a redirection or `&`; nil for any other line.
    static func commandWords(_ line: String) -> [String]? {
        var rest = line.trimmingCharacters(in: .whitespaces)
        if rest.hasPrefix("$ ") { rest.removeFirst(2) }
        // `NAME=$(northwind …)`: the command inside.
        if let capture = rest.wholeMatch(of: #/[A-Z_]+=\$\((.*)\)/#) { rest = String(capture.1) }
        // `sudo`, `runuser -u USER --`, `swift run` and `NAME=value` before the program.
        while let prefix = rest.prefixMatch(of: #/(sudo |runuser -u \S+ -- |swift run |[A-Z_]+=\S+ )/#) { rest.removeFirst(prefix.0.count) }
        guard rest.hasPrefix("northwind ") else { return nil }
        var words: [String] = []
        var word = ""
        var quote: Character?
        var inWord = false
        for character in rest.dropFirst("northwind ".count) {
            if let open = quote {
                if character == open { quote = nil } else { word.append(character) }
                continue
            }
            if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character == " " {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else if "#|>&".contains(character) && !inWord {
                break
            } else {
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        // A variable's value is the reader's: any word stands for it.
        return words.map { $0.hasPrefix("$") ? "x" : $0 }
    }

    /// Whether `path` (such as ["backup", "restore"]) leads from `northwind` to a command: each word a subcommand of
    /// the one before, or an argument once a command without subcommands is reached.
    static func namesACommand(_ path: [String]) -> Bool {
        var command: any ParsableCommand.Type = NorthwindCommand.self
        for word in path {
            let subcommands = command.configuration.subcommands
            if subcommands.isEmpty { return true }
            guard let next = subcommands.first(where: { $0._commandName == word || $0.configuration.aliases.contains(word) }) else {
                return false
            }
            command = next
        }
        return true
    }
}
