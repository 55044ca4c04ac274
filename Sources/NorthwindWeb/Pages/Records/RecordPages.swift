import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// Every category, with its picture.
struct CategoriesPage: PageModel {
    struct Row {
        var id: Int64
        var name: String
        var description: String
        var hasPicture: Bool
    }
    var categories: [Row]
    var me: PageUser?
}

/// One category and its products.
struct CategoryPage: PageModel {
    struct Header {
        var id: Int64
        var name: String
        var description: String
    }
    struct Product {
        var id: Int64
        var name: String
        var unitPrice: String
        var unitsInStock: Int
    }
    var category: Header
    var hasPicture: Bool
    var products: [Product]
    var me: PageUser?
}

/// A customer's details, in a list or on their page.
struct CustomerView {
    var code: String
    var companyName: String
    var contactName: String
    var contactTitle: String
    var address: String
    var city: String
    var region: String
    var postalCode: String
    var country: String
    var phone: String
    var fax: String

    init(_ customer: Customer) {
        code = customer.code
        companyName = customer.companyName
        contactName = customer.contactName ?? ""
        contactTitle = customer.contactTitle ?? ""
        address = customer.address ?? ""
        city = customer.city ?? ""
        region = customer.region ?? ""
        postalCode = customer.postalCode ?? ""
        country = customer.country ?? ""
        phone = customer.phone ?? ""
        fax = customer.fax ?? ""
    }
}

/// Customers: a lookup or a page of all of them.
struct CustomersPage: PageModel {
    var q: String
    var customers: [CustomerView]
    var pager: Pager?
    var me: PageUser?
}

/// One customer and their orders.
struct CustomerPage: PageModel {
    var customer: CustomerView
    var orders: [OrderSummaryView]
    var me: PageUser?
}

/// Every employee, with their photo.
struct EmployeesPage: PageModel {
    struct Row {
        var id: Int64
        var name: String
        var title: String
        var hasPhoto: Bool
    }
    var employees: [Row]
    var me: PageUser?
}

/// One employee and whom they report to.
struct EmployeePage: PageModel {
    struct Details {
        var id: Int64
        var title: String
        var hireDate: String
        var city: String
        var country: String
        var `extension`: String
        var notes: String
    }
    struct Manager {
        var id: Int64
        var name: String
    }
    var employee: Details
    var name: String
    var hasPhoto: Bool
    var manager: Manager?
    var me: PageUser?
}

extension PageRoutes {
    @Sendable func categories(_ request: Request, context: WebContext) async throws -> Response {
        let categories = try backoffice.catalogue.categories().map { category in
            CategoriesPage.Row(id: category.id, name: category.name, description: category.detail ?? "", hasPicture: category.hasImage)
        }
        return render("categories", CategoriesPage(categories: categories), context: context)
    }

    @Sendable func category(_ request: Request, context: WebContext) async throws -> Response {
        let id = try context.pathID()
        let category = try backoffice.records.find(NorthwindStore.Category.self, id: id)
        let products = try await backoffice.catalogue.products(categoryID: id)
        let model = CategoryPage(
            category: .init(id: id, name: category.name, description: category.description ?? ""),
            hasPicture: try backoffice.catalogue.hasPicture(id: id),
            products: products.map {
                CategoryPage.Product(id: $0.id ?? 0, name: $0.name, unitPrice: $0.unitPrice.shown, unitsInStock: $0.unitsInStock)
            }
        )
        return render("category", model, context: context)
    }

    @Sendable func categoryPicture(_ request: Request, context: WebContext) async throws -> Response {
        try binary(try await backoffice.catalogue.picture(categoryID: try context.pathID()))
    }

    @Sendable func customers(_ request: Request, context: WebContext) async throws -> Response {
        var parser = FieldParser()
        let pageSize = env.pageSize
        let page = parser.page(request, pageSize: pageSize)
        try parser.throwIfAny()
        let customers: [Customer]
        var pagerView: Pager?
        if let text = request.query("q") {
            customers = try await backoffice.people.searchCustomers(text, limit: 100)
        } else {
            let result = try await backoffice.records.list(Customer.self, limit: pageSize, offset: (page - 1) * pageSize)
            customers = result.items
            pagerView = pager(request, page: page, total: result.total, pageSize: pageSize)
        }
        let model = CustomersPage(q: request.query("q") ?? "", customers: customers.map(CustomerView.init), pager: pagerView)
        return render("customers", model, context: context)
    }

    @Sendable func customer(_ request: Request, context: WebContext) async throws -> Response {
        let customer = try backoffice.people.customer(code: try context.pathString("code"))
        let orders = try await backoffice.orders.history(customerID: customer.id ?? 0)
        return render("customer", CustomerPage(customer: CustomerView(customer), orders: orders.map(OrderSummaryView.init)), context: context)
    }

    @Sendable func employees(_ request: Request, context: WebContext) async throws -> Response {
        let employees = try backoffice.people.employees().map { employee in
            EmployeesPage.Row(id: employee.id, name: employee.name, title: employee.detail ?? "", hasPhoto: employee.hasImage)
        }
        return render("employees", EmployeesPage(employees: employees), context: context)
    }

    @Sendable func employee(_ request: Request, context: WebContext) async throws -> Response {
        let id = try context.pathID()
        let employee = try backoffice.records.find(Employee.self, id: id)
        let manager = try employee.reportsTo.map { try backoffice.records.find(Employee.self, id: $0) }
        let model = EmployeePage(
            employee: .init(
                id: id,
                title: employee.title ?? "",
                hireDate: employee.hireDate?.description ?? "",
                city: employee.city ?? "",
                country: employee.country ?? "",
                extension: employee.extension ?? "",
                notes: employee.notes ?? ""
            ),
            name: employee.fullName,
            hasPhoto: try backoffice.people.hasPhoto(id: id),
            manager: manager.map { EmployeePage.Manager(id: $0.id ?? 0, name: $0.fullName) }
        )
        return render("employee", model, context: context)
    }

    @Sendable func employeePhoto(_ request: Request, context: WebContext) async throws -> Response {
        try binary(try await backoffice.people.photo(employeeID: try context.pathID()))
    }
}
