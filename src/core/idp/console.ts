// Console single sign-on (issue 26 point 4): an account's console entered through one of its OIDC
// or SAML providers that has console_login on. The IdP's part is the guest sign-in's (signin.ts:
// start, complete, finish, every check alike); what differs is the end: the verified email names
// a console user of the provider's account (created on first sign-in when its domain is one of
// the provider's admin_domains), who gets a console session. Password login can then be turned
// off per account, by someone signed in through single sign-on.
import type { AdminsService, ConsoleSession } from "../admins/service.ts";
import type { LoginOutcome } from "../admins/sign-in.ts";
import { ConflictError } from "../shared/errors.ts";
import type { IdpRepo, ProviderRow } from "./repo.ts";
import { emailDomain, IdpRefusal } from "./rules.ts";
import type { IdpSignIn, Started } from "./signin.ts";

/** The providers with console login are read at most this often (every visitor of the login page asks). */
const BUTTONS_MS = 3_000;

export interface ConsoleSsoDeps {
  signIn: IdpSignIn;
  repo: IdpRepo;
  admins: AdminsService;
}

/** A session, or (a second factor due) a sign-in waiting for it: see core/admins/sign-in.ts. */
export type ConsoleSignedIn = LoginOutcome<ConsoleSession> & {
  provider: ProviderRow;
  /** The console user was created by this sign-in (admin_domains). */
  created: boolean;
};

const isConsoleDoor = (row: ProviderRow | undefined): row is ProviderRow =>
  row !== undefined && row.enabled === 1 && row.console_login === 1;

export class ConsoleSso {
  private cached: { rows: ProviderRow[]; until: number } | null = null;

  constructor(private readonly deps: ConsoleSsoDeps) {}

  /** Whether any provider lets console users in: the login page then offers single sign-on. */
  async offered(now = Date.now()): Promise<boolean> {
    return (await this.consoleDoors(now)).length > 0;
  }

  /**
   * The providers offered to someone who typed this email on the login page (home-realm
   * discovery): those of the account whose console user has that email, and those listing the
   * email's domain among their admin domains. Never a list of every account's providers: the login
   * page is public, and one account's providers are no business of another's.
   */
  async providersFor(email: string, now = Date.now()): Promise<{ id: number; name: string }[]> {
    const domain = emailDomain(email.trim());
    if (domain === "") return [];
    const accountId = await this.deps.admins.accountOfEmail(email);
    return (await this.consoleDoors(now))
      .filter((r) => r.account_id === accountId || r.admin_domains.split(",").includes(domain))
      .map((r) => ({ id: r.id, name: r.display_name }));
  }

  /** Every account's providers with console login, read at most every BUTTONS_MS. */
  private async consoleDoors(now: number): Promise<ProviderRow[]> {
    if (this.cached && this.cached.until > now) return this.cached.rows;
    const rows = await this.deps.repo.consoleProviders();
    this.cached = { rows, until: now + BUTTONS_MS };
    return rows;
  }

  /** Forgets the cached providers (a provider of this process changed). */
  forget(): void {
    this.cached = null;
  }

  /** A provider that lets console users in, by the id in an address; undefined otherwise. */
  async provider(id: number): Promise<ProviderRow | undefined> {
    const row = await this.deps.signIn.provider(id);
    return isConsoleDoor(row) ? row : undefined;
  }

  async start(row: ProviderRow): Promise<Started> {
    if (row.enabled !== 1 || row.console_login !== 1)
      throw new IdpRefusal("provider_off", `provider ${row.id} has no console login`);
    return this.deps.signIn.start(row, { kind: "console" });
  }

  /**
   * The browser came back from the IdP with a finish token (portal/idp.ts sent it here): the
   * verified sign-in, taken once, for this browser; then the console user its email names.
   */
  async finish(providerId: number, finish: string, browser: string): Promise<ConsoleSignedIn> {
    const row = await this.deps.signIn.provider(providerId);
    if (!row) throw new IdpRefusal("provider_off", `provider ${providerId} is disabled or gone`);
    const done = await this.deps.signIn.finish(row.account_id, finish, browser);
    if (done.flow.purpose !== "console" || done.flow.provider_id !== row.id)
      throw new IdpRefusal("unknown_state", "the sign-in was not a console sign-in through this provider");
    if (!isConsoleDoor(done.provider))
      throw new IdpRefusal("provider_off", `provider ${row.id} no longer has console login`);
    const { email, emailVerified } = done.identity;
    if (!email || !emailVerified)
      throw new IdpRefusal("email_not_verified", "the IdP vouched for no verified email address");
    const domains = done.provider.admin_domains === "" ? [] : done.provider.admin_domains.split(",");
    const mayCreate = domains.includes(emailDomain(email));
    const signedIn = await this.deps.admins.loginVerified(row.account_id, email, row.id, mayCreate);
    if (!signedIn)
      throw new IdpRefusal(
        "no_admin",
        `${email.slice(0, 254)} is no console user of account ${row.account_id}` +
          (mayCreate ? "" : " and its domain is not one of the provider's admin domains"),
      );
    return { ...signedIn, provider: done.provider };
  }

  /**
   * Password login to the console on or off for the session's account. Off only from a session made
   * through a provider of that account that still lets console users in ("once SSO works"), so
   * nobody turns it off without having used the other way in.
   */
  async setPasswordLogin(session: ConsoleSession, on: boolean): Promise<void> {
    if (!on) {
      const row =
        session.providerId === null
          ? undefined
          : await this.deps.repo.findById(session.accountId, session.providerId);
      if (!isConsoleDoor(row))
        throw new ConflictError(
          "log in through single sign-on first: password login can be turned off only from a session " +
            "made through one of this account's identity providers with console login",
        );
    }
    await this.deps.admins.setPasswordLogin(session.accountId, on);
  }

  /** The CLI's switch (an operator with the server's shell): off needs a provider that lets them in. */
  async setPasswordLoginFor(accountId: number, on: boolean): Promise<void> {
    if (!on && !(await this.deps.repo.list(accountId)).some(isConsoleDoor))
      throw new ConflictError(
        "no identity provider of this account has console login on: turning password login off would lock everyone out",
      );
    await this.deps.admins.setPasswordLogin(accountId, on);
  }

  passwordLogin(accountId: number): Promise<boolean> {
    return this.deps.repo.passwordLogin(accountId);
  }
}
