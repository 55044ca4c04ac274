import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// Every supplier.
struct SuppliersPage: PageModel {
    struct Row {
        var id: Int64
        var companyName: String
        var contactName: String
        var city: String
        var country: String
        var phone: String
    }
    var suppliers: [Row]
    var pager: Pager?
    var me: PageUser?
}

/// One supplier, its open purchase orders and its products.
struct SupplierPage: PageModel {
    struct Details {
        var id: Int64
        var companyName: String
        var contact: String
        var address: String
        var phone: String
        var homePage: String
    }
    struct Product {
        var id: Int64
        var name: String
        var unitsInStock: Int
        var unitsOnOrder: Int
        var reorderLevel: Int
    }
    var supplier: Details
    var orders: [PurchaseSummaryView]
    var openText: String
    var products: [Product]
    var me: PageUser?
}

extension PageRoutes {
    @Sendable func suppliers(_ request: Request, context: WebContext) async throws -> Response {
        var parser = FieldParser()
        let pageSize = env.pageSize
        let page = parser.page(request, pageSize: pageSize)
        try parser.throwIfAny()
        let result = try await backoffice.records.list(Supplier.self, limit: pageSize, offset: (page - 1) * pageSize)
        let rows = result.items.map { supplier in
            SuppliersPage.Row(
                id: supplier.id ?? 0,
                companyName: supplier.companyName,
                contactName: supplier.contactName ?? "",
                city: supplier.city ?? "",
                country: supplier.country ?? "",
                phone: supplier.phone ?? ""
            )
        }
        return render(
            "suppliers",
            SuppliersPage(suppliers: rows, pager: pager(request, page: page, total: result.total, pageSize: pageSize)),
            context: context
        )
    }

    @Sendable func supplier(_ request: Request, context: WebContext) async throws -> Response {
        let id = try context.pathID()
        let supplier = try backoffice.records.find(Supplier.self, id: id)
        var query = PurchaseOrderQuery(supplierID: id)
        query.awaiting = true
        query.limit = 200
        let open = try await backoffice.purchasing.list(query)
        var products = ProductQuery()
        products.supplierID = id
        products.limit = 200
        let contact = [supplier.contactName, supplier.contactTitle].compactMap { $0 }.joined(separator: ", ")
        let address = [
            supplier.address, [supplier.postalCode, supplier.city].compactMap { $0 }.joined(separator: " "), supplier.region, supplier.country,
        ]
        .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ", ")
        let model = SupplierPage(
            supplier: .init(
                id: id,
                companyName: supplier.companyName,
                contact: contact,
                address: address,
                phone: supplier.phone ?? "",
                homePage: supplier.homePage ?? ""
            ),
            orders: open.items.map(PurchaseSummaryView.init),
            openText: open.total == 1 ? "1 open purchase order" : "\(open.total) open purchase orders",
            products: try await backoffice.catalogue.list(products).items.map { row in
                SupplierPage.Product(
                    id: row.product.id ?? 0,
                    name: row.product.name,
                    unitsInStock: row.product.unitsInStock,
                    unitsOnOrder: row.product.unitsOnOrder,
                    reorderLevel: row.product.reorderLevel
                )
            }
        )
        return render("supplier", model, context: context)
    }
}
