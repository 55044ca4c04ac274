import Foundation
import GRDB
import Northwind
import NorthwindStore
import NorthwindSync
import Testing

@testable import NorthwindTestSupport

/// A customer deleted at one shop while another takes an order for it: the order keeps its customer, whichever of
/// the deletion and the order reaches an installation first.
@Suite("A deleted parent and a late child", .serialized)
struct DeletedParentSyncTests {
    @Test func anOrderThatArrivesAfterItsCustomersDeletionBringsTheCustomerBack() async throws {
        // Given a customer made at one shop and fetched by head office and a second shop, which takes an order for
        // it, sends it, and then goes quiet for good
        let company = try Company()
        try await company.start(shops: ["oxf", "cam"])
        let customer = try await company.open("cam").records.create(Customer(code: "LATE", companyName: "Deleted while ordered"))
        try await company.sync("cam")
        try await company.sync("hq")
        try await company.sync("oxf")
        let oxf = try company.open("oxf")
        let productID = try #require(try await oxf.catalogue.list().items.first { !$0.product.discontinued }?.product.id)
        let order = try await oxf.orders.create(
            OrderDraft(customerCode: "LATE", employeeID: nil, lines: [OrderLineDraft(productID: productID, quantity: 1)])
        ).order.number
        try await company.sync("oxf")
        // When the first shop, which has not seen the order, deletes the customer and sends that, and then head
        // office and that shop sync
        let cam = try company.open("cam")
        try await cam.records.delete(Customer.self, id: try #require(customer.id))
        try await company.sync("cam")
        try await company.sync("hq")
        try await company.sync("cam")
        let hqReport = try await company.sync("hq")
        let camReport = try await company.sync("cam")
        // Then head office holds the order with its customer, brought back and sent again, and says so in its inbox
        let hq = try company.open("hq")
        #expect(try await hq.orders.order(number: order).order.customerID == (try hq.people.customer(code: "LATE").id))
        let reasons = try await hq.sync.conflicts(all: true).map(\.reason)
        #expect(reasons.contains { $0.contains("refers to it: brought back") }, "\(reasons)")
        // And the shop that deleted it has it back with the order; nothing waits anywhere
        #expect(try await company.open("cam").orders.order(number: order).order.customerID == (try cam.people.customer(code: "LATE").id))
        #expect(hqReport.waiting == 0)
        #expect(camReport.waiting == 0)
    }
}
