import Foundation
import Testing

/// What each page template reads, checked against the Swift type it is rendered with: a key the model lacks renders
/// as nothing, silently, so a renamed property would empty a page without an error anywhere.
@Suite("Template keys")
struct TemplateKeysTests {
    /// Every struct, class and enum in the sources with its instance properties (stored or computed, extensions
    /// included): property name → the type as written.
    static func types() throws -> [String: [String: String]] {
        var types: [String: [String: String]] = [:]
        for target in try Layout.targets() where target != "Snippets" {
            for file in try Layout.files(of: target) {
                var stack: [(name: String, indent: Int)] = []
                for line in file.lines {
                    let indent = line.prefix { $0 == " " }.count
                    if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                        while let last = stack.last, indent <= last.indent, !line.dropFirst(indent).hasPrefix("}") || indent < last.indent {
                            stack.removeLast()
                        }
                    }
                    if let match = line.firstMatch(
                        of:
                            /^(\s*)(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|package|final)\s+)*(?:struct|class|enum|extension|actor)\s+([\w.]+)/
                    ) {
                        stack.append((String(match.2.split(separator: ".").last ?? match.2), match.1.count))
                        types[stack.last!.name, default: [:]] = types[stack.last!.name, default: [:]]
                    } else if let type = stack.last, indent == type.indent + 4,
                        let match = line.firstMatch(
                            of:
                                /^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|package|nonisolated|lazy|weak)(?:\(set\))?\s+)*(?:var|let)\s+`?(\w+)`?\s*(?::\s*([^={]+))?/
                        )
                    {
                        // A property without its type written (`var shown = 0`) is a value, not an object to read into.
                        types[type.name, default: [:]][String(match.1)] = match.2.map { $0.trimmingCharacters(in: .whitespaces) } ?? "Value"
                    }
                }
            }
        }
        return types
    }

    /// Template name → the type `render` is given for it, read from the render calls.
    static func models() throws -> [String: String] {
        var models: [String: String] = [:]
        for file in try Layout.files(of: "NorthwindWeb") {
            for (number, line) in file.lines.enumerated() {
                let call =
                    line.firstMatch(of: /render\("(\w+)",\s*(\w+)/).map { (String($0.1), String($0.2)) }
                    ?? line.firstMatch(of: /render\((\w+),\s*withTemplate:\s*"(\w+)"/).map { (String($0.2), String($0.1)) }
                guard let (template, argument) = call else { continue }
                if argument.first?.isUppercase == true {
                    models[template] = argument
                    continue
                }
                // A variable: its declaration above, in the same function.
                for earlier in file.lines[..<number].reversed().prefix(60) {
                    if let declared = earlier.firstMatch(of: try Regex("(?:let|var)\\s+\(argument)\\s*(?::\\s*|=\\s*)(\\w+)")),
                        let type = declared.output[1].substring, type != argument
                    {
                        models[template] = String(type)
                        break
                    }
                    if let parameter = earlier.firstMatch(of: try Regex("\\b\(argument):\\s*(\\w+)")) {
                        models[template] = String(parameter.output[1].substring ?? "")
                        break
                    }
                }
            }
        }
        return models
    }

    /// The type a property holds, or its elements: `[ProductView]?` → `ProductView`. nil for a dictionary.
    static func element(_ written: String) -> String? {
        if written.contains(":") { return nil }
        let bare = written.trimmingCharacters(in: CharacterSet(charactersIn: "[]?! "))
        let name = bare.split(separator: "<").first ?? Substring(bare)
        return String(name.split(separator: ".").last ?? name)
    }

    struct Checker {
        let types: [String: [String: String]]
        let templates: URL
        var missing: [String] = []
        var checkedKeys = 0

        /// A context the check can read: a known type, or nil for one it cannot see into (a dictionary, a type of
        /// another package), where any key is taken as found.
        func find(_ path: String, in stack: [String?]) -> (found: Bool, type: String?) {
            let parts = path.split(separator: ".").map(String.init)
            guard let first = parts.first else { return (true, nil) }
            for context in stack.reversed() {
                guard let context else { return (true, nil) }
                guard let written = types[context]?[first] else { continue }
                var type = Self.element(written, types)
                for part in parts.dropFirst() {
                    guard let current = type else { return (true, nil) }
                    guard let next = types[current]?[part] else { return (false, nil) }
                    type = Self.element(next, types)
                }
                return (true, type)
            }
            return (false, nil)
        }

        static func element(_ written: String, _ types: [String: [String: String]]) -> String? {
            guard let name = TemplateKeysTests.element(written), let properties = types[name], !properties.isEmpty else { return nil }
            return name
        }

        mutating func check(_ template: String, stack: [String?], depth: Int = 0) throws {
            guard depth < 8 else { return }
            let text = try String(contentsOf: templates.appendingPathComponent("\(template).mustache"), encoding: .utf8)
            var stack = stack
            var sections: [Bool] = []  // whether each open section pushed a context
            for tag in text.matches(of: /\{\{\{?\s*([#^\/&!<>$]?)\s*([^}]*?)\s*\}?\}\}/) {
                let (sigil, body) = (String(tag.1), String(tag.2))
                // A transform names its argument in brackets: `{{ uppercased(name) }}`.
                let name = body.firstMatch(of: /\w+\(([^)]*)\)/).map { String($0.1) } ?? body
                switch sigil {
                case "!": continue
                case ">", "<": try check(name, stack: stack, depth: depth + 1)
                case "$": sections.append(false)
                case "/":
                    if sections.popLast() == true { stack.removeLast() }
                case "#", "^":
                    let (found, type) = name == "." ? (true, nil) : find(name, in: stack)
                    checkedKeys += 1
                    if !found { missing.append("\(template).mustache: {{\(sigil)\(name)}} in \(stack.compactMap { $0 }.last ?? "?")") }
                    // A section over a list or an object reads inside it; over a Bool, or inverted, it stays here.
                    if sigil == "#", let type {
                        stack.append(type)
                    } else if sigil == "#", found, name != "." {
                        sections.append(false)
                        continue
                    } else {
                        sections.append(false)
                        continue
                    }
                    sections.append(true)
                default:
                    guard name != ".", !["first", "last", "index", "even", "odd"].contains(name) else { continue }
                    checkedKeys += 1
                    if !find(name, in: stack).found { missing.append("\(template).mustache: {{\(name)}} in \(stack.compactMap { $0 }.last ?? "?")") }
                }
            }
        }
    }

    @Test func everyKeyATemplateReadsIsAPropertyOfItsModel() throws {
        // Given each page template and the type it is rendered with
        let models = try Self.models()
        #expect(models.count >= 20, "\(models)")
        var checker = Checker(types: try Self.types(), templates: Layout.root.appendingPathComponent("Sources/NorthwindWeb/Templates"))
        // When every tag of each (with its layout and partials) is resolved against that type and the sections around it
        for (template, model) in models.sorted(by: { $0.key < $1.key }) {
            #expect(checker.types[model] != nil, "\(template) is rendered with \(model), which the sources do not declare")
            try checker.check(template, stack: [model])
        }
        // Then every key is a property a page can fill
        #expect(checker.checkedKeys > 200)
        #expect(checker.missing.isEmpty, "Keys no model has:\n\(Set(checker.missing).sorted().joined(separator: "\n"))")
    }

    @Test func everyHandWrittenLookupNamesEachPropertyOnce() throws {
        // Given the models that answer Mustache by name, without reflection (`MustacheParent`), for speed
        let types = try Self.types()
        var checked = 0
        var drift: [String] = []
        for file in try Layout.files(of: "NorthwindWeb") {
            var current: String?
            var named: [String] = []
            for line in file.lines {
                if let match = line.firstMatch(of: /^extension ([\w.]+): MustacheParent/) {
                    current = String(match.1.split(separator: ".").last ?? match.1)
                    named = []
                } else if current != nil, let match = line.firstMatch(of: /^\s*case "(\w+)":\s*(?:self\.)?(\w+)/) {
                    // Each name must give the property of the same name, not another one.
                    if match.1 != match.2 { drift.append("\(file.path): \"\(match.1)\" gives \(match.2)") }
                    named.append(String(match.1))
                } else if let type = current, line.hasPrefix("}") {
                    // When its lookup is compared with its properties
                    let properties = Set(types[type, default: [:]].keys)
                    if Set(named) != properties || named.count != Set(named).count {
                        drift.append("\(type): names \(named.sorted()), properties \(properties.sorted())")
                    }
                    checked += 1
                    current = nil
                }
            }
        }
        // Then each lookup names every property, once, and nothing else: a new field cannot be left out of a page
        #expect(checked >= 5)
        #expect(drift.isEmpty, "\(drift.joined(separator: "\n"))")
    }
}
