import ArgumentParser
import Foundation
import Northwind

/// The first run from the console: where it stands, and opening it to the network again.
struct SetupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "The first-run page (setup.firstRun): see where it stands, or open it to the network again.",
        subcommands: [Status.self, Reopen.self]
    )

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Say whether the first run is still to do, and who may reach its page.")
        @OptionGroup var storeOptions: StoreOptions

        func run() async throws {
            let backoffice = try await storeOptions.open(seedIfCreated: false)
            let state = try await backoffice.setup.state()
            guard state.pending else {
                print(
                    "The first run is done\(state.siteName.map { " (site: \($0))" } ?? ""). Sign in; a lost password is reset with `northwind employees set-password`."
                )
                return
            }
            let open = state.openBoot != nil && state.openBoot == FirstRunMachine.bootID()
            print("The first run is still to do: open /setup in a browser.")
            print(
                open
                    ? "Its page answers the network during this boot."
                    : "Its page answers this machine only (this is not the boot that made the store): `northwind setup reopen` opens it to the network until the next restart."
            )
        }
    }

    struct Reopen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Open the first-run page to the network again, until the machine restarts.",
            discussion: """
                The page answers the network only during the boot that made the store, so that a machine left \
                waiting is not left open to whoever finds it. Run this on the console (or over SSH) to finish the \
                first run from another computer. A running server sees it at the next request.
                """
        )
        @OptionGroup var storeOptions: StoreOptions

        func run() async throws {
            let backoffice = try await storeOptions.open(seedIfCreated: false)
            guard try await backoffice.setup.state().pending else {
                throw ValidationError("The first run is done already: there is nothing to reopen. Sign in instead.")
            }
            guard let boot = FirstRunMachine.bootID() else {
                throw ValidationError("This system has no boot id (/proc/sys/kernel/random/boot_id); the first-run page answers this machine only.")
            }
            try await backoffice.setup.open(boot: boot)
            print("The first-run page answers the network until this machine restarts.")
        }
    }
}
