import Foundation

/// The guide (`docs/guide/*.md`) and the code it quotes. Three kinds of block in a chapter are checked:
///
/// - an excerpt: `<!-- include: NAME -->` followed by a fence (`swift`, `sql`, `js`, `sh` or `ini`), whose first line
///   names the file and whose rest is the region between `// guide: begin NAME` and `// guide: end NAME` (`#` in a
///   script or a unit file) in that file, dedented;
/// - a transcript: a `console` fence of `$ command` lines, each followed by the output it prints, where `…` stands
///   for any text within a line, and a line of `…` alone for any number of lines;
/// - a snippet: a program in `Snippets/`, which `swift build` makes and a transcript runs as `$ NAME`.
///
/// `NORTHWIND_GUIDE_UPDATE=1 swift test --filter GuideTests` rewrites every excerpt from its source, and every
/// transcript whose output no longer matches with the output it now gives.
struct Guide {
    static let root: URL = {
        var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while url.path != "/" && !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url = url.deletingLastPathComponent()
        }
        return url
    }()
    static let folder = root.appendingPathComponent("docs/guide")
    static var updating: Bool { ProcessInfo.processInfo.environment["NORTHWIND_GUIDE_UPDATE"] == "1" }

    /// The chapters, in order: `NN-name.md`.
    static var chapters: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasSuffix(".md") && $0.first?.isNumber == true }
            .sorted()
    }

    static func text(_ chapter: String) throws -> String {
        try String(contentsOf: folder.appendingPathComponent(chapter), encoding: .utf8)
    }

    static func write(_ chapter: String, _ text: String) throws {
        try text.write(to: folder.appendingPathComponent(chapter), atomically: true, encoding: .utf8)
    }

    /// The snippets' names: `Snippets/NAME.swift`.
    static var snippets: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("Snippets").path)) ?? [])
            .filter { $0.hasSuffix(".swift") }
            .map { String($0.dropLast(6)) }
            .sorted()
    }
}

// MARK: - Regions in the sources

/// A region of a source file between `// guide: begin NAME` and `// guide: end NAME`.
struct Region: Equatable {
    var name: String
    /// Relative to the package's root.
    var file: String
    var code: String

    /// What the guide shows: the file's path, then the code.
    /// The fence's language: the source file's own (a systemd unit or drop-in is `ini`; a shell script, a Caddyfile
    /// or a maintainer script is `sh`, whose comments they share).
    var language: String {
        if file.hasSuffix(".sql") { return "sql" }
        if file.hasSuffix(".js") { return "js" }
        if file.hasSuffix(".swift") { return "swift" }
        if [".service", ".conf", ".network", ".preset", ".path"].contains(where: file.hasSuffix) { return "ini" }
        return "sh"
    }
    /// The region under a comment that names its file, in the file's own comment syntax.
    var excerpt: String { "\(language == "sql" ? "--" : ["sh", "ini"].contains(language) ? "#" : "//") \(file)\n\(code)" }

    /// A Swift or JavaScript comment, a SQL one (inside a SQL string or file), or a shell or unit file's `#`.
    private static var marker: Regex<(Substring, Substring, Substring)> { #/^\s*(?://|--|#)\s*guide:\s*(begin|end)\s+([A-Za-z0-9_.-]+)\s*$/# }

    /// The files that may hold regions: the Swift sources, and what ships them (build scripts, packaging, the
    /// appliance's files).
    static func quotable(_ file: String) -> Bool {
        if file.hasPrefix("Sources/") || file.hasPrefix("Snippets/") || file.hasPrefix("Tests/") {
            return file.hasSuffix(".swift") || file.hasSuffix(".sql") || file.hasSuffix(".js")
        }
        return !file.hasSuffix(".md") && !file.hasSuffix(".in") && !file.hasSuffix(".1") && !file.hasSuffix(".py")
    }

    /// The sources' regions, read once for every test that needs them.
    static let scanned = all()

    /// Every region under `Sources/`, `Snippets/` and `Tests/`, and every problem with the markers.
    static func all() -> (regions: [String: Region], problems: [String]) {
        var found: [String: Region] = [:]
        var problems: [String] = []
        for folder in ["Sources", "Snippets", "Tests", "scripts", "packaging", "appliance"] {
            let base = Guide.root.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(atPath: base.path) else { continue }
            for case let path as String in walker where quotable("\(folder)/\(path)") {
                let file = "\(folder)/\(path)"
                // These tests describe the markers; they mark nothing.
                if file.hasPrefix("Tests/GuideTests/") { continue }
                guard let text = try? String(contentsOf: base.appendingPathComponent(path), encoding: .utf8), text.contains("guide:") else {
                    continue
                }
                let (marked, trouble) = regions(in: text, file: file)
                problems += trouble
                for region in marked {
                    if let other = found[region.name] {
                        problems.append("The region \(region.name) is in both \(other.file) and \(file).")
                    }
                    found[region.name] = region
                }
            }
        }
        return (found, problems)
    }

    static func regions(in text: String, file: String) -> (regions: [Region], problems: [String]) {
        let lines = text.components(separatedBy: "\n")
        var open: [String: Int] = [:]
        var regions: [Region] = []
        var problems: [String] = []
        for (index, line) in lines.enumerated() {
            guard let match = line.wholeMatch(of: marker) else {
                if line.contains("guide: begin") || line.contains("guide: end") {
                    problems.append("\(file):\(index + 1): a guide marker must be a line of its own: // guide: begin NAME")
                }
                continue
            }
            let name = String(match.2)
            if match.1 == "begin" {
                if open[name] != nil { problems.append("\(file):\(index + 1): \(name) begins twice.") }
                open[name] = index
            } else if let start = open.removeValue(forKey: name) {
                let body = lines[(start + 1)..<index].filter { $0.wholeMatch(of: marker) == nil }
                regions.append(Region(name: name, file: file, code: dedent(body)))
            } else {
                problems.append("\(file):\(index + 1): \(name) ends but never began.")
            }
        }
        for (name, start) in open { problems.append("\(file):\(start + 1): \(name) begins but never ends.") }
        return (regions, problems)
    }

    /// The lines without the indentation they all share.
    static func dedent(_ lines: [String]) -> String {
        let indents = lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map { $0.prefix { $0 == " " }.count }
        let cut = indents.min() ?? 0
        return lines.map { $0.count >= cut ? String($0.dropFirst(cut)) : "" }.joined(separator: "\n")
    }
}

// MARK: - Blocks in a chapter

/// A fenced block in a chapter: where it is, what it says, and the include directive before it.
struct Fence {
    var info: String
    /// Line numbers (0-based) of the opening and closing fences.
    var open: Int
    var close: Int
    var body: String
    var include: String?

    static var includeDirective: Regex<(Substring, Substring)> { #/^<!--\s*include:\s*([A-Za-z0-9_.-]+)\s*-->\s*$/# }

    static func all(in text: String) -> [Fence] {
        let lines = text.components(separatedBy: "\n")
        var fences: [Fence] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            guard line.hasPrefix("```") else {
                index += 1
                continue
            }
            let info = String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces)
            var end = index + 1
            while end < lines.count && lines[end] != "```" { end += 1 }
            let previous = index > 0 ? lines[index - 1] : ""
            let include = previous.wholeMatch(of: includeDirective).map { String($0.1) }
            fences.append(
                Fence(info: info, open: index, close: end, body: lines[(index + 1)..<min(end, lines.count)].joined(separator: "\n"), include: include)
            )
            index = end + 1
        }
        return fences
    }

    /// `text` with this block's body replaced.
    func replacingBody(in text: String, with body: String) -> String {
        var lines = text.components(separatedBy: "\n")
        lines.replaceSubrange((open + 1)..<close, with: body.components(separatedBy: "\n"))
        return lines.joined(separator: "\n")
    }
}

// MARK: - Transcripts

/// A `console` block: commands and the output each should print.
struct Transcript {
    struct Step {
        var command: String
        var expected: [String]
    }

    var steps: [Step]

    init(_ body: String) {
        var steps: [Step] = []
        for line in body.components(separatedBy: "\n") {
            if line.hasPrefix("$ ") {
                steps.append(Step(command: String(line.dropFirst(2)), expected: []))
            } else if !steps.isEmpty {
                steps[steps.count - 1].expected.append(line)
            }
        }
        self.steps = steps
    }

    /// The block's text with each step's output replaced.
    static func render(_ steps: [Step]) -> String {
        steps.map { (["$ " + $0.command] + $0.expected).joined(separator: "\n") }.joined(separator: "\n")
    }

    /// A command line's words, as a shell would split them (quotes and backslashes; no expansions).
    static func words(_ command: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quote: Character?
        var inWord = false
        var escaped = false
        for character in command {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" && quote != "'" {
                escaped = true
                inWord = true
            } else if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character == " " {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }

    /// Whether `actual` matches `expected`, where `…` in a line stands for any text, and a line of `…` alone for any
    /// number of lines. Trailing spaces and trailing empty lines do not count.
    static func matches(_ expected: [String], _ actual: [String]) -> Bool {
        let expected = trimmed(expected)
        let actual = trimmed(actual)
        var memo: [Int: Bool] = [:]
        func match(_ e: Int, _ a: Int) -> Bool {
            let key = e * (actual.count + 1) + a
            if let known = memo[key] { return known }
            let result: Bool
            if e == expected.count {
                result = a == actual.count
            } else if expected[e] == "…" {
                result = match(e + 1, a) || (a < actual.count && match(e, a + 1))
            } else {
                result = a < actual.count && lineMatches(expected[e], actual[a]) && match(e + 1, a + 1)
            }
            memo[key] = result
            return result
        }
        return match(0, 0)
    }

    static func lineMatches(_ pattern: String, _ line: String) -> Bool {
        let parts = pattern.components(separatedBy: "…")
        guard parts.count > 1 else { return pattern == line }
        guard line.hasPrefix(parts[0]) else { return false }
        var rest = line.dropFirst(parts[0].count)
        for part in parts.dropFirst().dropLast() {
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        let last = parts[parts.count - 1]
        return rest.count >= last.count && rest.hasSuffix(last)
    }

    static func trimmed(_ lines: [String]) -> [String] {
        var lines = lines.map { line in
            var line = line
            while line.last == " " { line.removeLast() }
            return line
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines
    }
}
