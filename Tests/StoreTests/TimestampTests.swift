import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import NorthwindStore
@testable import NorthwindTestSupport

@Suite("One clock")
struct TimestampTests {
    @Test func printsUTCWithMilliseconds() {
        // Given a moment Foundation's own ISO 8601 formatter names
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let date = formatter.date(from: "2026-11-23T09:41:07.123Z")!
        // When it becomes a timestamp
        let timestamp = Timestamp(date)
        // Then its text is the same, to the millisecond
        #expect(timestamp.description == "2026-11-23T09:41:07.123Z")
    }

    @Test func readsWhatItPrintsAcrossFourCenturies() {
        // Given moments spread from 1900 to 2300, seeded
        var random = SeededRandom(seed: 7)
        for _ in 0..<2_000 {
            let milliseconds = Int64.random(in: -2_208_988_800_000...10_413_792_000_000, using: &random)
            let timestamp = Timestamp(milliseconds: milliseconds)
            // When its text is read back
            let read = Timestamp(timestamp.description)
            // Then it is the same moment, and Foundation agrees on the text
            #expect(read == timestamp, "seed 7: \(milliseconds)")
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            #expect(formatter.string(from: timestamp.date) == timestamp.description, "seed 7: \(milliseconds)")
        }
    }

    @Test func textOrderIsTimeOrder() {
        // Given moments around the turn of a year, a millisecond apart and a second apart
        let base = Timestamp("2026-12-31T23:59:59.998Z")!
        let moments = [0, 1, 2, 1000, 1001].map { Timestamp(milliseconds: base.milliseconds + $0) }
        // Then sorting their text sorts them in time
        #expect(moments.map(\.description).sorted() == moments.sorted().map(\.description))
        #expect(moments[2].description == "2027-01-01T00:00:00.000Z")
    }

    @Test func refusesTextThatIsNotAUTCMoment() {
        // Then local times, impossible dates and missing parts are refused
        for text in [
            "2026-11-23 09:41:07", "2026-11-23T09:41:07+01:00", "2026-02-30T00:00:00.000Z", "2026-11-23T24:00:00Z", "2026-11-23T09:41Z",
            "2026-11-23T09:41:07.1234Z", "",
        ] {
            #expect(Timestamp(text) == nil, "\(text)")
        }
        // And the form without a fraction, as older rows have it, is read
        #expect(Timestamp("2026-11-23T09:41:07Z")?.description == "2026-11-23T09:41:07.000Z")
    }

    @Test func sqlDefaultsWriteTheSameText() throws {
        // Given a store
        let store = try TemporaryStore()
        // When SQL writes the time now, as column defaults do
        let text = try store.store.pool.read { db in try String.fetchOne(db, sql: "SELECT \(Timestamp.sqlNow)") ?? "" }
        // Then it reads as a timestamp and prints back unchanged
        let timestamp = try #require(Timestamp(text))
        #expect(timestamp.description == text)
        #expect(abs(timestamp.milliseconds - Timestamp.now.milliseconds) < 60_000)
    }

    @Test func migrationRewritesOlderSessionExpiryInTheOneFormat() throws {
        // Given a store file at v6 with a session whose expiry was written without milliseconds
        let old = try OldStoreFile(upTo: "v6: line amounts checked by triggers") { db in
            try db.execute(sql: "INSERT INTO employees (id, recordID, lastName, firstName) VALUES (1, 'e1', 'Davolio', 'Nancy')")
            try db.execute(
                sql: "INSERT INTO access_tokens (tokenHash, employeeID, kind, expiresAt) VALUES ('h', 1, 'session', '2026-11-23T09:41:07Z')"
            )
        }
        // When the app opens it
        let store = try Store(StoreConfiguration(path: old.path))
        // Then the expiry is in the one format, at the same moment
        let expiry = try store.pool.read { db in try String.fetchOne(db, sql: "SELECT expiresAt FROM access_tokens") }
        #expect(expiry == "2026-11-23T09:41:07.000Z")
    }

    @Test func datesAndTimestampsTravelAsTheirText() throws {
        // Given a day and a moment inside a JSON object
        struct Both: Codable, Equatable {
            var day: LocalDate
            var at: Timestamp
        }
        let value = Both(day: LocalDate("2026-11-23")!, at: Timestamp("2026-11-23T09:41:07.123Z")!)
        // When it is encoded and read back
        let json = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        // Then each is its text, and reads back the same
        #expect(json.contains(#""day":"2026-11-23""#) && json.contains(#""at":"2026-11-23T09:41:07.123Z""#))
        #expect(try JSONDecoder().decode(Both.self, from: Data(json.utf8)) == value)
        // And a text in another form is refused, saying which form it takes
        let bad = Data(#"{"day":"23/11/2026","at":"2026-11-23T09:41:07.123Z"}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Both.self, from: bad) }
    }
}
