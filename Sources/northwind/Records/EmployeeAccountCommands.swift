import ArgumentParser
import Foundation
import Northwind

/// `northwind employees set-password` and `northwind employees token`: how an employee signs in, in a browser or
/// from a program.
struct SetPasswordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-password",
        abstract: "Set an employee's sign-in password (read from the terminal, or from stdin when piped).",
        discussion: "Prints the employee's login. Signing in again is needed on every browser."
    )

    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The employee's id.") var id: Int64
    @Option(help: "The login to sign in with (default: the current one, else firstname.lastname).") var login: String?

    func run() async throws {
        let backoffice = try await storeOptions.open()
        let password = try readPassword()
        let login = try await backoffice.accounts.setPassword(employeeID: id, password: password, login: login)
        print("Employee \(id) signs in as \(login).")
    }

    func readPassword() throws -> String {
        if isatty(STDIN_FILENO) != 0 {
            guard let first = getpass("New password: ").map({ String(cString: $0) }),
                let second = getpass("Again: ").map({ String(cString: $0) })
            else { throw ExitCode.failure }
            guard first == second else { throw ValidationError("The two passwords differ.") }
            return first
        }
        guard let line = readLine(strippingNewline: true) else { throw ValidationError("No password on stdin.") }
        return line
    }
}

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Make an API bearer token for an employee. It is printed once; keep it secret."
    )

    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The employee's id.") var id: Int64
    @Option(help: "What the token is for, e.g. 'stock scanner'.") var label: String?

    func run() async throws {
        let backoffice = try await storeOptions.open()
        print(try await backoffice.accounts.issueAPIToken(employeeID: id, label: label))
    }
}
