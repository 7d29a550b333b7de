// Verified guests (issue 27): a portal's registration may require an email code or link, an SMS
// code, or a sponsor's approval; its limits and SMS gateway; each verification in progress
// (guest_verifications) and each message sent (guest_sends, counted by the daily and hourly caps).
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

/** New captive_portals columns: [name, type, default]. Defaults match core/guests/rules.ts. */
const PORTAL_COLUMNS: [string, "integer" | "text" | "varchar(16)", number | string][] = [
  ["email_verification", "varchar(16)", "off"],
  ["sms_verification", "integer", 0],
  ["sponsor_required", "integer", 0],
  ["preverify", "integer", 0],
  ["preverify_minutes", "integer", 10],
  ["code_ttl", "integer", 600],
  ["code_attempts", "integer", 5],
  ["resend_cooldown", "integer", 60],
  ["sends_per_recipient", "integer", 5],
  ["sends_per_device", "integer", 10],
  ["sends_per_address", "integer", 50],
  ["sms_countries", "text", ""],
  ["sms_provider", "varchar(16)", "twilio"],
  ["sms_url", "text", ""],
  ["sms_method", "varchar(16)", "POST"],
  ["sms_template", "text", ""],
  ["sms_username", "text", ""],
  ["sms_from", "text", ""],
  ["sms_auth_header", "text", "Authorization"],
  ["sms_secret", "text", ""],
  ["sponsor_domains", "text", ""],
  ["sponsor_emails", "text", ""],
  ["sponsor_window", "integer", 3600],
  ["sponsor_durations", "text", "3600,28800,86400"],
];

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  for (const [name, type, fallback] of PORTAL_COLUMNS) {
    await db.schema
      .alterTable("captive_portals")
      .addColumn(name, type, (c) => c.notNull().defaultTo(fallback))
      .execute();
  }
  const id =
    dialect === "postgres" ? sql`id bigserial primary key` : sql`id integer primary key autoincrement`;
  await sql`create table guest_verifications (
    ${id},
    account_id integer not null,
    portal_id integer not null,
    kind varchar(16) not null,
    status varchar(16) not null,
    page_hash varchar(64) not null,
    secret_hash varchar(64),
    secret_expires bigint,
    attempts integer not null default 0,
    sends integer not null default 0,
    last_sent bigint,
    delivery varchar(16) not null default 'sent',
    name varchar(100) not null,
    email varchar(254) not null,
    phone varchar(24) not null default '',
    sponsor_email varchar(254) not null default '',
    client_mac varchar(17),
    address varchar(64) not null,
    gateway text not null,
    lang varchar(8) not null,
    duration integer,
    decided_by varchar(254),
    decided_at bigint,
    preverify_code varchar(16),
    created bigint not null,
    expires bigint not null
  )`.execute(db);
  await sql`create unique index wisp_guest_verifications_page on guest_verifications (page_hash)`.execute(db);
  await sql`create index wisp_guest_verifications_secret on guest_verifications (secret_hash)`.execute(db);
  await sql`create index wisp_guest_verifications_account on guest_verifications (account_id, status, created)`.execute(
    db,
  );
  await sql`create table guest_sends (
    ${id},
    account_id integer not null,
    portal_id integer not null,
    channel varchar(16) not null,
    recipient varchar(64) not null,
    client_mac varchar(17),
    address varchar(64) not null,
    created bigint not null
  )`.execute(db);
  await sql`create index wisp_guest_sends_account on guest_sends (account_id, created)`.execute(db);
}
