import GRDB

extension Schema {
    /// Offers of lost records (sync). When a site and the sync server have both lost a version of one of the site's
    /// records (both restored from backups older than it), another installation may still hold it, but may not
    /// write it into the site's zone. It offers it instead, in its own zone: `record_offers` holds the record as
    /// held there. The zone's owner answers in its own zone (`record_offer_answers`): it takes the record back as its
    /// own change when every value it lacks was written by it in a period it lost, and refuses it otherwise.
    /// `site` is the zone's owner that wrote the row, which the sync server checks.
    static func v25RecordOffers(_ db: Database) throws {
        let recordID = "recordID TEXT NOT NULL UNIQUE DEFAULT \(uuidExpression)"
        try db.execute(
            sql: """
                CREATE TABLE record_offers (
                  id INTEGER PRIMARY KEY, \(recordID),
                  site TEXT NOT NULL CHECK (length(site) BETWEEN 1 AND 40),
                  zoneName TEXT NOT NULL CHECK (length(zoneName) BETWEEN 1 AND 64),
                  recordType TEXT NOT NULL CHECK (length(recordType) BETWEEN 1 AND 64),
                  recordName TEXT NOT NULL CHECK (length(recordName) BETWEEN 1 AND 255),
                  changeTag TEXT NOT NULL CHECK (length(changeTag) <= 255),
                  body TEXT NOT NULL CHECK (length(body) BETWEEN 2 AND 400000),
                  createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                  UNIQUE (site, zoneName, recordName, changeTag));
                CREATE INDEX record_offers_on_zoneName ON record_offers(zoneName, recordName);
                CREATE TABLE record_offer_answers (
                  id INTEGER PRIMARY KEY, \(recordID),
                  site TEXT NOT NULL CHECK (length(site) BETWEEN 1 AND 40),
                  offerID INTEGER NOT NULL REFERENCES record_offers(id) ON DELETE CASCADE,
                  accepted INTEGER NOT NULL CHECK (accepted IN (0, 1)),
                  reason TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
                  createdAt TEXT NOT NULL DEFAULT (\(Timestamp.sqlNow)),
                  UNIQUE (offerID, site));
                """
        )
        for table in ["record_offers", "record_offer_answers"] {
            try db.execute(sql: changeLogTriggers(table))
        }
    }
}
