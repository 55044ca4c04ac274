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

extension APIHandler {
    func takeReturn(_ input: Operations.TakeReturn.Input) async throws -> Operations.TakeReturn.Output {
        let me = try APIRequest.signedIn()
        guard case let .json(body) = input.body else { preconditionFailure("JSON is the only body") }
        let returned = try await backoffice.invoicing.takeReturn(
            orderNumber: input.path.number,
            shipmentSequence: input.path.sequence,
            lines: body.returnLines,
            reason: body.reason,
            returnedDate: try body.date,
            employeeID: me.employeeID,
            requestKey: body.requestKey
        )
        return .ok(.init(body: .json(.init(returned))))
    }

    func listOrderReturns(_ input: Operations.ListOrderReturns.Input) async throws -> Operations.ListOrderReturns.Output {
        let list = try await backoffice.invoicing.returns(orderNumber: input.path.number)
        return .ok(.init(body: .json(.init(items: list.map(Components.Schemas.Return.init)))))
    }

    func listInvoices(_ input: Operations.ListInvoices.Input) async throws -> Operations.ListInvoices.Output {
        let (limit, offset) = try Paging.check(limit: input.query.limit, offset: input.query.offset, cursor: nil)
        let list = try await backoffice.invoicing.invoices(
            customerCode: input.query.customer,
            orderNumber: input.query.order,
            limit: limit,
            offset: offset
        )
        return .ok(.init(body: .json(.init(items: list.map(Components.Schemas.InvoiceSummary.init)))))
    }

    func getInvoice(_ input: Operations.GetInvoice.Input) async throws -> Operations.GetInvoice.Output {
        let p = input.path
        return .ok(
            .init(
                body: .json(InvoiceBody(try await backoffice.invoicing.invoice(kind: p.kind.domain, site: p.site, year: p.year, counter: p.counter)))
            )
        )
    }
}
