import Foundation
import GRDB
import NorthwindLoading
import NorthwindStore
import Testing

@testable import Northwind

/// A small known world: two categories, a supplier, four products, two customers, two employees and a shipper.
struct World {
    var beverages: Category
    var condiments: Category
    var supplier: Supplier
    /// 50 in stock, 18.00.
    var chai: Product
    /// 10 in stock, 263.50, with an accented name.
    var cote: Product
    /// 5 in stock, reorder level 10: low stock.
    var mustard: Product
    /// Discontinued, 20 in stock.
    var oldTea: Product
    var vinet: Customer
    var alfki: Customer
    var nancy: Employee
    var andrew: Employee
    var shipper: Shipper

    static func make(_ b: Backoffice) async throws -> World {
        let beverages = try await b.records.create(Category(name: "Beverages", description: "Soft drinks, coffees, teas"))
        let condiments = try await b.records.create(Category(name: "Condiments"))
        let supplier = try await b.records.create(Supplier(companyName: "Exotic Liquids"))
        func product(
            _ name: String,
            _ category: Category,
            price: Int,
            stock: Int,
            reorder: Int = 0,
            discontinued: Bool = false
        ) async throws -> Product {
            try await b.catalogue.create(
                Product(
                    name: name,
                    supplierID: supplier.id,
                    categoryID: category.id,
                    unitPrice: Money(cents: price),
                    unitsInStock: stock,
                    reorderLevel: reorder,
                    discontinued: discontinued
                )
            )
        }
        var vinet = Customer(code: "VINET", companyName: "Vins et alcools Chevalier")
        (vinet.address, vinet.city, vinet.country) = ("59 rue de l'Abbaye", "Reims", "France")
        let andrew = try await b.records.create(Employee(firstName: "Andrew", lastName: "Fuller", title: "Vice President, Sales"))
        var nancy = Employee(firstName: "Nancy", lastName: "Davolio", title: "Sales Representative")
        nancy.reportsTo = andrew.id
        return World(
            beverages: beverages,
            condiments: condiments,
            supplier: supplier,
            chai: try await product("Chai", beverages, price: 1800, stock: 50),
            cote: try await product("Côte de Blaye", beverages, price: 26350, stock: 10),
            mustard: try await product("Grandma's Mustard", condiments, price: 2500, stock: 5, reorder: 10),
            oldTea: try await product("Old Tea", beverages, price: 500, stock: 20, discontinued: true),
            vinet: try await b.records.create(vinet),
            alfki: try await b.records.create(Customer(code: "ALFKI", companyName: "Alfreds Futterkiste")),
            nancy: try await b.records.create(nancy),
            andrew: andrew,
            shipper: try await b.records.create(Shipper(companyName: "Speedy Express", phone: "(503) 555-9831"))
        )
    }

}

extension Product {
    var key: Int64 { id ?? 0 }
}
