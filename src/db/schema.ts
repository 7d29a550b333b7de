// Row types of every table, as Kysely sees them. FreeRADIUS tables keep FreeRADIUS's column names.
import type { ColumnType, Generated } from "kysely";

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  created: string;
  /** How many users the account has; kept by the database's triggers (migration 008). */
  user_count: ColumnType<number, never, never>;
  /** 0: console users of this account sign in through an identity provider only (migration 028). */
  console_password_login: Generated<number>;
  /** IANA time zone of time-of-day policy conditions (migration 030); null: UTC. */
  time_zone?: string | null;
  /** The default policy's outcome, JSON (core/policies/rules.ts); null: accept, nothing added. */
  policy_default?: string | null;
  /** Bumped by every change of the account's policies (migration 030). */
  policies_version?: Generated<number>;
}

export interface ApiKeysTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  /** SHA-256 of the key, hex. The key itself is never stored. */
  key_hash: string;
  /** Last four characters, for the masked listing. */
  key_tail: string;
  /** JSON array of permission grants: "full", "read", "users:write", ... */
  permissions: string;
  /** JSON array of CIDRs; empty = any address. */
  allow_ips: string;
  /** Requests per minute; null = the server default. */
  rate_limit: number | null;
  created: string;
  last_used: string | null;
  revoked: string | null;
}

export interface UsersTable {
  id: Generated<number>;
  account_id: number;
  username: string;
  email: string;
  fullname: string;
  status: string;
  created: string;
  updated: string;
  /** A phone number, from an imported daloRADIUS userinfo (migration 026). */
  phone: Generated<string>;
  /** The user as the API shows it, JSON; written only by the database's triggers (migration 008). */
  api_json: ColumnType<string, never, never>;
  /** The identity provider's id for the user (SCIM externalId, migration 037). */
  external_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** "local", or "scim" for a user an identity provider created over SCIM (migration 037). */
  source: Generated<string>;
  /** SCIM name, displayName and emails as JSON (migration 037); null for users SCIM never wrote. */
  scim_profile: ColumnType<string | null, string | null | undefined, string | null>;
  /** The user's own plan (migration 031); null: a group's, or none. */
  plan_id?: number | null;
  /** A shadow of a directory's user (migration 036): the directory, the entry's DN, the last sync run that saw it. */
  directory_id: ColumnType<number | null, number | null | undefined, number | null>;
  directory_dn: ColumnType<string | null, string | null | undefined, string | null>;
  directory_seen: ColumnType<number | null, number | null | undefined, number | null>;
  /** Guests (migration 038): registration, email_code, email_link, sms, sponsor or idp; null otherwise. */
  guest_method: ColumnType<string | null, string | null | undefined, string | null>;
  /** The captive portal a guest registered or signed in on. */
  guest_portal_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** The identity provider a guest signed in with. */
  guest_provider_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** The device (MAC) a guest registered from, when the gateway said. */
  guest_client_mac: ColumnType<string | null, string | null | undefined, string | null>;
}

/** radcheck and radreply share this shape (FreeRADIUS: id, username, attribute, op, value). */
export interface RadAttributeTable {
  id: Generated<number>;
  account_id: number;
  username: string;
  attribute: string;
  op: string;
  value: string;
}

export interface RadUserGroupTable {
  id: Generated<number>;
  account_id: number;
  username: string;
  groupname: string;
  priority: number;
}

export interface GroupsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  description: string;
  created: string;
  updated: string;
  /** The identity provider's id for the group (SCIM externalId, migration 037). */
  external_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The SCIM displayName, when it differs from the name (migration 037). */
  display_name: ColumnType<string | null, string | null | undefined, string | null>;
  /** The members' plan when they have none of their own (migration 031). */
  plan_id?: number | null;
}

/** radgroupcheck and radgroupreply (FreeRADIUS: id, groupname, attribute, op, value). */
export interface RadGroupAttributeTable {
  id: Generated<number>;
  account_id: number;
  groupname: string;
  attribute: string;
  op: string;
  value: string;
}

/** FreeRADIUS's RADIUS clients; a Wisp network is one row. */
export interface NasTable {
  id: Generated<number>;
  /** The client's address or CIDR; '' for a network reached over RadSec only (migration 024). */
  nasname: string;
  shortname: string;
  type: Generated<string>;
  ports: number | null;
  /** The RADIUS shared secret, in clear: both RADIUS servers need it to sign and check packets. */
  secret: string;
  server: string | null;
  community: string | null;
  description: string | null;
  account_id: number;
  name: string;
  nas_identifier: string;
  require_message_authenticator: number;
  created: string;
  updated: string;
  /**
   * The first and last address of nasname as keys that compare as text ("4" + 8 hex digits,
   * "6" + 32: core/networks/address.ts), so overlapping networks are found with an index
   * (migration 011). Null only for rows Wisp did not write.
   */
  range_start: string | null;
  range_end: string | null;
  /** The EAP method proposed first to supplicants: PEAP (default), TTLS or TLS (migration 018). */
  eap_method: Generated<string>;
  /** RFC 5176 Dynamic Authorization (migration 019): 1 when Wisp may send Disconnect/CoA-Requests. */
  coa_enabled: Generated<number>;
  coa_port: Generated<number>;
  /** Acct-Interim-Interval sent in Access-Accepts, seconds; 0: none. */
  interim_interval: Generated<number>;
  /** Seconds without accounting before an open session is closed; 0: three interim intervals. */
  stale_after: Generated<number>;
  /** MAC authentication (migration 025): off, devices, or guests (devices and remembered guests). */
  mab_mode: Generated<string>;
  /** The MAB password the gateways send: mac (the MAC itself), empty, or secret (mab_secret). */
  mab_password: Generated<string>;
  mab_secret: Generated<string>;
  /** IANA time zone of time-of-day policy conditions (migration 030); null: the account's. */
  time_zone?: string | null;
  /** The gateway's vendor (migration 031): which attributes carry a plan's bandwidth. */
  vendor: Generated<string>;
  /** What a refused or unanswered CoA-Request leads to (migration 032): none or disconnect. */
  coa_fallback: Generated<string>;
  /** CoA-Requests per second sent to one NAS of the network when changes reach many sessions. */
  coa_rate: Generated<number>;
}

export interface CaptivePortalsTable {
  id: Generated<number>;
  account_id: number;
  network_id: number;
  name: string;
  success_url: string;
  created: string;
  updated: string;
  /** 1 on, 0 off (the guest page answers 404). */
  enabled: Generated<number>;
  vendor: Generated<string>;
  /** Sealed with the webhook secrets' key; empty for none. Never leaves the core in clear but to a door's hand-off. */
  uam_secret: Generated<string>;
  title: Generated<string>;
  welcome_text: Generated<string>;
  terms: Generated<string>;
  /** Comma-separated sign-in methods. */
  methods: Generated<string>;
  language: Generated<string>;
  color_primary: Generated<string>;
  color_background: Generated<string>;
  generic_login_param: Generated<string>;
  generic_username_field: Generated<string>;
  generic_password_field: Generated<string>;
  generic_redirect_field: Generated<string>;
  /** CoovaChilli: "chap" (a CHAP response) or "pap" (the password encoded with the challenge). */
  uam_auth: Generated<string>;
  /** Generic vendor: extra form fields, `name=value&name=$gatewayParam` (migration 022). */
  generic_extra_fields: Generated<string>;
  /** Comma-separated host names and CIDRs guests may be handed to; empty: the private ranges (migration 023). */
  allowed_gateways: Generated<string>;
  clickthrough_validity: Generated<number>;
  clickthrough_session_timeout: Generated<number>;
  registration_validity: Generated<number>;
  guest_group_id: number | null;
  /** Remember guests' devices after a sign-in (migration 025): never, ask, always; for how many days. */
  remember_devices: Generated<string>;
  remember_days: Generated<number>;
  /** Randomised (locally administered) MAC addresses: refuse or allow remembering them. */
  random_macs: Generated<string>;
  /** Verified guests (migration 027, core/guests/rules.ts): "off", "code" or "link". */
  email_verification: Generated<string>;
  sms_verification: Generated<number>;
  sponsor_required: Generated<number>;
  preverify: Generated<number>;
  preverify_minutes: Generated<number>;
  code_ttl: Generated<number>;
  code_attempts: Generated<number>;
  resend_cooldown: Generated<number>;
  sends_per_recipient: Generated<number>;
  sends_per_device: Generated<number>;
  sends_per_address: Generated<number>;
  /** Comma-separated calling-code prefixes like +34,+351; empty: any. */
  sms_countries: Generated<string>;
  sms_provider: Generated<string>;
  sms_url: Generated<string>;
  sms_method: Generated<string>;
  sms_template: Generated<string>;
  sms_username: Generated<string>;
  sms_from: Generated<string>;
  sms_auth_header: Generated<string>;
  /** Sealed like uam_secret: Twilio's auth token or the generic gateway's auth header value. */
  sms_secret: Generated<string>;
  sponsor_domains: Generated<string>;
  sponsor_emails: Generated<string>;
  sponsor_window: Generated<number>;
  /** Comma-separated seconds the sponsor may choose from. */
  sponsor_durations: Generated<string>;
  /** Ids of the account's identity providers offered by the idp method, comma-separated (028). */
  identity_providers: Generated<string>;
}

/** A guest's verification in progress (migration 027): codes and tokens stored as digests only. */
export interface GuestVerificationsTable {
  id: Generated<number>;
  account_id: number;
  portal_id: number;
  /** email_code, email_link, sms, sponsor. */
  kind: string;
  /** pending, verified, locked, denied. */
  status: string;
  /** SHA-256 of the guest page's token. */
  page_hash: string;
  /** HMAC of the code, or SHA-256 of the link or sponsor token. */
  secret_hash: string | null;
  secret_expires: number | null;
  attempts: Generated<number>;
  sends: Generated<number>;
  last_sent: number | null;
  /** sent, queued (the job queue retries), failed. */
  delivery: Generated<string>;
  name: string;
  email: string;
  phone: Generated<string>;
  sponsor_email: Generated<string>;
  client_mac: string | null;
  address: string;
  gateway: string;
  lang: string;
  duration: number | null;
  decided_by: string | null;
  decided_at: number | null;
  preverify_code: string | null;
  created: number;
  expires: number;
}

/** One message sent to a guest or sponsor (migration 027): what the daily and hourly caps count. */
export interface GuestSendsTable {
  id: Generated<number>;
  account_id: number;
  portal_id: number;
  /** email, sms, preverify. */
  channel: string;
  /** SHA-256 of the normalised address or number (the caps need no clear text). */
  recipient: string;
  client_mac: string | null;
  address: string;
  created: number;
}

/** A captive portal's logo (migration 015); removed with its portal. */
export interface PortalLogosTable {
  portal_id: number;
  account_id: number;
  content_type: string;
  data: Buffer;
  sha256: string;
  width: number;
  height: number;
  updated: string;
}

export interface VoucherBatchesTable {
  id: Generated<number>;
  account_id: number;
  prefix: string;
  quantity: number;
  validity: number;
  usage_limit: number;
  session_timeout: number | null;
  created: string;
  /** Octets in plus out over every session of each voucher; null: no limit (migration 019). */
  data_limit?: number | null;
  /** The plan of the batch's vouchers (migration 031). */
  plan_id?: number | null;
}

export interface VouchersTable {
  id: Generated<number>;
  account_id: number;
  /** Upper-case; matched ignoring case. */
  code: string;
  status: string;
  validity: number;
  usage_limit: number;
  session_timeout: number | null;
  batch_id: number | null;
  created: string;
  first_used: string | null;
  expires: string | null;
  devices_used: Generated<number>;
  /** Octets in plus out over every session of the voucher; null: no limit (migration 019). */
  data_limit?: number | null;
}

/**
 * FreeRADIUS's session table. Times are Unix seconds on SQLite (as FreeRADIUS's SQLite queries
 * write them) and timestamptz on PostgreSQL; repositories convert.
 */
export interface RadacctTable {
  radacctid: Generated<number>;
  acctsessionid: string;
  acctuniqueid: string;
  username: string | null;
  realm: string | null;
  nasipaddress: string;
  nasportid: string | null;
  nasporttype: string | null;
  acctstarttime: number | Date | null;
  acctupdatetime: number | Date | null;
  acctstoptime: number | Date | null;
  acctinterval: number | null;
  acctsessiontime: number | null;
  acctauthentic: string | null;
  connectinfo_start: string | null;
  connectinfo_stop: string | null;
  acctinputoctets: number | null;
  acctoutputoctets: number | null;
  calledstationid: string | null;
  callingstationid: string | null;
  acctterminatecause: string | null;
  servicetype: string | null;
  framedprotocol: string | null;
  framedipaddress: string | null;
  framedipv6address: string | null;
  framedipv6prefix: string | null;
  framedinterfaceid: string | null;
  delegatedipv6prefix: string | null;
  class: string | null;
  account_id: number | null;
  user_id: number | null;
  voucher_id: number | null;
  network_id: number | null;
  client_mac: string | null;
  ap_mac: string | null;
  ssid: string | null;
  /** The last Disconnect-Request's outcome (migration 019): ack, nak, timeout or error. */
  disconnect_result?: string | null;
  /** NAK: the Error-Cause's name; otherwise why (no answer, CoA off...). */
  disconnect_cause?: string | null;
  disconnect_at?: string | null;
  /** The last CoA-Request's outcome (migration 032): ack, nak, timeout, error, or pending. */
  coa_result?: string | null;
  /** NAK: the Error-Cause's name; otherwise why (no answer, nothing sent). */
  coa_cause?: string | null;
  coa_at?: string | null;
  /** The Disconnect-Request sent after a failed CoA-Request (coa_fallback): its result, its cause. */
  coa_fallback_result?: string | null;
  coa_fallback_cause?: string | null;
}

export interface NasReloadTable {
  nasipaddress: string;
  reloadtime: number | Date;
}

export interface RadpostauthTable {
  id: Generated<number>;
  username: string;
  pass: string | null;
  reply: string | null;
  calledstationid: string | null;
  callingstationid: string | null;
  authdate: string | Date;
  class: string | null;
  account_id: number | null;
  reason: string | null;
  user_id: number | null;
  voucher_id: number | null;
  network_id: number | null;
  client_mac: string | null;
  ap_mac: string | null;
  ssid: string | null;
  nas_ip: string | null;
  nas_identifier: string | null;
  portal_id?: number | null;
  /** PAP, CHAP, MSCHAPv2, PEAP, TTLS, TLS (migration 018). */
  method?: string | null;
  /** EAP: the outer identity when the user was named inside a tunnel. */
  outer_identity?: string | null;
  /** The policy that decided the attempt (migration 030): null id with a name is the default rule. */
  policy_id?: number | null;
  policy_name?: string | null;
}

export interface PortalLoginsTable {
  id: Generated<number>;
  account_id: number;
  portal_id: number;
  method: string;
  username: string;
  client_mac: string | null;
  expires: number;
  /** The identity provider of an idp sign-in (028). */
  provider_id?: number | null;
}

export interface VoucherDevicesTable {
  account_id: number;
  voucher_id: number;
  mac: string;
  first_seen: string;
}

/** A device an account knows by its MAC (migration 025): MAC authentication and remembered guests. */
export interface DevicesTable {
  id: Generated<number>;
  account_id: number;
  /** Lower-case, colon-separated. Unique per account. */
  mac: string;
  name: string;
  description: string;
  status: string;
  /** registered or remembered. */
  kind: string;
  user_id: number | null;
  voucher_id: number | null;
  group_id: number | null;
  portal_id: number | null;
  expires: string | null;
  last_seen: string | null;
  last_network_id: number | null;
  created: string;
  updated: string;
}

/** Every event (user.authenticated, session.started, ...) in order: the webhook outbox's source. */
export interface EventsTable {
  id: Generated<number>;
  account_id: number;
  kind: string;
  data: string;
  created: string;
}

/** Wisp's RadSec client CA, one row (migration 024). */
export interface RadsecAuthorityTable {
  id: number;
  ca_cert: string;
  /** Sealed. */
  ca_key: string;
  created: string;
}

/** Client certificates Wisp issued for networks' RadSec NASes (migration 024). */
export interface RadsecCertificatesTable {
  id: Generated<number>;
  account_id: number;
  network_id: number;
  serial: string;
  subject: string;
  not_before: string;
  not_after: string;
  revoked_at: string | null;
  fingerprint: string;
  cert: string;
  created: string;
}

/** An outside CA a network trusts for RadSec, with the rule that matches its certificates (migration 024). */
export interface RadsecTrustTable {
  id: Generated<number>;
  account_id: number;
  network_id: number;
  ca_cert: string;
  ca_subject: string;
  ca_subject_hash: string;
  ca_fingerprint: string;
  ca_not_after: string;
  match_field: string;
  /** JSON array of strings. */
  match_patterns: string;
  created: string;
  updated: string;
}

/** Background work with a lease: see src/core/jobs/queue.ts. */
export interface JobsTable {
  id: Generated<number>;
  account_id: number | null;
  kind: string;
  payload: string;
  status: string;
  attempts: Generated<number>;
  run_at: number;
  locked_by: string | null;
  locked_until: number | null;
  progress: string | null;
  result: string | null;
  last_error: string | null;
  created: string;
  updated: string;
}

/** Where an import of a FreeRADIUS database stands (migration 026, core/imports). */
export interface ImportProgressTable {
  account_id: number;
  /** The source database, without its password: mysql://user@host:port/db, sqlite:/path... */
  source: string;
  /** users, radacct or radpostauth. */
  phase: string;
  /** The last key committed: a username (users), a source row id (history). */
  cursor: string;
  /** 1 once the phase ran to its end. */
  finished: number;
  rows_done: number;
  updated: string;
}

export interface Schema {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  users: UsersTable;
  radcheck: RadAttributeTable;
  radreply: RadAttributeTable;
  radusergroup: RadUserGroupTable;
  groups: GroupsTable;
  radgroupcheck: RadGroupAttributeTable;
  radgroupreply: RadGroupAttributeTable;
  nas: NasTable;
  captive_portals: CaptivePortalsTable;
  portal_logos: PortalLogosTable;
  voucher_batches: VoucherBatchesTable;
  vouchers: VouchersTable;
  radacct: RadacctTable;
  nasreload: NasReloadTable;
  radpostauth: RadpostauthTable;
  portal_logins: PortalLoginsTable;
  voucher_devices: VoucherDevicesTable;
  devices: DevicesTable;
  events: EventsTable;
  jobs: JobsTable;
  radsec_authority: RadsecAuthorityTable;
  radsec_certificates: RadsecCertificatesTable;
  radsec_trust: RadsecTrustTable;
  guest_verifications: GuestVerificationsTable;
  guest_sends: GuestSendsTable;
  identity_providers: IdentityProvidersTable;
  identity_provider_groups: IdentityProviderGroupsTable;
  idp_flows: IdpFlowsTable;
  idp_assertions: IdpAssertionsTable;
  import_progress: ImportProgressTable;
  audit_log: AuditLogTable;
  policies: PoliciesTable;
  plans: PlansTable;
  directories: DirectoriesTable;
  directory_groups: DirectoryGroupsTable;
}

/** An account's ordered policy rules (migration 030; core/policies). */
export interface PoliciesTable {
  id: Generated<number>;
  account_id: number;
  /** 1..n within the account: evaluation order. */
  position: number;
  name: string;
  description: string;
  /** JSON: PolicyConditions (core/policies/rules.ts). */
  conditions: string;
  /** JSON: PolicyOutcome. */
  outcome: string;
  created: string;
  updated: string;
}

/** An account's LDAP / Active Directory source (migration 036; core/directories). */
export interface DirectoriesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  enabled: Generated<number>;
  /** ldap:// or ldaps:// URLs, one per line, in failover order. */
  servers: string;
  start_tls: Generated<number>;
  ca_pem: Generated<string>;
  bind_dn: Generated<string>;
  /** Sealed (SecretBox); empty: none. */
  bind_password: Generated<string>;
  user_base: string;
  user_scope: Generated<string>;
  user_filter: Generated<string>;
  username_attribute: Generated<string>;
  name_attribute: Generated<string>;
  email_attribute: Generated<string>;
  disabled_mode: Generated<string>;
  disabled_attribute: Generated<string>;
  disabled_value: Generated<string>;
  nt_hash_attribute: Generated<string>;
  group_base: Generated<string>;
  group_filter: Generated<string>;
  group_member_attribute: Generated<string>;
  group_name_attribute: Generated<string>;
  sync_interval: Generated<number>;
  group_cache_seconds: Generated<number>;
  connect_timeout_ms: Generated<number>;
  timeout_ms: Generated<number>;
  pool_size: Generated<number>;
  breaker_failures: Generated<number>;
  breaker_cooldown_seconds: Generated<number>;
  last_sync_at: ColumnType<number | null, number | null | undefined, number | null>;
  /** The last sync's report, JSON; empty: never synced. */
  last_sync: Generated<string>;
  created: string;
  updated: string;
}

/** An account's plan (migration 031; core/plans). Null figures: no limit of that kind. */
export interface PlansTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  description: Generated<string>;
  /** kbit/s, towards the client and from it. */
  download_kbps: number | null;
  upload_kbps: number | null;
  /** Octets in plus out per data_period (day, month, validity). */
  data_quota: number | null;
  data_period: string | null;
  /** Seconds online per time_period (day, month, validity). */
  time_quota: number | null;
  time_period: string | null;
  /** Seconds from the first session on which the plan ends (Expire-After). */
  validity: number | null;
  /** Sessions open at once (Simultaneous-Use). */
  devices: number | null;
  /** The role / filter name for gateways that take bandwidth from a named role (Aruba, Meraki). */
  role: Generated<string>;
  created: string;
  updated: string;
}

/** A directory group's Wisp group, per directory. */
export interface DirectoryGroupsTable {
  id: Generated<number>;
  account_id: number;
  directory_id: number;
  /** The group's name (its name attribute) or its DN, compared without case. */
  directory_group: string;
  group_id: number;
}

/** One change made through a door (migration 035; core/audit). Never updated. */
export interface AuditLogTable {
  id: Generated<number>;
  account_id: number;
  created: string;
  /** api_key, admin, cli, worker, radius, portal, system (core/audit/context.ts). */
  actor_type: string;
  actor_id: Generated<string>;
  actor_name: Generated<string>;
  actor_role: Generated<string>;
  address: Generated<string>;
  resource: string;
  resource_id: Generated<string>;
  action: string;
  /** JSON of the fields before and after, secrets masked; null when there is none (create, delete). */
  before: string | null;
  after: string | null;
}

/** An account's OpenID Connect or SAML identity provider (migration 028; core/idp). */
export interface IdentityProvidersTable {
  id: Generated<number>;
  account_id: number;
  /** Short and fixed: the prefix of its users' names (`<name>:<subject>`). */
  name: string;
  display_name: string;
  kind: string;
  enabled: Generated<number>;
  issuer: Generated<string>;
  client_id: Generated<string>;
  /** Sealed (SecretBox); empty: none. */
  client_secret: Generated<string>;
  scopes: Generated<string>;
  user_claim: Generated<string>;
  group_claim: Generated<string>;
  allowed_domains: Generated<string>;
  metadata_url: Generated<string>;
  metadata: Generated<string>;
  idp_entity_id: Generated<string>;
  sso_url: Generated<string>;
  /** The IdP's signing certificates from its metadata, base64 DER, comma-separated. */
  idp_certs: Generated<string>;
  user_attribute: Generated<string>;
  group_attribute: Generated<string>;
  console_login: Generated<number>;
  admin_domains: Generated<string>;
  created: string;
  updated: string;
}

/** An IdP group's Wisp group, per provider. */
export interface IdentityProviderGroupsTable {
  id: Generated<number>;
  account_id: number;
  provider_id: number;
  idp_group: string;
  group_id: number;
}

/** A sign-in through an identity provider, from the redirect to the IdP until it is finished once. */
export interface IdpFlowsTable {
  id: Generated<number>;
  account_id: number;
  provider_id: number;
  /** portal or console. */
  purpose: string;
  portal_id: number | null;
  state_hash: string;
  finish_hash: string | null;
  browser_hash: string;
  nonce: Generated<string>;
  code_verifier: Generated<string>;
  request_id: Generated<string>;
  gateway: Generated<string>;
  lang: Generated<string>;
  /** started, verified. */
  status: string;
  /** The verified identity, JSON, once the IdP's answer checked out. */
  identity: string | null;
  created: number;
  expires: number;
}

/** SAML assertions already used, until their NotOnOrAfter has passed (one-time use). */
export interface IdpAssertionsTable {
  account_id: number;
  provider_id: number;
  assertion_id: string;
  expires: number;
}
