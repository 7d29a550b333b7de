// Sign-in through an identity provider (issue 26): an account's OpenID Connect and SAML providers,
// each with its group mapping; the sign-ins in flight (idp_flows: state, nonce, PKCE verifier, SAML
// request id, the gateway's parameters) and the SAML assertions already used (idp_assertions). A
// portal names the providers it offers; a pending portal login names its provider (the
// user.authenticated event carries it); an account may turn password login to the console off.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const id =
    dialect === "postgres" ? sql`id bigserial primary key` : sql`id integer primary key autoincrement`;
  await sql`create table identity_providers (
    ${id},
    account_id integer not null,
    name varchar(20) not null,
    display_name varchar(100) not null,
    kind varchar(8) not null,
    enabled integer not null default 1,
    issuer text not null default '',
    client_id text not null default '',
    client_secret text not null default '',
    scopes text not null default 'openid email profile',
    user_claim varchar(100) not null default 'sub',
    group_claim varchar(100) not null default '',
    allowed_domains text not null default '',
    metadata_url text not null default '',
    metadata text not null default '',
    idp_entity_id text not null default '',
    sso_url text not null default '',
    idp_certs text not null default '',
    user_attribute varchar(200) not null default '',
    group_attribute varchar(200) not null default '',
    console_login integer not null default 0,
    admin_domains text not null default '',
    created varchar(32) not null,
    updated varchar(32) not null
  )`.execute(db);
  await sql`create unique index wisp_identity_providers_name on identity_providers (account_id, name)`.execute(
    db,
  );
  await sql`create table identity_provider_groups (
    ${id},
    account_id integer not null,
    provider_id integer not null,
    idp_group varchar(200) not null,
    group_id integer not null
  )`.execute(db);
  await sql`create unique index wisp_identity_provider_groups_map on identity_provider_groups (account_id, provider_id, idp_group)`.execute(
    db,
  );
  await sql`create table idp_flows (
    ${id},
    account_id integer not null,
    provider_id integer not null,
    purpose varchar(8) not null,
    portal_id integer,
    state_hash varchar(64) not null,
    finish_hash varchar(64),
    browser_hash varchar(64) not null,
    nonce varchar(64) not null default '',
    code_verifier varchar(128) not null default '',
    request_id varchar(100) not null default '',
    gateway text not null default '',
    lang varchar(8) not null default 'en',
    status varchar(12) not null,
    identity text,
    created bigint not null,
    expires bigint not null
  )`.execute(db);
  await sql`create unique index wisp_idp_flows_state on idp_flows (state_hash)`.execute(db);
  await sql`create index wisp_idp_flows_finish on idp_flows (finish_hash)`.execute(db);
  await sql`create index wisp_idp_flows_account on idp_flows (account_id, expires)`.execute(db);
  await sql`create table idp_assertions (
    account_id integer not null,
    provider_id integer not null,
    assertion_id varchar(200) not null,
    expires bigint not null
  )`.execute(db);
  await sql`create unique index wisp_idp_assertions_id on idp_assertions (account_id, provider_id, assertion_id)`.execute(
    db,
  );
  await db.schema
    .alterTable("captive_portals")
    .addColumn("identity_providers", "text", (c) => c.notNull().defaultTo(""))
    .execute();
  await db.schema.alterTable("portal_logins").addColumn("provider_id", "integer").execute();
  await db.schema
    .alterTable("accounts")
    .addColumn("console_password_login", "integer", (c) => c.notNull().defaultTo(1))
    .execute();
}
