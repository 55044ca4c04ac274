import Foundation
import Mustache
import Northwind
import NorthwindStore

/// A page's data for its template. Each page has a typed model, so the compiler checks what a template can read;
/// Mustache reads the properties by name, and an absent optional is an empty section.
protocol PageModel {
    /// Who is signed in, for the layout; `render` fills it in.
    var me: PageUser? { get set }
}

/// The signed-in employee as the layout shows them.
struct PageUser {
    var name: String
    var firstName: String
    var csrf: String
    var isManager: Bool
    /// The store's sync state, when it has joined a sync server.
    var sync: PageSync?
    /// `display.density`, this person's own: `comfortable` or `compact`.
    var density: String
}

struct PageSync {
    var state: String
    var text: String
}

/// Previous and next links under a long list.
struct Pager {
    var page: Int
    var pages: Int
    var previous: String?
    var next: String?
}

/// An option of a select whose value is a record id.
struct ChoiceOption {
    var id: Int64
    var name: String
    var selected: Bool
}

/// An option of a select with a text value.
struct SelectOption {
    var value: String
    var label: String
    var selected: Bool
}

/// The error page: what went wrong, in words a person can act on.
struct ErrorPage: PageModel {
    var title: String
    var detail: String
    var me: PageUser?
}

// The layout's and the lists' small models are on every page: found by name without reflection.
extension PageUser: MustacheParent {
    func child(named key: String) -> Any? {
        switch key {
        case "name": name
        case "firstName": firstName
        case "csrf": csrf
        case "isManager": isManager
        case "sync": sync
        case "density": density
        default: nil
        }
    }
}

extension PageSync: MustacheParent {
    func child(named key: String) -> Any? {
        switch key {
        case "state": state
        case "text": text
        default: nil
        }
    }
}

extension Pager: MustacheParent {
    func child(named key: String) -> Any? {
        switch key {
        case "page": page
        case "pages": pages
        case "previous": previous
        case "next": next
        default: nil
        }
    }
}

extension SelectOption: MustacheParent {
    func child(named key: String) -> Any? {
        switch key {
        case "value": value
        case "label": label
        case "selected": selected
        default: nil
        }
    }
}

extension ChoiceOption: MustacheParent {
    func child(named key: String) -> Any? {
        switch key {
        case "id": id
        case "name": name
        case "selected": selected
        default: nil
        }
    }
}
