/// Whether the programs under test read the fault tests' switches (`NORTHWIND_CRASH_AT`, the commit-order hooks):
/// debug builds do (`NORTHWIND_TEST_HOOKS`), and the tests' build is the programs' build. A test that needs a switch
/// is disabled in a release test run, where the programs refuse it, rather than pass without it.
enum FaultSwitches {
    static let compiledIn: Bool = {
        #if NORTHWIND_TEST_HOOKS
        true
        #else
        false
        #endif
    }()
}
