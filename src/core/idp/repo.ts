// Identity providers, their group mappings, the sign-ins in flight and the SAML assertions used.

import type { Insertable, Kysely, Selectable, Updateable } from "kysely";
import type {
  IdentityProviderGroupsTable,
  IdentityProvidersTable,
  IdpFlowsTable,
  Schema,
} from "../../db/schema.ts";
import { type AuditEntry, recordAudit } from "../audit/record.ts";
import { groupIdsByName } from "../groups/repo.ts";

export type ProviderRow = Selectable<IdentityProvidersTable>;
export type ProviderChanges = Omit<Updateable<IdentityProvidersTable>, "id" | "account_id" | "created">;
export type MappingRow = Selectable<IdentityProviderGroupsTable> & { group_name: string };
export type FlowRow = Selectable<IdpFlowsTable>;

export class IdpRepo {
  constructor(private readonly db: Kysely<Schema>) {}

  /** The change's audit row, with this repository's connection (the change's transaction). */
  audit(entry: AuditEntry): Promise<void> {
    return recordAudit(this.db, entry);
  }

  transaction<T>(fn: (repo: IdpRepo) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new IdpRepo(trx)));
  }

  list(accountId: number): Promise<ProviderRow[]> {
    return this.db
      .selectFrom("identity_providers")
      .selectAll()
      .where("account_id", "=", accountId)
      .orderBy("id")
      .execute();
  }

  /** One page of the account's providers by id, and how many it has. */
  async page(accountId: number, offset: number, limit: number) {
    const [rows, count] = await Promise.all([
      this.db
        .selectFrom("identity_providers")
        .selectAll()
        .where("account_id", "=", accountId)
        .orderBy("id")
        .offset(offset)
        .limit(limit)
        .execute(),
      this.db
        .selectFrom("identity_providers")
        .select((eb) => eb.fn.countAll<number>().as("total"))
        .where("account_id", "=", accountId)
        .executeTakeFirstOrThrow(),
    ]);
    return { rows, total: Number(count.total) };
  }

  findById(accountId: number, id: number): Promise<ProviderRow | undefined> {
    return this.db
      .selectFrom("identity_providers")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
  }

  /** By id alone: the id in a callback URL names the provider and so its account (an entry lookup). */
  findForSignIn(id: number): Promise<ProviderRow | undefined> {
    return this.db.selectFrom("identity_providers").selectAll().where("id", "=", id).executeTakeFirst();
  }

  findByName(accountId: number, name: string): Promise<ProviderRow | undefined> {
    return this.db
      .selectFrom("identity_providers")
      .selectAll()
      .where("account_id", "=", accountId)
      .where("name", "=", name)
      .executeTakeFirst();
  }

  /** Every account's providers that let console users sign in (the console's login page). */
  consoleProviders(): Promise<ProviderRow[]> {
    return this.db
      .selectFrom("identity_providers")
      .selectAll()
      .where("console_login", "=", 1)
      .where("enabled", "=", 1)
      .orderBy("id")
      .execute();
  }

  insert(row: Insertable<IdentityProvidersTable>): Promise<ProviderRow> {
    return this.db.insertInto("identity_providers").values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(accountId: number, id: number, changes: ProviderChanges): Promise<ProviderRow | undefined> {
    return this.db
      .updateTable("identity_providers")
      .set(changes)
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirst();
  }

  async delete(accountId: number, id: number): Promise<boolean> {
    await this.db
      .deleteFrom("identity_provider_groups")
      .where("account_id", "=", accountId)
      .where("provider_id", "=", id)
      .execute();
    await this.db
      .deleteFrom("idp_flows")
      .where("account_id", "=", accountId)
      .where("provider_id", "=", id)
      .execute();
    const result = await this.db
      .deleteFrom("identity_providers")
      .where("account_id", "=", accountId)
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** The account's portals whose idp method offers the provider (id and name). */
  async portalsOffering(accountId: number, providerId: number): Promise<{ id: number; name: string }[]> {
    const rows = await this.db
      .selectFrom("captive_portals")
      .select(["id", "name", "identity_providers"])
      .where("account_id", "=", accountId)
      .where("identity_providers", "<>", "")
      .orderBy("id")
      .execute();
    return rows
      .filter((r) => r.identity_providers.split(",").map(Number).includes(providerId))
      .map((r) => ({ id: r.id, name: r.name }));
  }

  /** Whether the account lets its console users log in with a password (accounts.console_password_login). */
  async passwordLogin(accountId: number): Promise<boolean> {
    const row = await this.db
      .selectFrom("accounts")
      .select("console_password_login")
      .where("id", "=", accountId)
      .executeTakeFirst();
    return row?.console_password_login !== 0;
  }

  mappings(accountId: number, providerId: number): Promise<MappingRow[]> {
    return this.db
      .selectFrom("identity_provider_groups as m")
      .innerJoin("groups as g", (join) =>
        join.onRef("g.id", "=", "m.group_id").onRef("g.account_id", "=", "m.account_id"),
      )
      .selectAll("m")
      .select("g.name as group_name")
      .where("m.account_id", "=", accountId)
      .where("m.provider_id", "=", providerId)
      .orderBy("m.idp_group")
      .execute();
  }

  async replaceMappings(
    accountId: number,
    providerId: number,
    rows: { idp_group: string; group_id: number }[],
  ): Promise<void> {
    await this.db
      .deleteFrom("identity_provider_groups")
      .where("account_id", "=", accountId)
      .where("provider_id", "=", providerId)
      .execute();
    if (rows.length === 0) return;
    await this.db
      .insertInto("identity_provider_groups")
      .values(rows.map((r) => ({ account_id: accountId, provider_id: providerId, ...r })))
      .execute();
  }

  groupIdsByName(accountId: number, names: string[]): Promise<Map<string, number>> {
    return groupIdsByName(this.db, accountId, names);
  }

  async hasGroups(accountId: number, ids: number[]): Promise<boolean> {
    if (ids.length === 0) return true;
    const rows = await this.db
      .selectFrom("groups")
      .select("id")
      .where("account_id", "=", accountId)
      .where("id", "in", ids)
      .execute();
    return rows.length === new Set(ids).size;
  }

  /** A new sign-in; the account's expired ones are swept at the same time. */
  async addFlow(row: Insertable<IdpFlowsTable>, now: number): Promise<void> {
    await this.db
      .deleteFrom("idp_flows")
      .where("account_id", "=", row.account_id)
      .where("expires", "<", now)
      .execute();
    await this.db.insertInto("idp_flows").values(row).execute();
  }

  /**
   * Takes the started sign-in a state names, once: it is deleted in the same statement that reads
   * it, so a replayed state (or a code or response sent twice) finds nothing the second time.
   */
  async takeStartedFlow(accountId: number, providerId: number, stateHash: string, now: number) {
    const row = await this.db
      .deleteFrom("idp_flows")
      .where("account_id", "=", accountId)
      .where("provider_id", "=", providerId)
      .where("state_hash", "=", stateHash)
      .where("status", "=", "started")
      .returningAll()
      .executeTakeFirst();
    return row && row.expires >= now ? row : undefined;
  }

  /** Stores the verified identity under a new state: the browser's next request finishes it. */
  async addVerifiedFlow(row: Insertable<IdpFlowsTable>): Promise<void> {
    await this.db.insertInto("idp_flows").values(row).execute();
  }

  /** Takes a verified sign-in by its finishing token, once. */
  async takeVerifiedFlow(accountId: number, finishHash: string, now: number) {
    const row = await this.db
      .deleteFrom("idp_flows")
      .where("account_id", "=", accountId)
      .where("finish_hash", "=", finishHash)
      .where("status", "=", "verified")
      .returningAll()
      .executeTakeFirst();
    return row && row.expires >= now ? row : undefined;
  }

  /**
   * Records a SAML assertion's ID until it expires; false when it was already recorded (a replay).
   * The unique index decides, so two instances given the same assertion cannot both accept it.
   */
  async useAssertion(
    accountId: number,
    providerId: number,
    assertionId: string,
    expires: number,
    now: number,
  ): Promise<boolean> {
    await this.db
      .deleteFrom("idp_assertions")
      .where("account_id", "=", accountId)
      .where("expires", "<", now)
      .execute();
    const result = await this.db
      .insertInto("idp_assertions")
      .values({ account_id: accountId, provider_id: providerId, assertion_id: assertionId, expires })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }
}
