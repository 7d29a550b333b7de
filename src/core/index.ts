// The domain core, wired to one database. Every door (HTTP, CLI, RADIUS, console) starts here.
import type { Database } from "../db/database.ts";
import { LoginRepo } from "./aaa/repo.ts";
import { AaaService } from "./aaa/service.ts";
import { AccountsRepo } from "./accounts/repo.ts";
import { AccountsService } from "./accounts/service.ts";
import { type ActivityService, createActivity } from "./activity/service.ts";
import { type AdminsService, createAdmins, type SessionLimits } from "./admins/service.ts";
import { createTeam, type Team } from "./admins/team.ts";
import { AttributesRepo } from "./attributes/repo.ts";
import { AttributesService } from "./attributes/service.ts";
import { AuditService } from "./audit/service.ts";
import type { EapFiles } from "./certs/files.ts";
import { type CertsService, createCerts } from "./certs/service.ts";
import { MacAuthenticator } from "./devices/mab.ts";
import { DevicesRepo } from "./devices/repo.ts";
import { MyDevices } from "./devices/self-service.ts";
import { DevicesService } from "./devices/service.ts";
import { DirectoryLogins } from "./directories/login.ts";
import { DirectoriesRepo } from "./directories/repo.ts";
import { DirectoryRuntime } from "./directories/runtime.ts";
import { DirectoriesService } from "./directories/service.ts";
import { GroupsRepo } from "./groups/repo.ts";
import { GroupsService } from "./groups/service.ts";
import { createGuests, type GuestsService } from "./guests/create.ts";
import { RegisteredGuests } from "./guests/registered.ts";
import { RegisteredGuestsRepo } from "./guests/registered-repo.ts";
import type { SmtpSettings } from "./guests/rules.ts";
import { ConsoleSso } from "./idp/console.ts";
import { OidcClient } from "./idp/oidc.ts";
import { IdpRepo } from "./idp/repo.ts";
import { IDP_TIMEOUT_MS } from "./idp/rules.ts";
import { SamlClient } from "./idp/saml.ts";
import { IdpService } from "./idp/service.ts";
import { IdpSignIn } from "./idp/signin.ts";
import { ImportRepo } from "./imports/repo.ts";
import { ImportService } from "./imports/service.ts";
import { JobQueue } from "./jobs/queue.ts";
import { KeysRepo } from "./keys/repo.ts";
import { KeysService } from "./keys/service.ts";
import { NetworksRepo } from "./networks/repo.ts";
import { DEFAULT_MIN_PREFIX, gatewayVendorOf, type NetworkPrefixLimits } from "./networks/rules.ts";
import { NetworksService } from "./networks/service.ts";
import { NodesRepo } from "./nodes/repo.ts";
import { NodesService } from "./nodes/service.ts";
import { PlansRepo } from "./plans/repo.ts";
import { PlansService } from "./plans/service.ts";
import { PolicyEngine } from "./policies/engine.ts";
import { PolicyExplainer } from "./policies/explain.ts";
import { PoliciesRepo } from "./policies/repo.ts";
import { PoliciesService } from "./policies/service.ts";
import { PortalsRepo } from "./portals/repo.ts";
import { PortalsService } from "./portals/service.ts";
import { createRadsec, type RadsecService } from "./radsec/service.ts";
import type { RadsecConnections } from "./radsec/types.ts";
import { createReports, type ReportsService } from "./reports/service.ts";
import type { RetentionDays } from "./retention/rules.ts";
import { createRetention, type RetentionService } from "./retention/service.ts";
import { ScimRepo } from "./scim/repo.ts";
import { ScimService } from "./scim/service.ts";
import { createSessions, type SessionsService } from "./sessions/create.ts";
import type { DynamicAuthorization } from "./sessions/das.ts";
import { UsersRepo } from "./users/repo.ts";
import { UsersService } from "./users/service.ts";
import { createVoucherCheck, createVoucherLogin } from "./vouchers/login.ts";
import { VouchersRepo } from "./vouchers/repo.ts";
import { VouchersService } from "./vouchers/service.ts";
import { SecretBox } from "./webhooks/crypto.ts";
import { WebhookSender } from "./webhooks/sender.ts";
import { createWebhooksService, type WebhooksService } from "./webhooks/service.ts";

export interface Core {
  database: Database;
  accounts: AccountsService;
  keys: KeysService;
  users: UsersService;
  // (services of further areas are declared below, one line each)
  admins: AdminsService;
  /** The account's team of console admins: invitations, roles, removals (issue 29). */
  team: Team;
  activity: ActivityService;
  webhooks: WebhooksService;
  reports: ReportsService;
  attributes: AttributesService;
  groups: GroupsService;
  networks: NetworksService;
  portals: PortalsService;
  vouchers: VouchersService;
  aaa: AaaService;
  jobs: JobQueue;
  certs: CertsService;
  sessions: SessionsService;
  retention: RetentionService;
  devices: DevicesService;
  myDevices: MyDevices;
  /** RadSec: which network a NAS certificate belongs to (RadsecTrust), and networks' RadSec settings. */
  radsec: RadsecService;
  /** The RadSec listener's live connections; none until the listener sets its own. */
  radsecConnections: RadsecConnections;
  guests: GuestsService;
  /** Identity providers (OIDC, SAML) and the sign-ins through them (issue 26). */
  idp: IdpService;
  idpSignIn: IdpSignIn;
  /** Console single sign-on through an account's providers (issue 26 point 4). */
  consoleSso: ConsoleSso;
  imports: ImportService;
  /** The audit log, read-only (issue 29 point 3); written by services through recordAudit. */
  audit: AuditService;
  /** SCIM 2.0 provisioning from identity providers (the /scim/v2 door). */
  scim: ScimService;
  /** Policies (issue 25): ordered rules applied to logins after the credential check. */
  policies: PoliciesService;
  /** Plans (issue 25 point 3): bundles of bandwidth, quotas, validity and devices. */
  plans: PlansService;
  /** LDAP / Active Directory sources and their shadow users (issue 30). */
  directories: DirectoriesService;
  /** Access points seen in accounting and authentication (issue 31). */
  nodes: NodesService;
  /** Users created by portal registration and identity-provider sign-in (issue 31). */
  registeredGuests: RegisteredGuests;
}

/** Where no RadSec listener runs (the CLI, a process with RadSec off): nobody is connected. */
export const NO_RADSEC_CONNECTIONS: RadsecConnections = { byNetwork: () => [] };

export interface CoreOptions {
  /** Wisp's address as guests reach it (PUBLIC_URL). */
  publicUrl: string;
  /** The RADIUS ports served (0: off; default 1812/1813), for the settings shown to operators. */
  radiusAuthPort?: number;
  radiusAcctPort?: number;
  /** Where the key sealing secrets at rest comes from (WEBHOOK_SECRET_KEY, else DATA_DIR/secret.key). */
  webhookSecretKey?: string | undefined;
  dataDir?: string | undefined;
  /** REPORT_TASKS_PER_ACCOUNT, REPORT_RUNNING_PER_ACCOUNT (defaults 10 and 3). */
  reportTasksPerAccount?: number | undefined;
  reportRunningPerAccount?: number | undefined;
  /** The EAP server identity from EAP_* files; unset: Wisp's own CA, kept in the database. */
  eapFiles?: EapFiles | undefined;
  /** EAP_SERVER_NAME: the DNS name clients match; default from the files or PUBLIC_URL. */
  eapServerName?: string | undefined;
  /** Sends RFC 5176 Disconnect/CoA-Requests (the RADIUS door's DasClient); without it disconnects answer 409. */
  das?: DynamicAuthorization | undefined;
  /** NETWORK_MIN_PREFIX_IPV4 / _IPV6: the widest range a network may claim (default /16 and /48). */
  networkMinPrefix?: NetworkPrefixLimits | undefined;
  /** RETENTION_*_DAYS (defaults in core/retention/rules.ts). */
  retention?: RetentionDays | undefined;
  /** SMTP_*: where guests' codes and links and sponsors' requests are mailed; unset: no mail. */
  smtp?: SmtpSettings | undefined;
  /** CONSOLE_SESSION_IDLE_MINUTES / CONSOLE_SESSION_MAX_HOURS (defaults 12 h and 7 days). */
  consoleSessions?: SessionLimits | undefined;
  /** GUEST_SENDS_PER_ACCOUNT_HOUR (default 500). */
  guestSendsPerAccountHour?: number | undefined;
  /** WEBHOOK_ALLOW_PRIVATE: webhooks and SMS gateways may be on private addresses and plain http://. */
  webhookAllowPrivate?: boolean | undefined;
  /** IDP_ALLOW_HTTP: identity providers may be plain http:// (labs, tests). */
  idpAllowHttp?: boolean | undefined;
  /** DIRECTORY_WORKER: directories' LDAP clients on a worker thread (default: in this thread). */
  directoryWorker?: boolean | undefined;
}

export function createCore(database: Database, options: CoreOptions): Core {
  const { db } = database;
  const aaa = new AaaService(db, database.dialect);
  aaa.voucherLogin = createVoucherLogin(database.dialect);
  aaa.voucherCheck = createVoucherCheck(db, database.dialect);
  const mab = new MacAuthenticator(db, new LoginRepo(db, database.dialect));
  aaa.macLogin = (input) => mab.login({ ...input, voucherLogin: aaa.voucherLogin });
  const policiesRepo = new PoliciesRepo(db, database.dialect);
  const policyEngine = new PolicyEngine(policiesRepo);
  aaa.policies = (input, reply) => policyEngine.apply(input, reply);
  const explainer = new PolicyExplainer(policyEngine, policiesRepo, new LoginRepo(db, database.dialect));
  // Explain reads the same clock logins are decided by (tests set aaa.clock).
  explainer.clock = () => aaa.clock();
  const plans = new PlansService(new PlansRepo(db, database.dialect));
  const policies = new PoliciesService(policiesRepo, policyEngine, explainer);
  // A policy's outcome may name a plan: its bandwidth in the attributes of the network's vendor.
  policies.usePlans({
    reply: (accountId, planId, network) => plans.reply(accountId, planId, gatewayVendorOf(network.vendor)),
    exists: (accountId, planId) => plans.exists(accountId, planId),
  });
  const sessions = createSessions(database, aaa);
  sessions.das = options.das;
  const reports = createReports(database, options);
  const devices = new DevicesService(new DevicesRepo(db, database.dialect));
  const secrets = { secretKey: options.webhookSecretKey, dataDir: options.dataDir };
  const box = new SecretBox({ secretKey: options.webhookSecretKey, dataDir: options.dataDir }, "UAM secret");
  const portals = new PortalsService(new PortalsRepo(db, database.dialect), options.publicUrl, box);
  const users = new UsersService(new UsersRepo(db, database.dialect));
  const vouchers = new VouchersService(new VouchersRepo(db, database.dialect));
  const jobs = new JobQueue(db, database.dialect);
  const idpRepo = new IdpRepo(db);
  const allowHttp = options.idpAllowHttp ?? false;
  // The operator's issuer and metadata URLs are reached like webhooks: public https addresses only.
  const idpHttp = new WebhookSender({
    allowPrivate: allowHttp,
    timeoutMs: IDP_TIMEOUT_MS,
    allowHint: "(IDP_ALLOW_HTTP=1 allows it)",
  });
  const idp = new IdpService(idpRepo, { publicUrl: options.publicUrl, allowHttp, box, fetch: idpHttp.fetch });
  const idpSignIn = new IdpSignIn({
    service: idp,
    repo: idpRepo,
    oidc: new OidcClient(allowHttp, idpHttp.fetch),
    saml: new SamlClient(),
    users,
    aaa,
  });
  const admins = createAdmins(database, secrets, {
    sessionLimits: options.consoleSessions,
    publicUrl: options.publicUrl,
  });
  const consoleSso = new ConsoleSso({ signIn: idpSignIn, repo: idpRepo, admins });
  idp.onChange = () => consoleSso.forget();
  const directoriesRepo = new DirectoriesRepo(db, database.dialect);
  const directoryBox = new SecretBox(secrets, "directory bind password");
  const directoryRuntime = new DirectoryRuntime(directoriesRepo, directoryBox, {
    worker: options.directoryWorker ?? false,
  });
  const directoryLogins = new DirectoryLogins(directoryRuntime, directoriesRepo);
  aaa.directoryLogin = (input) => directoryLogins.login(input);
  const certs = createCerts(database, options);
  const groups = new GroupsService(new GroupsRepo(db, database.dialect));
  const radsec = createRadsec(database, options, async () => (await certs.serverCredentials()).ca);
  return {
    database,
    accounts: new AccountsService(new AccountsRepo(db)),
    keys: new KeysService(new KeysRepo(db, database.dialect)),
    users,
    // (services of further areas are constructed below, one line each)
    nodes: new NodesService(new NodesRepo(db, database.dialect)),
    registeredGuests: new RegisteredGuests(new RegisteredGuestsRepo(db, database.dialect)),
    admins,
    team: createTeam(database, admins, { publicUrl: options.publicUrl, smtp: options.smtp, keys: secrets }),
    activity: createActivity(database, options),
    webhooks: createWebhooksService(database, options),
    reports,
    attributes: new AttributesService(new AttributesRepo(db, database.dialect)),
    groups,
    networks: new NetworksService(new NetworksRepo(db, database.dialect), options.networkMinPrefix, radsec),
    portals,
    vouchers,
    aaa,
    jobs,
    certs,
    sessions,
    retention: createRetention(database, reports, options.retention),
    devices,
    myDevices: new MyDevices(
      devices,
      aaa,
      new LoginRepo(db, database.dialect),
      new SecretBox(secrets, "my devices session"),
    ),
    guests: createGuests(database, { ...options, box, portals, users, vouchers, aaa, sessions, jobs }),
    idp,
    idpSignIn,
    consoleSso,
    radsec,
    radsecConnections: NO_RADSEC_CONNECTIONS,
    audit: new AuditService(db),
    policies,
    plans,
    directories: new DirectoriesService(directoriesRepo, directoryBox, directoryRuntime, directoryLogins),
    imports: new ImportService(
      new ImportRepo(db, database.dialect),
      options.networkMinPrefix ?? DEFAULT_MIN_PREFIX,
    ),
    scim: new ScimService(new ScimRepo(db, database.dialect), users, groups),
  };
}
