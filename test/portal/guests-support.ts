// Shared set-up of the verified-guest tests: a Wisp with an SMTP server of the test's, a network and
// guest group, portals made with verification settings, and a guest "device" (a cookie jar with a
// MAC) that opens the portal through MikroTik-style gateway parameters and registers.
import assert from "node:assert/strict";
import type { CaptivePortal, PortalInput } from "../../src/core/portals/service.ts";
import { MemoryCounterStore } from "../../src/http/rate-limit.ts";
import { ConsoleClient, type PageResponse } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";
import { TestSmtp } from "../support/smtp.ts";

export interface GuestLab {
  server: TestServer;
  smtp: TestSmtp;
  accountId: number;
  networkId: number;
  groupId: number;
  portal(input: PortalInput): Promise<CaptivePortal>;
  stop(): Promise<void>;
}

export async function startGuestLab(env: Record<string, string> = {}): Promise<GuestLab> {
  const smtp = await TestSmtp.start();
  const server = await startTestServer({
    counters: new MemoryCounterStore(),
    portal: { attemptsPerAddress: 10_000, attemptsPerDevice: 1_000, windowMs: 60_000 },
    env: { ...smtp.env(), WEBHOOK_ALLOW_PRIVATE: "1", ...env },
  });
  const accountId = (await server.account("default")).id;
  const networkId = (await server.core.networks.create(accountId, { name: "venue", nas_ip: "192.0.2.50" }))
    .network.id;
  const groupId = (await server.core.groups.create(accountId, { name: "verified-guests" })).id;
  let count = 0;
  return {
    server,
    smtp,
    accountId,
    networkId,
    groupId,
    portal: (input) =>
      server.core.portals.create(accountId, {
        name: `guests ${++count}`,
        network_id: networkId,
        vendor: "mikrotik",
        methods: ["registration"],
        guest_group_id: groupId,
        title: "Hotel Lobby",
        ...input,
      }),
    async stop() {
      await server.stop();
      await smtp.close();
    },
  };
}

let devices = 0;

/** A guest's device: its own cookies, MAC and client address (X-Forwarded-For is not trusted: one address). */
export class GuestDevice {
  readonly client: ConsoleClient;
  readonly mac: string;
  /** The guest's request page, once registered. */
  page = "";

  constructor(
    readonly lab: GuestLab,
    readonly portal: CaptivePortal,
    mac?: string,
  ) {
    this.client = new ConsoleClient(lab.server.url);
    this.mac =
      mac ??
      `AA:BB:CC:27:${String(Math.floor(++devices / 100)).padStart(2, "0")}:${String(devices % 100).padStart(2, "0")}`;
  }

  get gateway(): string {
    return new URLSearchParams({ "link-login-only": "http://10.5.50.1/login", mac: this.mac }).toString();
  }

  async open(): Promise<PageResponse> {
    return this.client.get(`/portal/${this.portal.id}?${this.gateway}`);
  }

  /** Opens the portal and registers; on a 303 the request page is kept in `page`. */
  async register(fields: Record<string, string>): Promise<PageResponse> {
    await this.open();
    const answer = await this.client.post(`/portal/${this.portal.id}`, {
      method: "registration",
      name: "Ana García",
      terms: "yes",
      gw: this.gateway,
      ...fields,
    });
    if (answer.status === 303) {
      assert.match(
        answer.location ?? "",
        new RegExp(`^/portal/${this.portal.id}/guest/[A-Za-z0-9_-]{43}\\?lang=`),
      );
      this.page = (answer.location ?? "").replace(/\?.*$/, "");
    }
    return answer;
  }

  view(): Promise<PageResponse> {
    return this.client.get(this.page);
  }

  /** Posts one of the request page's forms (code, resend, preverify, connect) with the page's token. */
  async act(action: "code" | "resend" | "preverify" | "connect", fields: Record<string, string> = {}) {
    await this.view();
    return this.client.post(`${this.page}/${action}`, fields);
  }
}

/** A link from a mail, on the test server's origin (mails carry PUBLIC_URL, which tests do not set). */
export function local(lab: GuestLab, link: string): string {
  const url = new URL(link);
  assert.ok(url.pathname.startsWith("/portal/"), link);
  void lab;
  return `${url.pathname}${url.search}`;
}

/** The events of a kind written so far (the outbox), newest last. */
export async function eventsOf(lab: GuestLab, kind: string): Promise<Record<string, unknown>[]> {
  const rows = await lab.server.core.database.db
    .selectFrom("events")
    .select(["data"])
    .where("account_id", "=", lab.accountId)
    .where("kind", "=", kind)
    .orderBy("id")
    .execute();
  return rows.map((r) => JSON.parse(r.data) as Record<string, unknown>);
}

/** The hand-off form's action and hidden fields (MikroTik: a form posted to the router's login URL). */
export function handoffOf(text: string): { action: string; fields: Record<string, string> } {
  const decode = (s: string) =>
    s
      .replace(/&amp;/g, "&")
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'");
  const action = /<form id="handoff" method="post" action="([^"]+)">/.exec(text)?.[1];
  assert.ok(action, `a hand-off form in: ${text.slice(0, 400)}`);
  const fields: Record<string, string> = {};
  for (const [, name, value] of text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[decode(name ?? "")] = decode(value ?? "");
  }
  return { action: decode(action), fields };
}
