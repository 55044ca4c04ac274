import Crypto
import Foundation
import Logging
import SyncAPI
import SyncProtocol

extension SyncService {
    // MARK: Enrolment and credentials

    /// A one-time token that enrols one installation of `container`; valid for `validFor` seconds.
    /// With `site`, the token enrols that site whatever code the installation gives; with `replace` too, it gives
    /// that enrolled site (revoked, or whose credential was lost) a new credential.
    public func createEnrollment(
        container: String,
        role: Role,
        validFor: Int64 = 7 * 24 * 3600,
        site: String? = nil,
        replace: Bool = false
    ) async throws(SyncError) -> String {
        guard container.wholeMatch(of: /[A-Za-z0-9][A-Za-z0-9_.-]{0,63}/) != nil else {
            throw SyncError(.badRequest, "a container name is 1 to 64 letters, digits, '.', '_' or '-', such as acme-trading")
        }
        if let site, site.wholeMatch(of: /[A-Z0-9]{2,12}/) == nil {
            throw SyncError(.badRequest, "a site code is 2 to 12 capital letters or digits, such as KRK")
        }
        if replace && site == nil { throw SyncError(.badRequest, "say which site's credential the token replaces (--site CODE)") }
        let token = "nwe_" + Secrets.random()
        try await guarded {
            try await storage.addEnrollment(
                tokenHash: Secrets.hash(token),
                container: container,
                role: role,
                expires: Clock.now() + validFor * 1000,
                siteCode: site,
                replaces: replace
            )
        }
        return token
    }

    /// What a token would enrol, without spending it: so that an installation that would refuse to join (a store
    /// with data joining a company with data) learns it before the token is gone.
    func checkEnrollment(token: String) async throws(SyncError) -> Components.Schemas.EnrollCheckResponse {
        guard let grant = try await guarded({ try await storage.enrollment(tokenHash: Secrets.hash(token), now: Clock.now()) }) else {
            throw SyncError(.authenticationFailed, "the enrolment token is unknown, used or expired; ask for a new one")
        }
        let zones = try await guarded { try await storage.zones(container: grant.container, scope: .shared) }
        return .init(
            container: grant.container,
            role: grant.role == .hq ? .hq : .shop,
            siteCode: grant.siteCode,
            replaces: grant.replaces,
            zones: zones.filter { !$0.deleted }.map(\.zoneID.zoneName)
        )
    }

    /// The container's tokens, newest first (never the tokens themselves).
    public func enrollments(container: String) async throws(SyncError) -> [EnrollmentGrant] {
        try await guarded { try await storage.enrollments(container: container) }
    }

    /// Revokes an unspent token by the id `enrollments` shows.
    public func revokeEnrollment(container: String, id: String) async throws(SyncError) {
        guard id.count >= 6, id.allSatisfy(\.isHexDigit) else {
            throw SyncError(.badRequest, "give the token's id as `tokens list` shows it (12 hex digits)")
        }
        let revoked = try await guarded { try await storage.revokeEnrollment(container: container, id: id.lowercased()) }
        if !revoked { throw SyncError(.notFound, "no unspent token \(id) in container \(container)") }
    }

    func enroll(token: String, siteCode: String) async throws(SyncError) -> Components.Schemas.EnrollResponse {
        guard siteCode.wholeMatch(of: /[A-Z0-9]{2,12}/) != nil else {
            throw SyncError(.badRequest, "siteCode is 2 to 12 capital letters or digits, such as OXF")
        }
        let credential = "nws_" + Secrets.random()
        let installation = try await guarded {
            try await storage.redeemEnrollment(
                tokenHash: Secrets.hash(token),
                siteCode: siteCode,
                credentialHash: Secrets.hash(credential),
                now: Clock.now()
            )
        }
        logger.info("enrolled \(siteCode) in \(installation.container) as \(installation.role.rawValue)")
        return .init(
            container: installation.container,
            siteCode: installation.siteCode,
            role: installation.role == .hq ? .hq : .shop,
            credential: credential
        )
    }

    /// The installation a credential belongs to; read on every request, so a revocation holds at once on every instance.
    func authenticate(credential: String) async throws(SyncError) -> Installation {
        let now = Clock.now()
        let installation = try await guarded { try await storage.installation(credentialHash: Secrets.hash(credential), now: now) }
        guard let installation else {
            throw SyncError(
                .authenticationFailed,
                "the credential is not known; enrol this installation with a token from the server's administrator"
            )
        }
        if installation.revoked != nil {
            throw SyncError(
                .accessDenied,
                "site \(installation.siteCode) has been revoked; the administrator can give it a new credential "
                    + "(northwind-sync-server enroll --site \(installation.siteCode) --replace), and the store joins again "
                    + "(northwind sync join URL TOKEN --again)"
            )
        }
        if let expires = credentialExpires(installation), expires <= now {
            let day = Date(timeIntervalSince1970: Double(expires) / 1000).formatted(.iso8601.year().month().day())
            throw SyncError(
                .authenticationFailed,
                "the credential of site \(installation.siteCode) expired on \(day) (it was not rotated in time); the administrator "
                    + "can give it a new one (northwind-sync-server enroll --site \(installation.siteCode) --replace), and the store joins "
                    + "again (northwind sync join URL TOKEN --again)"
            )
        }
        return installation
    }

    /// When the installation's current credential expires; nil when credentials do not.
    func credentialExpires(_ installation: Installation) -> Int64? {
        credentialLifetime.map { installation.credentialIssued + $0 }
    }

    /// A new credential for the caller. The one it called with stays valid until the new one is first used, so a
    /// lost answer locks nobody out: the installation rotates again, and the new answer replaces the lost one.
    func rotateCredential(_ caller: Installation, container: String) async throws(SyncError) -> Components.Schemas.CredentialResponse {
        _ = try scope(caller, container: container, database: "shared")
        let credential = "nws_" + Secrets.random()
        try await guarded {
            try await storage.rotateCredential(container: caller.container, siteCode: caller.siteCode, nextHash: Secrets.hash(credential))
        }
        logger.info("rotated the credential of \(caller.siteCode) in \(caller.container)")
        return .init(credential: credential, expires: credentialLifetime.map { Clock.now() + $0 })
    }

    public func installations(container: String) async throws(SyncError) -> [Installation] {
        try await guarded { try await storage.installations(container: container) }
    }

    public func revoke(container: String, siteCode: String) async throws(SyncError) {
        let revoked = try await guarded { try await storage.revoke(container: container, siteCode: siteCode, now: Clock.now()) }
        if !revoked { throw SyncError(.notFound, "no active site \(siteCode) in container \(container)") }
    }

    /// Deletes tombstones older than `retention` seconds; tokens from before them expire.
    /// The data was restored with other tools: every token given before expires, and installations send again
    /// what the server lacks.
    public func startNewEpoch() async throws(SyncError) {
        try await guarded { try await storage.startNewEpoch() }
    }

    public func purgeTombstones(retention: Int64) async throws(SyncError) -> Int {
        try await guarded { try await storage.purgeTombstones(before: Clock.now() - retention * 1000) }
    }
}
