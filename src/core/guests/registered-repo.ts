// SQL of the guests list (/api/guests): the users a captive portal or an identity-provider sign-in
// created (users.source "portal" or "idp", migration 038), with their portal and provider names.
import type { Kysely } from "kysely";
import { sql } from "kysely";
import type { DialectName } from "../../db/database.ts";
import type { Schema } from "../../db/schema.ts";
import { ordered, type SortPlan } from "../../db/sort.ts";
import { offsetOf, type PageRequest } from "../shared/pages.ts";
import type { Sort } from "../shared/sort.ts";
import { likePattern } from "../shared/text.ts";
import type { GuestSortField } from "./rules.ts";

export interface RegisteredGuestFilter {
  source?: string | undefined;
  method?: string | undefined;
  portalId?: number | undefined;
  providerId?: number | undefined;
  search?: string | undefined;
}

export interface RegisteredGuestRow {
  id: number;
  username: string;
  email: string;
  fullname: string;
  status: string;
  source: string;
  guest_method: string | null;
  guest_portal_id: number | null;
  portal_name: string | null;
  portal_network_id: number | null;
  guest_provider_id: number | null;
  provider_name: string | null;
  guest_client_mac: string | null;
  created: string;
  updated: string;
}

const SORT: SortPlan<GuestSortField> = {
  keys: {
    id: { column: "u.id" },
    username: { column: "u.username", text: true },
    email: { column: "u.email", text: true },
    fullname: { column: "u.fullname", text: true },
    method: { column: "u.guest_method", nullable: true },
    created: { column: "u.created" },
  },
  defaultOrder: [{ field: "id", descending: false }],
  unique: [{ column: "u.id" }],
};

export class RegisteredGuestsRepo {
  constructor(
    private readonly db: Kysely<Schema>,
    private readonly dialect: DialectName,
  ) {}

  private filtered(accountId: number, filter: RegisteredGuestFilter) {
    let query = this.db
      .selectFrom("users as u")
      .where("u.account_id", "=", accountId)
      .where("u.source", "in", filter.source ? [filter.source] : ["portal", "idp"]);
    if (filter.method) query = query.where("u.guest_method", "=", filter.method);
    if (filter.portalId !== undefined) query = query.where("u.guest_portal_id", "=", filter.portalId);
    if (filter.providerId !== undefined) query = query.where("u.guest_provider_id", "=", filter.providerId);
    if (filter.search) {
      const pattern = likePattern(filter.search);
      query = query.where((eb) =>
        eb.or(
          ["u.username", "u.email", "u.fullname"].map(
            (column) => sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`,
          ),
        ),
      );
    }
    return query;
  }

  async list(
    accountId: number,
    filter: RegisteredGuestFilter,
    page: PageRequest,
    sort: Sort<GuestSortField> | undefined,
  ): Promise<{ rows: RegisteredGuestRow[]; total: number }> {
    const query = this.filtered(accountId, filter);
    const rows = ordered(
      query
        .leftJoin("captive_portals as p", (join) =>
          join.onRef("p.id", "=", "u.guest_portal_id").onRef("p.account_id", "=", "u.account_id"),
        )
        .leftJoin("identity_providers as i", (join) =>
          join.onRef("i.id", "=", "u.guest_provider_id").onRef("i.account_id", "=", "u.account_id"),
        )
        .select([
          "u.id",
          "u.username",
          "u.email",
          "u.fullname",
          "u.status",
          "u.source",
          "u.guest_method",
          "u.guest_portal_id",
          "p.name as portal_name",
          "p.network_id as portal_network_id",
          "u.guest_provider_id",
          "i.display_name as provider_name",
          "u.guest_client_mac",
          "u.created",
          "u.updated",
        ]),
      this.dialect,
      SORT,
      sort,
    );
    const [found, count] = await Promise.all([
      rows.limit(page.limit).offset(offsetOf(page)).execute(),
      query.select((eb) => eb.fn.countAll<number>().as("total")).executeTakeFirstOrThrow(),
    ]);
    return { rows: found as RegisteredGuestRow[], total: Number(count.total) };
  }
}
