import Foundation
import Northwind
import NorthwindStore

// Purchasing over /api/v1. Who may do what is openapi.yaml's (`x-managers-only` on send, cancel and reversal):
// any employee writes drafts and receives goods; committing money or correcting the ledger is a manager's.
extension APIHandler {
    func listPurchaseOrders(_ input: Operations.ListPurchaseOrders.Input) async throws -> Operations.ListPurchaseOrders.Output {
        let q = input.query
        var query = PurchaseOrderQuery(
            status: q.status.flatMap { PurchaseOrderStatus(rawValue: $0.rawValue) },
            supplierID: q.supplierID.map(Int64.init)
        )
        (query.limit, query.offset) = try Paging.check(limit: q.limit, offset: q.offset, cursor: nil)
        let page = try await backoffice.purchasing.list(query)
        return .ok(.init(body: .json(.init(page, Components.Schemas.PurchaseOrderSummary.init))))
    }

    func getPurchaseOrder(_ input: Operations.GetPurchaseOrder.Input) async throws -> Operations.GetPurchaseOrder.Output {
        .ok(.init(body: .json(PurchaseOrderBody(try await backoffice.purchasing.purchaseOrder(number: input.path.number)))))
    }

    func createPurchaseOrder(_ input: Operations.CreatePurchaseOrder.Input) async throws -> Operations.CreatePurchaseOrder.Output {
        let me = try APIRequest.signedIn()
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        let created = try await backoffice.purchasing.create(try body.draft, employeeID: me.employeeID)
        return .created(.init(body: .json(PurchaseOrderBody(created))))
    }

    func updatePurchaseOrder(_ input: Operations.UpdatePurchaseOrder.Input) async throws -> Operations.UpdatePurchaseOrder.Output {
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        let updated = try await backoffice.purchasing.update(number: input.path.number, try body.draft, expectedVersion: body.version)
        return .ok(.init(body: .json(PurchaseOrderBody(updated))))
    }

    func deletePurchaseOrder(_ input: Operations.DeletePurchaseOrder.Input) async throws -> Operations.DeletePurchaseOrder.Output {
        try await backoffice.purchasing.delete(number: input.path.number)
        return .noContent(.init())
    }

    func sendPurchaseOrder(_ input: Operations.SendPurchaseOrder.Input) async throws -> Operations.SendPurchaseOrder.Output {
        .ok(.init(body: .json(PurchaseOrderBody(try await backoffice.purchasing.send(number: input.path.number)))))
    }

    func cancelPurchaseOrder(_ input: Operations.CancelPurchaseOrder.Input) async throws -> Operations.CancelPurchaseOrder.Output {
        .ok(.init(body: .json(PurchaseOrderBody(try await backoffice.purchasing.cancel(number: input.path.number)))))
    }

    func receivePurchaseOrder(_ input: Operations.ReceivePurchaseOrder.Input) async throws -> Operations.ReceivePurchaseOrder.Output {
        let me = try APIRequest.signedIn()
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        let received = try await backoffice.purchasing.receive(
            number: input.path.number,
            lines: body.receiptLines,
            requestKey: body.requestKey,
            employeeID: me.employeeID,
            note: body.note
        )
        return .ok(.init(body: .json(PurchaseOrderBody(received))))
    }

    func reverseReceipt(_ input: Operations.ReverseReceipt.Input) async throws -> Operations.ReverseReceipt.Output {
        let me = try APIRequest.signedIn()
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        let reversed = try await backoffice.purchasing.reverse(receiptID: Int64(input.path.id), employeeID: me.employeeID, note: body.note)
        return .ok(.init(body: .json(PurchaseOrderBody(reversed))))
    }

    func getReorderProposal(_ input: Operations.GetReorderProposal.Input) async throws -> Operations.GetReorderProposal.Output {
        let proposals = try await backoffice.purchasing.proposal()
        return .ok(.init(body: .json(.init(proposals, targetCover: backoffice.rules.targetCover))))
    }

    func draftReorderProposal(_ input: Operations.DraftReorderProposal.Input) async throws -> Operations.DraftReorderProposal.Output {
        let me = try APIRequest.signedIn()
        let drafts = try await backoffice.purchasing.draftsFromProposal(employeeID: me.employeeID)
        return .created(.init(body: .json(.init(items: drafts.map(PurchaseOrderBody.init)))))
    }
}
