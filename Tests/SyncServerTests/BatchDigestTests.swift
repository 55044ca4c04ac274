import Foundation
import SyncAPI
import Testing

@testable import SyncServer

/// A batch's digest is stored beside its answer and compared with the digest of a batch sent again under the same
/// ID, by whichever version of the server is running then: its bytes may never change.
struct BatchDigestTests {
    @Test func aBatchsDigestIsTheSHA256OfItsDocumentedBytes() throws {
        // Given a batch whose records' fields arrive out of name order, with an escape, a reference, a NULL and a stamp
        let body = #"""
            {"clientID":"c","batchID":"b","atomic":false,"operations":[
            {"opID":"o1","operationType":"create","record":{"recordName":"r1","recordType":"Product","zoneID":{"zoneName":"catalogue"},
             "fields":{"name":{"type":"STRING","value":"Chai \"tea\""},"category":{"type":"REFERENCE","value":{"recordName":"c1","zoneName":"catalogue"}}}}},
            {"opID":"o2","operationType":"update","record":{"recordName":"r2","recordType":"Product","zoneID":{"zoneName":"catalogue"},
             "recordChangeTag":"7","modified":{"timestamp":1700000000000,"site":"HQ"},
             "fields":{"price":{"type":"DECIMAL","value":"18.00"},"note":{"type":"NULL"}}}}]}
            """#
        let request = try ModifyRequest.decode(Data(body.utf8))
        // When it is digested
        let digest = ModifyAnswer.digest(request)
        // Then it is the SHA-256 of "each\n", then per operation its ID, NUL, type, NUL, the record's JSON with the
        // fields in name order, and a newline (computed outside Swift, with Python's hashlib, from those bytes)
        #expect(digest == "5bae5f6768cb781f27d625fbda0b96b0c28fd113c83b0084b85a8523714c4e60")
    }
}
