/// A certificate's SHA-256 fingerprint as people copy it from a console or a browser.
public enum CertificateFingerprint {
    /// 64 lowercase hexadecimal digits, from "AB:CD:…", "abcd…", spaced, or prefixed "sha256/" or
    /// "SHA256 Fingerprint=" (openssl's form); nil when it is not a SHA-256 fingerprint.
    public static func normalised(_ fingerprint: String) -> String? {
        var text = fingerprint.lowercased()
        for prefix in ["sha256 fingerprint=", "sha256:", "sha256/", "sha256="] where text.hasPrefix(prefix) {
            text.removeFirst(prefix.count)
        }
        let digits = text.filter { $0 != ":" && !$0.isWhitespace }
        guard digits.count == 64, digits.allSatisfy(\.isHexDigit) else { return nil }
        return digits
    }

    /// As consoles and browsers show it: "AB:CD:…".
    public static func display(_ hex: String) -> String {
        stride(from: 0, to: hex.count, by: 2).map { offset in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return hex[start..<hex.index(start, offsetBy: 2)].uppercased()
        }.joined(separator: ":")
    }

    /// What a person is told when what they gave is not one.
    public static func problem(_ given: String) -> String {
        "\(given) is not a SHA-256 fingerprint: give the 64 hexadecimal digits head office's console shows (in pairs "
            + "separated by colons, such as 3A:F2:…)."
    }
}
