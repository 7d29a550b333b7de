// Demo data for an account, so reports, the console and benchmarks have something real to show:
// sites (networks) with access points, users with devices, a batch of vouchers, and days of
// authentication requests and sessions. Guests come and go through the day (peaks in the morning,
// at lunch and in the evening, busier at weekends), staff work weekdays; visits roam between the
// site's access points (one session per association, as 802.11 accounting reports them); a share
// of attempts is rejected with Wisp's own reasons. Random but reproducible (seeded by the
// account). No events are written: demo data must not fire webhooks. Runs once per account.
import { createHash } from "node:crypto";
import type { Database } from "../../db/database.ts";
import { isUniqueViolation } from "../../db/database.ts";
import { generateSecret, shortnameOf } from "../networks/rules.ts";
import { claimAddress } from "../networks/service.ts";
import { ConflictError, ValidationError } from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import { CODE_ALPHABET } from "../vouchers/rules.ts";
import { DemoRepo, type DemoWriter } from "./demo-repo.ts";

export interface DemoOptions {
  days: number;
  users: number;
  aps: number;
  /** The seed's end; default now. */
  now?: Date;
}

export interface DemoSummary {
  days: number;
  from: string;
  to: string;
  networks: number;
  access_points: number;
  users: number;
  disabled_users: number;
  vouchers: number;
  used_vouchers: number;
  auth_requests: number;
  rejected: number;
  sessions: number;
  open_sessions: number;
}

export type DemoOutcome =
  | { seeded: true; summary: DemoSummary }
  | { seeded: false; created: string; summary: DemoSummary | null };

export const DEMO_LIMITS = { days: 366, users: 100_000, aps: 1000 } as const;

/** mulberry32: small, fast, good enough for plausible data; the same seed gives the same data. */
class Random {
  constructor(private state: number) {}
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  weighted(weights: readonly number[]): number {
    const total = weights.reduce((a, b) => a + b, 0);
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i]!;
      if (r < 0) return i;
    }
    return weights.length - 1;
  }
  /** Log-normal around `median`: durations and data volumes are skewed like this. */
  logNormal(median: number, sigma: number): number {
    const u = Math.max(this.next(), 1e-12);
    const normal = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
    return median * Math.exp(sigma * normal);
  }
  hex(bytes: number): string {
    let out = "";
    for (let i = 0; i < bytes; i++) out += this.int(0, 255).toString(16).padStart(2, "0");
    return out;
  }
}

const FIRST = [
  "anna",
  "ben",
  "chloe",
  "david",
  "emma",
  "felix",
  "grace",
  "hugo",
  "isla",
  "jonas",
  "kate",
  "liam",
  "maria",
  "noah",
  "olivia",
  "paul",
  "quinn",
  "rosa",
  "sam",
  "tara",
  "umar",
  "vera",
  "will",
  "xenia",
  "yusuf",
  "zoe",
  "amir",
  "bea",
  "carlos",
  "dana",
  "elif",
  "farid",
  "giulia",
  "hana",
  "ivan",
  "jin",
];
const LAST = [
  "smith",
  "garcia",
  "muller",
  "rossi",
  "dubois",
  "nowak",
  "kim",
  "sato",
  "silva",
  "jensen",
  "oconnor",
  "novak",
  "papadopoulos",
  "haddad",
  "ivanova",
  "chen",
  "khan",
  "larsen",
  "moreau",
  "weber",
  "costa",
  "yilmaz",
  "fischer",
  "bianchi",
  "lopez",
  "martin",
  "schmidt",
  "wagner",
  "santos",
  "nguyen",
];
const DOMAINS = ["example.com", "example.org", "example.net", "mail.example"];
const SITES = ["Lobby", "Conference Center", "Cafe", "Library", "East Wing", "West Wing", "Pool", "Garden"];
/** Vendor prefixes of real access points (Cisco Meraki, Ubiquiti, Aruba, Ruckus). */
const AP_OUIS = ["0c:8d:db", "24:5a:4c", "94:b4:0f", "2c:c5:d3"];
const GUEST_SSID = "Wisp Guest";
const STAFF_SSID = "Wisp Staff";
/** When guests arrive, by hour (UTC): quiet nights, morning, lunch and evening peaks. */
const GUEST_HOURS = [1, 0.5, 0.3, 0.2, 0.2, 0.3, 1, 3, 6, 8, 7, 6, 8, 7, 5, 5, 6, 8, 9, 8, 6, 4, 3, 2];
const STAFF_HOURS = [0, 0, 0, 0, 0, 0, 1, 6, 8, 4, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
const LAST_CAUSES = ["User-Request", "Idle-Timeout", "Session-Timeout", "Lost-Carrier", "NAS-Request"];
const LAST_CAUSE_WEIGHTS = [45, 30, 8, 12, 5];
const PROBE_NAMES = ["admin", "guest", "test", "user", "wifi", "root", "support", "demo"];
const DAY = 86_400;
const CODE_CHARACTERS = [...CODE_ALPHABET];

interface Site {
  id: number;
  index: number;
  name: string;
  nasIp: string;
  nasIdentifier: string;
  aps: string[];
}

interface Person {
  id: number;
  username: string;
  staff: boolean;
  disabled: boolean;
  created: number;
  devices: string[];
  home: number;
  visitChance: number;
  /** Bytes per second downloaded while connected. */
  rate: number;
}

/** Rows of one day, flushed to the database before the next day is made. */
interface Batch {
  auths: unknown[][];
  sessions: unknown[][];
}

const AUTH_COLUMNS = [
  "username",
  "pass",
  "reply",
  "calledstationid",
  "callingstationid",
  "authdate",
  "account_id",
  "reason",
  "user_id",
  "voucher_id",
  "network_id",
  "client_mac",
  "ap_mac",
  "ssid",
  "nas_ip",
  "nas_identifier",
];
const SESSION_COLUMNS = [
  "acctsessionid",
  "acctuniqueid",
  "username",
  "nasipaddress",
  "nasporttype",
  "acctstarttime",
  "acctupdatetime",
  "acctstoptime",
  "acctsessiontime",
  "acctauthentic",
  "acctinputoctets",
  "acctoutputoctets",
  "calledstationid",
  "callingstationid",
  "acctterminatecause",
  "servicetype",
  "framedprotocol",
  "framedipaddress",
  "account_id",
  "user_id",
  "voucher_id",
  "network_id",
  "client_mac",
  "ap_mac",
  "ssid",
];

/** A phone's MAC: they randomise it per network, so it is locally administered (bit 1 set). */
function deviceMac(rng: Random): string {
  const first = ((rng.int(0, 255) & 0xfc) | 0x02).toString(16).padStart(2, "0");
  return `${first}:${rng.hex(5).match(/../g)!.join(":")}`;
}

/** FreeRADIUS's station-id style: upper case with dashes. */
const stationMac = (mac: string) => mac.toUpperCase().replace(/:/g, "-");

export function checkDemoOptions(options: DemoOptions): void {
  for (const field of ["days", "users", "aps"] as const) {
    const value = options[field];
    if (!Number.isInteger(value) || value < 1 || value > DEMO_LIMITS[field]) {
      throw ValidationError.field(field, `must be a whole number from 1 to ${DEMO_LIMITS[field]}`);
    }
  }
}

export class DemoSeeder {
  constructor(private readonly repo: DemoRepo) {}

  /** Seeds the account once; a second call adds nothing and says when the first one ran. */
  async seed(
    accountId: number,
    options: DemoOptions,
    progress: (message: string) => void = () => {},
  ): Promise<DemoOutcome> {
    checkDemoOptions(options);
    const previous = await this.repo.findSeed(accountId);
    if (previous) return this.already(previous);
    try {
      const summary = await this.repo.transaction((writer) =>
        this.write(writer, accountId, options, progress),
      );
      return { seeded: true, summary };
    } catch (error) {
      const raced = isUniqueViolation(error) ? await this.repo.findSeed(accountId) : undefined;
      if (raced) return this.already(raced);
      throw error;
    }
  }

  private already(previous: { created: string; summary: string }): DemoOutcome {
    const parsed = JSON.parse(previous.summary) as Partial<DemoSummary>;
    return {
      seeded: false,
      created: previous.created,
      summary: parsed.users ? (parsed as DemoSummary) : null,
    };
  }

  private async write(
    writer: DemoWriter,
    accountId: number,
    options: DemoOptions,
    progress: (message: string) => void,
  ): Promise<DemoSummary> {
    const rng = new Random(accountId * 7919 + options.days * 104_729 + options.users * 31 + options.aps);
    const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
    // The seeded days end with today (up to now): the first starts days - 1 midnights ago.
    const firstDay = (Math.floor(now / DAY) - options.days + 1) * DAY;
    const created = isoNow(new Date(now * 1000));
    await writer.mark(accountId, created);

    const sites = await this.sites(writer, rng, accountId, options.aps, created);
    progress(`${sites.length} networks with ${options.aps} access points`);
    const people = await this.people(writer, rng, accountId, options.users, sites.length, firstDay, now);
    progress(`${people.length} users`);
    const vouchers = await this.vouchers(
      writer,
      rng,
      accountId,
      Math.max(5, Math.round(options.users / 20)),
      {
        firstDay,
        now,
        sites,
      },
    );
    progress(`${vouchers.count} vouchers`);

    const counts = { auths: 0, rejected: 0, sessions: 0, open: 0 };
    const flush = async (batch: Batch) => {
      await writer.insert("radpostauth", AUTH_COLUMNS, batch.auths);
      await writer.insert("radacct", SESSION_COLUMNS, batch.sessions);
      counts.auths += batch.auths.length;
      counts.rejected += batch.auths.filter((row) => row[2] === "Access-Reject").length;
      counts.sessions += batch.sessions.length;
      counts.open += batch.sessions.filter((row) => row[7] === null).length;
    };
    await flush(vouchers.batch);
    const make = new Maker(writer, rng, accountId, sites, now);
    let shown = -1;
    for (let day = 0; day < options.days; day++) {
      const dayStart = firstDay + day * DAY;
      await flush(make.day(dayStart, people));
      const tenth = Math.floor((10 * (day + 1)) / options.days);
      if (tenth !== shown) {
        shown = tenth;
        progress(
          `day ${day + 1}/${options.days}: ${counts.sessions} sessions, ` +
            `${counts.auths} authentication requests`,
        );
      }
    }
    const summary: DemoSummary = {
      days: options.days,
      from: isoNow(new Date(firstDay * 1000)),
      to: created,
      networks: sites.length,
      access_points: options.aps,
      users: people.length,
      disabled_users: people.filter((p) => p.disabled).length,
      vouchers: vouchers.count,
      used_vouchers: vouchers.used,
      auth_requests: counts.auths,
      rejected: counts.rejected,
      sessions: counts.sessions,
      open_sessions: counts.open,
    };
    await writer.finish(accountId, summary);
    // The seed's rows bypass the services that audit one change at a time: one row says what it made.
    await writer.audit({ accountId, resource: "demo", id: accountId, action: "seed", after: summary });
    return summary;
  }

  /** About ten access points per site; addresses from 198.18.0.0/15, the benchmarking range. */
  private async sites(writer: DemoWriter, rng: Random, accountId: number, aps: number, created: string) {
    const count = Math.min(SITES.length, Math.max(1, Math.ceil(aps / 10)));
    const taken = await writer.nasAddresses();
    // Each address is claimed as the networks service claims one (issue 12): not another
    // network's, and apart from other accounts' networks.
    const networks = writer.networks();
    await networks.lockAddresses();
    const addresses: string[] = [];
    const ranges: { range_start: string | null; range_end: string | null }[] = [];
    for (let n = 1; addresses.length < count && n < 131_072; n++) {
      const address = `198.${18 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`;
      if ((n & 255) === 0 || (n & 255) === 255 || taken.has(address)) continue;
      try {
        ranges.push(await claimAddress(networks, accountId, address));
        addresses.push(address);
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    if (addresses.length < count) throw new ValidationError("no free demo addresses left in 198.18.0.0/15");
    const rows = addresses.map((address, i) => {
      const name = `Demo ${SITES[i]}`;
      const identifier = `demo-${SITES[i]!.toLowerCase().replace(/ /g, "-")}`;
      return [
        address,
        shortnameOf(name),
        generateSecret(),
        "Wisp demo site",
        accountId,
        name,
        identifier,
        0,
        created,
        created,
        ranges[i]!.range_start,
        ranges[i]!.range_end,
      ];
    });
    const inserted = await writer.insert(
      "nas",
      [
        "nasname",
        "shortname",
        "secret",
        "description",
        "account_id",
        "name",
        "nas_identifier",
        "require_message_authenticator",
        "created",
        "updated",
        "range_start",
        "range_end",
      ],
      rows,
      ["id", "nasname"],
    );
    const ids = new Map(inserted.map((r) => [String(r.nasname), Number(r.id)]));
    const sites: Site[] = rows.map((row, index) => ({
      id: ids.get(String(row[0]))!,
      index,
      name: String(row[5]),
      nasIp: String(row[0]),
      nasIdentifier: String(row[6]),
      aps: [],
    }));
    for (let i = 0; i < aps; i++)
      sites[i % count]!.aps.push(`${rng.pick(AP_OUIS)}:${rng.hex(3).replace(/(..)(..)(..)/, "$1:$2:$3")}`);
    return sites;
  }

  private async people(
    writer: DemoWriter,
    rng: Random,
    accountId: number,
    count: number,
    siteCount: number,
    firstDay: number,
    now: number,
  ): Promise<Person[]> {
    const taken = await writer.usernames(accountId);
    const people: Omit<Person, "id">[] = [];
    const rows: unknown[][] = [];
    const passwords: unknown[][] = [];
    const start = firstDay;
    while (people.length < count) {
      const first = rng.pick(FIRST);
      const last = rng.pick(LAST);
      let username = `${first}.${last}`;
      for (let n = 2; taken.has(username); n++) username = `${first}.${last}${n}`;
      taken.add(username);
      const staff = rng.chance(0.1);
      // A third were there before the seeded days; the rest sign up along the way.
      const createdAt = rng.chance(0.3) ? start - rng.int(DAY, 90 * DAY) : rng.int(start, now - 60);
      const title = (s: string) => s[0]!.toUpperCase() + s.slice(1);
      let fullname = `${title(first)} ${last === "oconnor" ? "O'Connor" : title(last)}`;
      if (rng.chance(0.02)) fullname += ", Jr.";
      const email = `${first}.${last}@${staff ? "staff.example.com" : rng.pick(DOMAINS)}`;
      const devices = Array.from({ length: rng.weighted([70, 25, 5]) + 1 }, () => deviceMac(rng));
      const person = {
        username,
        staff,
        disabled: rng.chance(0.04),
        created: createdAt,
        devices,
        home: rng.int(0, siteCount - 1),
        visitChance: staff ? 0.6 + rng.next() * 0.3 : Math.min(0.6, rng.logNormal(0.15, 0.7)),
        rate: rng.logNormal(staff ? 30_000 : 60_000, 1),
      };
      people.push(person);
      const iso = isoNow(new Date(createdAt * 1000));
      rows.push([accountId, username, email, fullname, person.disabled ? "disabled" : "enabled", iso, iso]);
      passwords.push([accountId, username, "Cleartext-Password", ":=", rng.hex(6)]);
    }
    const inserted = await writer.insert(
      "users",
      ["account_id", "username", "email", "fullname", "status", "created", "updated"],
      rows,
      ["id", "username"],
    );
    await writer.insert("radcheck", ["account_id", "username", "attribute", "op", "value"], passwords);
    const ids = new Map(inserted.map((r) => [String(r.username), Number(r.id)]));
    return people.map((p) => ({ ...p, id: ids.get(p.username)! }));
  }

  /** One batch of day passes; about 60% were used, each on one device, for a few sessions. */
  private async vouchers(
    writer: DemoWriter,
    rng: Random,
    accountId: number,
    count: number,
    place: { firstDay: number; now: number; sites: Site[] },
  ) {
    const validity = DAY;
    const created = isoNow(new Date((place.firstDay - 2 * DAY) * 1000));
    const [batch] = await writer.insert(
      "voucher_batches",
      ["account_id", "prefix", "quantity", "validity", "usage_limit", "session_timeout", "created"],
      [[accountId, "DEMO", count, validity, 1, 4 * 3600, created]],
      ["id"],
    );
    const taken = await writer.voucherCodes(accountId, "DEMO");
    const codes: string[] = [];
    while (codes.length < count) {
      let code = "DEMO";
      for (let i = 0; i < 8; i++) code += rng.pick(CODE_CHARACTERS);
      if (!taken.has(code)) {
        taken.add(code);
        codes.push(code);
      }
    }
    const plans = codes.map((code) => {
      const latestStart = place.now - 2 * 3600;
      const used = rng.chance(0.6) && latestStart > place.firstDay;
      const firstUsed = used ? rng.int(place.firstDay, latestStart) : null;
      return {
        code,
        firstUsed,
        mac: deviceMac(rng),
      };
    });
    const rows = plans.map((p) => {
      const used = p.firstUsed !== null;
      const iso = (s: number) => isoNow(new Date(s * 1000));
      return [
        accountId,
        p.code,
        used ? "exhausted" : "unused",
        validity,
        1,
        4 * 3600,
        Number(batch!.id),
        created,
        used ? iso(p.firstUsed!) : null,
        used ? iso(p.firstUsed! + validity) : null,
        used ? 1 : 0,
      ];
    });
    const inserted = await writer.insert(
      "vouchers",
      [
        "account_id",
        "code",
        "status",
        "validity",
        "usage_limit",
        "session_timeout",
        "batch_id",
        "created",
        "first_used",
        "expires",
        "devices_used",
      ],
      rows,
      ["id", "code"],
    );
    const ids = new Map(inserted.map((r) => [String(r.code), Number(r.id)]));
    const usedPlans = plans.filter((p) => p.firstUsed !== null);
    await writer.insert(
      "voucher_devices",
      ["account_id", "voucher_id", "mac", "first_seen"],
      usedPlans.map((p) => [accountId, ids.get(p.code), p.mac, isoNow(new Date(p.firstUsed! * 1000))]),
    );
    const make = new Maker(writer, rng, accountId, place.sites, place.now);
    const out: Batch = { auths: [], sessions: [] };
    for (const p of usedPlans)
      make.voucherUse(out, { id: ids.get(p.code)!, code: p.code, mac: p.mac }, p.firstUsed!, validity);
    return { count, used: usedPlans.length, batch: out };
  }
}

/** Makes the rows of visits: authentication attempts, then one session per access point. */
class Maker {
  constructor(
    private readonly writer: DemoWriter,
    private readonly rng: Random,
    private readonly accountId: number,
    private readonly sites: Site[],
    private readonly now: number,
  ) {}

  day(dayStart: number, people: readonly Person[]): Batch {
    const rng = this.rng;
    const out: Batch = { auths: [], sessions: [] };
    const weekday = new Date(dayStart * 1000).getUTCDay();
    const weekend = weekday === 0 || weekday === 6;
    for (const person of people) {
      if (person.created >= dayStart + DAY) continue;
      const chance = person.visitChance * (person.staff ? (weekend ? 0.1 : 1) : weekend ? 1.3 : 1);
      if (!rng.chance(chance)) continue;
      const hours = person.staff ? STAFF_HOURS : GUEST_HOURS;
      const start = dayStart + rng.weighted(hours) * 3600 + rng.int(0, 3599);
      if (start < person.created || start >= this.now) continue;
      const site =
        this.sites[rng.chance(0.9) ? person.home % this.sites.length : rng.int(0, this.sites.length - 1)]!;
      const device = rng.pick(person.devices);
      const ssid = person.staff ? STAFF_SSID : GUEST_SSID;
      const who = { username: person.username, userId: person.id, voucherId: null };
      if (person.disabled) {
        this.auth(out, who, start, site, site.aps[0]!, device, ssid, "user disabled");
        continue;
      }
      if (rng.chance(0.05))
        this.auth(out, who, start - rng.int(15, 90), site, site.aps[0]!, device, ssid, "wrong password");
      const length = person.staff
        ? Math.round(rng.logNormal(8 * 3600, 0.15))
        : Math.round(Math.min(8 * 3600, Math.max(180, rng.logNormal(50 * 60, 0.9))));
      this.visit(out, who, { start, length, site, device, ssid, rate: person.rate });
    }
    // Strangers trying names that do not exist.
    const probes = Math.round(people.length / 150 + rng.next() * 3);
    for (let i = 0; i < probes; i++) {
      const site = rng.pick(this.sites);
      const name = rng.chance(0.5) ? rng.pick(PROBE_NAMES) : `${rng.pick(FIRST)}${rng.int(1, 99)}`;
      const at = dayStart + rng.int(0, DAY - 1);
      if (at >= this.now) continue;
      const mac = deviceMac(rng);
      this.auth(
        out,
        { username: name, userId: null, voucherId: null },
        at,
        site,
        rng.pick(site.aps),
        mac,
        GUEST_SSID,
        "unknown user",
      );
    }
    return out;
  }

  /** A day pass in use: a few visits within its validity, and sometimes a try after it ran out. */
  voucherUse(
    out: Batch,
    voucher: { id: number; code: string; mac: string },
    firstUsed: number,
    validity: number,
  ) {
    const rng = this.rng;
    const who = { username: voucher.code, userId: null, voucherId: voucher.id };
    const site = rng.pick(this.sites);
    let start = firstUsed;
    const end = Math.min(firstUsed + validity, this.now);
    for (let visit = rng.int(1, 3); visit > 0 && start < end; visit--) {
      const length = Math.round(Math.min(4 * 3600, Math.max(300, rng.logNormal(40 * 60, 0.8))));
      this.visit(out, who, {
        start,
        length: Math.min(length, end - start),
        site,
        device: voucher.mac,
        ssid: GUEST_SSID,
        rate: rng.logNormal(50_000, 1),
      });
      start += length + rng.int(1800, 6 * 3600);
    }
    const late = firstUsed + validity + rng.int(600, DAY);
    if (rng.chance(0.1) && late < this.now) {
      this.auth(out, who, late, site, rng.pick(site.aps), voucher.mac, GUEST_SSID, "voucher expired");
    }
  }

  private visit(
    out: Batch,
    who: { username: string; userId: number | null; voucherId: number | null },
    v: { start: number; length: number; site: Site; device: string; ssid: string; rate: number },
  ) {
    const rng = this.rng;
    const aps = v.site.aps;
    const hops = Math.min(5, aps.length - 1, Math.floor(v.length / (rng.int(20, 90) * 60)));
    let ap = rng.int(0, aps.length - 1);
    let segmentStart = v.start;
    for (let segment = 0; segment <= hops; segment++) {
      const last = segment === hops;
      // Roughly even stretches between roams, each a bit longer or shorter.
      const share = (v.start + v.length - segmentStart) / (hops - segment + 1);
      const segmentEnd = last
        ? v.start + v.length
        : segmentStart + Math.round(share * (0.6 + rng.next() * 0.8));
      if (segmentStart >= this.now) break;
      // Each association authenticates, then accounting starts a second or two later.
      this.auth(out, who, segmentStart, v.site, aps[ap]!, v.device, v.ssid, null);
      const start = segmentStart + rng.int(1, 3);
      const open = segmentEnd > this.now;
      const stop = open ? null : Math.max(start + 1, segmentEnd);
      const seconds = (stop ?? this.now) - start;
      const down = Math.round(seconds * v.rate * (0.5 + rng.next()));
      const up = Math.round(down * (0.05 + rng.next() * 0.2));
      const cause = open ? "" : last ? LAST_CAUSES[rng.weighted(LAST_CAUSE_WEIGHTS)]! : "Lost-Carrier";
      const unique = createHash("md5")
        .update(`${this.accountId}:${who.username}:${start}:${aps[ap]}:${rng.next()}`)
        .digest("hex");
      const w = this.writer;
      out.sessions.push([
        rng.hex(8).toUpperCase(),
        unique,
        who.username,
        v.site.nasIp,
        "Wireless-802.11",
        w.sessionTime(start),
        w.sessionTime(open ? this.now - ((this.now - start) % 300) : stop),
        w.sessionTime(stop),
        seconds,
        "RADIUS",
        up,
        down,
        `${stationMac(aps[ap]!)}:${v.ssid}`,
        stationMac(v.device),
        cause,
        "Framed-User",
        "PPP",
        `10.${v.site.index + 1}.${rng.int(0, 255)}.${rng.int(1, 254)}`,
        this.accountId,
        who.userId,
        who.voucherId,
        v.site.id,
        v.device,
        aps[ap],
        v.ssid,
      ]);
      segmentStart = segmentEnd;
      ap = (ap + (rng.chance(0.5) ? 1 : aps.length - 1)) % aps.length;
    }
  }

  private auth(
    out: Batch,
    who: { username: string; userId: number | null; voucherId: number | null },
    at: number,
    site: Site,
    ap: string,
    device: string,
    ssid: string,
    reason: string | null,
  ) {
    out.auths.push([
      who.username,
      "",
      reason === null ? "Access-Accept" : "Access-Reject",
      `${stationMac(ap)}:${ssid}`,
      stationMac(device),
      this.writer.authTime(at),
      this.accountId,
      reason,
      who.userId,
      who.voucherId,
      site.id,
      device,
      ap,
      ssid,
      site.nasIp,
      site.nasIdentifier,
    ]);
  }
}

export function createDemoSeeder(database: Database): DemoSeeder {
  return new DemoSeeder(new DemoRepo(database.db, database.dialect));
}
