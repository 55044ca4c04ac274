import Foundation

// How amounts are written for people, the same on pages, on the command line and in printable documents.

/// "1 change", "3 changes".
public func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
    "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
}

/// A discount as a line shows it: "15%", and nothing for none.
public func discountText(_ discount: Double) -> String {
    discount == 0 ? "" : "\(Int((discount * 100).rounded()))%"
}

/// A size as people read it: "512 bytes", "840 KiB", "12.5 MiB".
public func byteText(_ bytes: Int64) -> String {
    if bytes < 1024 { return "\(bytes) bytes" }
    if bytes < 1_048_576 { return String(format: "%.0f KiB", (Double(bytes) / 1024).rounded(.up)) }
    return String(format: "%.1f MiB", Double(bytes) / 1_048_576)
}
