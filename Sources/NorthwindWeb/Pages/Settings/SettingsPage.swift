import Foundation
import Hummingbird
import Northwind
import NorthwindStore

/// The settings page, made from the catalogue as Settings.bundle's form is made from its plist: one section per
/// group, one small form per setting, its control, footer and rules. Managers see this installation's settings;
/// everyone sees their own.
struct SettingsPage: PageModel {
    struct Group {
        var id: String
        var title: String
        var fields: [Field]
    }

    struct Field {
        var key: String
        /// The key as an HTML id: `server-port`.
        var id: String
        var title: String
        var footer: String
        var value: String
        /// Where the value comes from, as people say it: "Set by the settings file; change it there."
        var origin: String
        /// Set by the command line, the environment or the settings file: a change here would do nothing.
        var overridden: Bool
        /// Stored here (this installation's or the user's own value): reset brings the next layer back.
        var stored: Bool
        var needsRestart: Bool
        var isToggle: Bool
        var isOn: Bool
        var isChoice: Bool
        var options: [SelectOption]
        var isSlider: Bool
        var minimum: Int
        var maximum: Int
        var step: Int
        var isText: Bool
        var isSecret: Bool
        /// Whether a secret has a value (which is never shown).
        var secretSet: Bool
        var inputMode: String
        var error: String?
        /// What the person typed, shown again beside the error.
        var draft: String?
    }

    var groups: [Group]
    var saved: String?
    var fileProblem: String?
    var me: PageUser?
}

extension PageRoutes {
    @Sendable func settingsPage(_ request: Request, context: WebContext) async throws -> Response {
        try await renderSettings(context: context)
    }

    /// `POST /settings`: stores one value (`key`, `value`), this installation's or, for a user key, the signed-in
    /// employee's own.
    @Sendable func saveSetting(_ request: Request, context: WebContext) async throws -> Response {
        let (me, setting, form) = try await settingForm(request, context: context, to: "change this installation's settings")
        // A toggle's unchecked box sends nothing but the hidden "false" before it.
        let text = setting.control == .toggle ? (form.all("value").last ?? "false") : (form["value"] ?? "")
        // A secret's field is always blank: leaving it so keeps the secret (reset removes it).
        if setting.kind == .secret, text.isEmpty {
            return try await renderSettings(context: context, saved: "\(setting.title): unchanged.")
        }
        do throws(NorthwindError) {
            try await backoffice.settings.set(
                setting.key,
                text,
                user: setting.scope == .user ? me.login : nil,
                by: setting.scope == .user ? nil : me.login
            )
        } catch {
            guard case let .invalid(fields) = error else { throw error }
            let message = fields.map { "\($0.field) \($0.message)" }.joined(separator: "; ")
            return try await renderSettings(
                context: context,
                error: (setting.key, message, text),
                status: .unprocessableContent
            )
        }
        return try await renderSettings(context: context, saved: "\(setting.title): saved.")
    }

    /// `POST /settings/reset`: removes the stored value, so the next layer (in the end the factory default) shows.
    @Sendable func resetSetting(_ request: Request, context: WebContext) async throws -> Response {
        let (me, setting, _) = try await settingForm(request, context: context, to: "reset this installation's settings")
        try await backoffice.settings.remove(setting.key, user: setting.scope == .user ? me.login : nil)
        return try await renderSettings(context: context, saved: "\(setting.title): reset to \(Self.defaultText(setting)).")
    }

    private func settingForm(_ request: Request, context: WebContext, to action: String) async throws -> (SignedIn, Setting, FormData) {
        let me = try context.requireSignIn()
        let form = try await FormData.read(request, context: context)
        let setting = try Setting.named(form["key"] ?? "")
        if setting.scope != .user { _ = try context.requireManager(env.policy, to: action) }
        guard setting.control != .readOnly else {
            throw NorthwindError.invalid(setting.key, "is set outside the store: on the command line, in the environment or in the settings file")
        }
        return (me, setting, form)
    }

    private func renderSettings(
        context: WebContext,
        saved: String? = nil,
        error: (key: String, message: String, draft: String)? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let me = try context.requireSignIn()
        // Read the stored layers now, not at the change feed's next tick: this page shows what was just saved.
        try await env.settings.reload(from: backoffice)
        let isManager = env.policy.isManager(me.employee)
        let states = try await backoffice.settings.syncStates(login: me.login)
        let groups = Setting.groups.compactMap { group -> SettingsPage.Group? in
            let fields = Setting.all.filter { $0.group == group.key && ($0.scope == .user || isManager) }.map { setting in
                field(setting, login: me.login, state: states[setting.key], error: error?.key == setting.key ? error : nil)
            }
            return fields.isEmpty ? nil : SettingsPage.Group(id: "group-" + group.key, title: group.title, fields: fields)
        }
        let page = SettingsPage(groups: groups, saved: saved, fileProblem: isManager ? env.settings.fileProblem : nil)
        return render("settings", page, status: status, context: context)
    }

    private func field(
        _ setting: Setting,
        login: String,
        state: UserSettingSyncState?,
        error: (key: String, message: String, draft: String)?
    ) -> SettingsPage.Field {
        let login = setting.scope == .user ? login : nil
        let current =
            (try? env.settings.value(setting.key, user: login)) ?? SettingValue(key: setting.key, value: setting.defaultValue, origin: .factory)
        // Shown only when no layer above overrides it, so a stored value is then the one that wins.
        let stored = current.origin == .installation || current.origin == .user
        var options: [SelectOption] = []
        if case .choice(let choices) = setting.kind {
            options = choices.map { SelectOption(value: $0.value, label: $0.title, selected: $0.value == current.value) }
        }
        var slider = (minimum: 0, maximum: 0, step: 1)
        if case let .slider(minimum, maximum, step) = setting.control { slider = (minimum, maximum, step) }
        let isSecret = setting.kind == .secret
        return SettingsPage.Field(
            key: setting.key,
            id: setting.key.replacingOccurrences(of: ".", with: "-"),
            title: setting.title,
            footer: setting.footer,
            // A secret is never sent back to the browser, only whether one is set.
            value: isSecret ? "" : current.value,
            origin: current.origin.isOverride
                ? "Set by \(Self.originText(current.origin, key: setting.key)); change it there."
                : stored
                    ? (setting.scope == .user ? "Your own value\(state?.reason.map { ", \($0.text)" } ?? "")." : "This installation's value.")
                    : setting.control == .readOnly
                        ? "Read-only here: set it on the command line, in the environment or in the settings file." : "The factory default.",
            overridden: current.origin.isOverride || setting.control == .readOnly,
            stored: stored,
            needsRestart: setting.apply == .restart,
            isToggle: setting.control == .toggle,
            isOn: current.value == "true",
            isChoice: setting.control == .choice,
            options: options,
            isSlider: slider.maximum > 0,
            minimum: slider.minimum,
            maximum: slider.maximum,
            step: slider.step,
            isText: setting.control == .text,
            isSecret: isSecret,
            secretSet: isSecret && !current.value.isEmpty,
            inputMode: setting.kind == .int ? "numeric" : setting.kind == .decimal ? "decimal" : "text",
            error: error?.message,
            draft: error.map(\.draft)
        )
    }

    /// Where a value comes from, as the page says it.
    static func originText(_ origin: SettingOrigin, key: String) -> String {
        switch origin {
        case .commandLine: "the command line"
        case .environment: "the environment (\(SettingsReference.environmentName(key)))"
        case .file: "the settings file"
        case .installation: "this installation"
        case .user: "you"
        case .factory: "the factory default"
        }
    }

    static func defaultText(_ setting: Setting) -> String {
        setting.defaultValue.isEmpty ? "its default (empty)" : "its default, \(setting.display(setting.defaultValue))"
    }
}
