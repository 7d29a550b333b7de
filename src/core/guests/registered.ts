// The guests list (/api/guests): users created by portal registration and identity-provider
// sign-in, with how and where they registered (registered-repo.ts).
import type { Page, PageRequest } from "../shared/pages.ts";
import { parseSort } from "../shared/sort.ts";
import type { RegisteredGuestFilter, RegisteredGuestRow, RegisteredGuestsRepo } from "./registered-repo.ts";
import { GUEST_SORT_FIELDS } from "./rules.ts";

export interface RegisteredGuest {
  id: number;
  username: string;
  email: string;
  fullname: string;
  status: string;
  source: string;
  /** null for guests registered before Wisp recorded it (migration 038). */
  method: string | null;
  /** The portal and its network; name and network null when the portal was deleted since. */
  portal: { id: number; name: string | null; network_id: number | null } | null;
  identity_provider: { id: number; name: string | null } | null;
  client_mac: string | null;
  created: string;
  updated: string;
}

function present(row: RegisteredGuestRow): RegisteredGuest {
  return {
    id: Number(row.id),
    username: row.username,
    email: row.email,
    fullname: row.fullname,
    status: row.status,
    source: row.source,
    method: row.guest_method,
    portal:
      row.guest_portal_id === null
        ? null
        : { id: row.guest_portal_id, name: row.portal_name, network_id: row.portal_network_id },
    identity_provider:
      row.guest_provider_id === null ? null : { id: row.guest_provider_id, name: row.provider_name },
    client_mac: row.guest_client_mac,
    created: row.created,
    updated: row.updated,
  };
}

export class RegisteredGuests {
  constructor(private readonly repo: RegisteredGuestsRepo) {}

  async list(
    accountId: number,
    filter: RegisteredGuestFilter,
    page: PageRequest,
    sort?: string,
  ): Promise<Page<RegisteredGuest>> {
    const { rows, total } = await this.repo.list(accountId, filter, page, parseSort(sort, GUEST_SORT_FIELDS));
    return { data: rows.map(present), page: page.page, total, limit: page.limit };
  }
}
