import GRDB

extension Schema {
    /// Each zone's checksum, kept as the server keeps it, so that the end of a catch-up compares a number instead of
    /// hashing every record of the zone inside the write transaction (it grew with the zone: a shop's own zone gains
    /// every order's rows). A record's part is its `checksum` column, which the only writer of `sync_records` (the
    /// domain's `saveBase`) computes; triggers XOR it into and out of `sync_zone_sums`, so a deletion from anywhere,
    /// a hand edit included, is counted too. A zone without a row here is unknown: the next comparison computes it
    /// from the records and stores it. Rows from before this migration have no `checksum` yet, and writing one
    /// without it makes its zone unknown again.
    static func v31ZoneSums(_ db: Database) throws {
        let xorOld = "(sum | OLD.checksum) & ~(sum & OLD.checksum)"
        let xorNew = "(sum | NEW.checksum) & ~(sum & NEW.checksum)"
        try db.execute(
            sql: """
                ALTER TABLE sync_records ADD COLUMN checksum INTEGER;
                CREATE TABLE sync_zone_sums (zoneName TEXT PRIMARY KEY NOT NULL, sum INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TRIGGER sync_records_sum_insert AFTER INSERT ON sync_records BEGIN
                  UPDATE sync_zone_sums SET sum = \(xorNew) WHERE zoneName = NEW.zoneName AND NEW.checksum IS NOT NULL;
                  DELETE FROM sync_zone_sums WHERE zoneName = NEW.zoneName AND NEW.checksum IS NULL;
                END;
                CREATE TRIGGER sync_records_sum_update AFTER UPDATE ON sync_records BEGIN
                  UPDATE sync_zone_sums SET sum = \(xorOld) WHERE zoneName = OLD.zoneName AND OLD.checksum IS NOT NULL;
                  DELETE FROM sync_zone_sums WHERE zoneName = OLD.zoneName AND OLD.checksum IS NULL;
                  UPDATE sync_zone_sums SET sum = \(xorNew) WHERE zoneName = NEW.zoneName AND NEW.checksum IS NOT NULL;
                  DELETE FROM sync_zone_sums WHERE zoneName = NEW.zoneName AND NEW.checksum IS NULL;
                END;
                CREATE TRIGGER sync_records_sum_delete AFTER DELETE ON sync_records BEGIN
                  UPDATE sync_zone_sums SET sum = \(xorOld) WHERE zoneName = OLD.zoneName AND OLD.checksum IS NOT NULL;
                  DELETE FROM sync_zone_sums WHERE zoneName = OLD.zoneName AND OLD.checksum IS NULL;
                END;
                """
        )
    }
}
