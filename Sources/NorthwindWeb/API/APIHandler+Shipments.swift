import Foundation
import Northwind
import NorthwindStore

extension APIHandler {
    func getOrderFulfilment(_ input: Operations.GetOrderFulfilment.Input) async throws -> Operations.GetOrderFulfilment.Output {
        .ok(.init(body: .json(.init(try await backoffice.orders.fulfilment(number: input.path.number)))))
    }

    func shipOrder(_ input: Operations.ShipOrder.Input) async throws -> Operations.ShipOrder.Output {
        let me = try APIRequest.signedIn()
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        let date = try body.date
        let shipped =
            body.available
            ? try await backoffice.orders.shipAvailable(
                number: input.path.number,
                employeeID: me.employeeID,
                shippedDate: date,
                requestKey: body.requestKey
            )
            : try await backoffice.orders.ship(
                number: input.path.number,
                lines: body.shipLines,
                employeeID: me.employeeID,
                shippedDate: date,
                requestKey: body.requestKey
            )
        return .ok(.init(body: .json(ShipmentBody(shipped))))
    }

    func getShipment(_ input: Operations.GetShipment.Input) async throws -> Operations.GetShipment.Output {
        .ok(.init(body: .json(ShipmentBody(try await backoffice.orders.shipment(orderNumber: input.path.number, sequence: input.path.sequence)))))
    }

    func listBackorders(_ input: Operations.ListBackorders.Input) async throws -> Operations.ListBackorders.Output {
        let (limit, offset) = try Paging.check(limit: input.query.limit, offset: input.query.offset, cursor: nil)
        let page = try await backoffice.orders.backorders(limit: limit, offset: offset)
        return .ok(.init(body: .json(.init(page, Components.Schemas.Backorder.init))))
    }
}
