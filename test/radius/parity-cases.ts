// One table of login cases, run against Wisp's embedded RADIUS server and against FreeRADIUS 3.2
// reading the same database. Each case owns its usernames and groups, so cases never interfere.
import { createHash } from "node:crypto";
import { ntPasswordHash, papNtPasswordHash } from "../../src/core/aaa/nt-hash.ts";
import type { Pair } from "../../src/core/aaa/pairs.ts";
import { generateNtResponse } from "../../src/radius/mschap/mschapv2.ts";
import { PASSWORD_PARITY_CASES } from "./parity-password-cases.ts";

export interface SessionRow {
  /** Seconds before now the session started. */
  startedAgo: number;
  /** Seconds of session time; a stopped session when given with `stopped`. */
  sessionTime?: number;
  stopped?: boolean;
}

export interface CaseUser {
  username: string;
  check?: [string, string, string][];
  reply?: [string, string, string][];
  groups?: [string, number][];
  status?: "enabled" | "disabled";
  sessions?: SessionRow[];
  /**
   * Check rows written straight into radcheck, as an imported database holds them: the API refuses
   * password items no login could use (an NT-Password that is no hash), FreeRADIUS stores them.
   */
  imported?: boolean;
}

export interface CaseGroup {
  name: string;
  check?: [string, string, string][];
  reply?: [string, string, string][];
}

export interface ParityCase {
  name: string;
  users: CaseUser[];
  groups?: CaseGroup[];
  /**
   * The Access-Request: User-Name first; User-Password for PAP, CHAP-Password for CHAP, or
   * MS-CHAP-Challenge and MS-CHAP2-Response for MS-CHAPv2.
   */
  request: [string, string][];
  expect: "Access-Accept" | "Access-Reject";
  /** Reply values that depend on the clock (Session-Timeout capped by a date) may differ by a second. */
  clockDependent?: boolean;
  /** Set when stock FreeRADIUS cannot express the rule; the case then runs against Wisp only. */
  wispOnly?: string;
  /**
   * Decided at LOGIN_TIME_CLOCK in the local time zone: Wisp's decision clock is set to it and
   * FreeRADIUS runs under faketime(1) at the same offset from the real clock.
   */
  loginTimeClock?: true;
  /** Wisp's reply, exactly (sorted "Name = value"), when the case pins it. */
  reply?: string[];
}

/** Monday 2030-01-07 09:30:05 local time: the Login-Time cases' clock (valid until 09:30:59). */
export const LOGIN_TIME_CLOCK = () => Math.floor(new Date(2030, 0, 7, 9, 30, 5).getTime() / 1000);

const pw = (password: string): [string, string, string] => ["Cleartext-Password", ":=", password];
const nas: [string, string][] = [
  ["NAS-IP-Address", "127.0.0.1"],
  ["NAS-Identifier", "lobby-ap"],
  ["NAS-Port", "20"],
  ["Called-Station-Id", "AA-BB-CC-DD-EE-FF:Guest WiFi"],
  ["Calling-Station-Id", "11-22-33-44-55-66"],
];
const pap = (user: string, password: string): [string, string][] => [
  ["User-Name", user],
  ["User-Password", password],
  ...nas,
];
const chap = (user: string, password: string): [string, string][] => [
  ["User-Name", user],
  ["CHAP-Password", password],
  ...nas,
];

/**
 * MS-CHAPv2 (RFC 2548 section 2.3): the peer's response to a challenge derived from the name, so
 * both servers see the same request and must give the same MS-CHAP2-Success and MPPE keys.
 */
const mschapv2 = (user: string, password: string | Buffer): [string, string][] => {
  const seed = createHash("sha256").update(user).digest();
  const authenticatorChallenge = seed.subarray(0, 16);
  const peerChallenge = seed.subarray(16, 32);
  // A Buffer is the NT hash itself (a peer holding the hash, not the password).
  const hash = typeof password === "string" ? ntPasswordHash(password) : password;
  const ntResponse = generateNtResponse(authenticatorChallenge, peerChallenge, user, hash);
  const response = Buffer.concat([Buffer.of(seed[0]!, 0), peerChallenge, Buffer.alloc(8), ntResponse]);
  return [
    ["User-Name", user],
    ["MS-CHAP-Challenge", `0x${authenticatorChallenge.toString("hex")}`],
    ["MS-CHAP2-Response", `0x${response.toString("hex")}`],
    ...nas,
  ];
};
const ntPassword = (password: string): [string, string, string] => [
  "NT-Password",
  ":=",
  ntPasswordHash(password).toString("hex"),
];

/** A comparison check item on the request, on a user who otherwise would be accepted. */
function operatorCase(
  name: string,
  item: [string, string, string],
  expect: ParityCase["expect"],
): ParityCase {
  const username = `op-${name}`;
  return {
    name: `check operator ${item[0]} ${item[1]} ${item[2]}`,
    users: [{ username, check: [pw("pw"), item], reply: [["Reply-Message", "=", "matched"]] }],
    request: pap(username, "pw"),
    expect,
  };
}

export const PARITY_CASES: ParityCase[] = [
  {
    name: "PAP with the right password",
    users: [{ username: "pap-ok", check: [pw("s3cret")], reply: [["Session-Timeout", ":=", "3600"]] }],
    request: pap("pap-ok", "s3cret"),
    expect: "Access-Accept",
  },
  {
    name: "PAP with a wrong password",
    users: [{ username: "pap-bad", check: [pw("s3cret")] }],
    request: pap("pap-bad", "nope"),
    expect: "Access-Reject",
  },
  { name: "unknown user", users: [], request: pap("nobody-here", "x"), expect: "Access-Reject" },
  // PAP against an NT-Password, as rlm_pap does it: the first Cleartext-Password or NT-Password
  // decides; an NT-Password is compared with the hash of the password sent.
  {
    name: "PAP for a user with only an NT-Password",
    users: [{ username: "pap-nt", check: [ntPassword("nt pw")], reply: [["Session-Timeout", ":=", "120"]] }],
    request: pap("pap-nt", "nt pw"),
    expect: "Access-Accept",
  },
  {
    name: "PAP with a wrong password for a user with only an NT-Password",
    users: [{ username: "pap-nt-bad", check: [ntPassword("nt pw")] }],
    request: pap("pap-nt-bad", "nt pW"),
    expect: "Access-Reject",
  },
  {
    name: "PAP with an NT-Password written 0x... in capitals",
    users: [
      { username: "pap-nt0x", check: [["NT-Password", ":=", `0X${ntPassword("nt pw")[2].toUpperCase()}`]] },
    ],
    request: pap("pap-nt0x", "nt pw"),
    expect: "Access-Accept",
  },
  {
    name: "PAP with an NT-Password in base64 (rlm_pap's normalise)",
    users: [
      { username: "pap-nt64", check: [["NT-Password", ":=", ntPasswordHash("nt pw").toString("base64")]] },
    ],
    request: pap("pap-nt64", "nt pw"),
    expect: "Access-Accept",
  },
  {
    name: "PAP with a non-ASCII password against an NT-Password",
    users: [{ username: "pap-nt-utf8", check: [ntPassword("pässwörd € 漢字")] }],
    request: pap("pap-nt-utf8", "pässwörd € 漢字"),
    expect: "Access-Accept",
  },
  {
    // rlm_pap's UTF-16 conversion reads a four-byte UTF-8 sequence as a three-byte one, so the
    // hash Windows makes of the password (surrogate pairs) does not match, in both servers.
    name: "PAP with a password outside the BMP against its NT-Password",
    users: [{ username: "pap-nt-astral", check: [ntPassword("key 🔑 key")] }],
    request: pap("pap-nt-astral", "key 🔑 key"),
    expect: "Access-Reject",
  },
  {
    // ...and the hash of rlm_pap's own reading of it does: both servers read the octets alike.
    name: "PAP with a password outside the BMP against the hash of rlm_pap's reading of it",
    users: [
      {
        username: "pap-nt-astral-fr",
        check: [["NT-Password", ":=", papNtPasswordHash(Buffer.from("key 🔑 key"))!.toString("hex")]],
      },
    ],
    request: pap("pap-nt-astral-fr", "key 🔑 key"),
    expect: "Access-Accept",
  },
  {
    name: "PAP: an NT-Password that is not a hash fails, even with the password it spells",
    users: [{ username: "pap-nt-text", imported: true, check: [["NT-Password", ":=", "nt pw"]] }],
    request: pap("pap-nt-text", "nt pw"),
    expect: "Access-Reject",
  },
  {
    name: "PAP: an NT-Password of 17 octets (0x and 34 hex digits) is no hash",
    users: [
      {
        username: "pap-nt17",
        imported: true,
        check: [["NT-Password", ":=", `0x${ntPassword("nt pw")[2]}00`]],
      },
    ],
    request: pap("pap-nt17", "nt pw"),
    expect: "Access-Reject",
  },
  {
    name: "PAP: an NT-Password that is not a hash, first, fails before the Cleartext-Password",
    users: [
      {
        username: "pap-nt-text-first",
        imported: true,
        check: [["NT-Password", ":=", "nt pw"], pw("clear pw")],
      },
    ],
    request: pap("pap-nt-text-first", "clear pw"),
    expect: "Access-Reject",
  },
  {
    name: "PAP: a Cleartext-Password first decides before an NT-Password that is not a hash",
    users: [
      {
        username: "pap-clear-first-text",
        imported: true,
        check: [pw("clear pw"), ["NT-Password", ":=", "nt pw"]],
      },
    ],
    request: pap("pap-clear-first-text", "clear pw"),
    expect: "Access-Accept",
  },
  // Both items, disagreeing: the first in the control list decides, the other is not tried.
  ...(
    [
      ["Cleartext-Password", "clear pw", "Access-Accept"],
      ["Cleartext-Password", "nt pw", "Access-Reject"],
      ["NT-Password", "nt pw", "Access-Accept"],
      ["NT-Password", "clear pw", "Access-Reject"],
    ] as const
  ).map(([first, password, expect]): ParityCase => {
    const username = `pap-both-${first.slice(0, 2)}-${password.slice(0, 2)}`;
    const items = [pw("clear pw"), ntPassword("nt pw")];
    return {
      name: `PAP with both password items, ${first} first: "${password}"`,
      users: [{ username, check: first === "Cleartext-Password" ? items : items.reverse() }],
      request: pap(username, password),
      expect,
    };
  }),
  {
    name: "CHAP with the right password",
    users: [{ username: "chap-ok", check: [pw("chap-pw")], reply: [["Idle-Timeout", ":=", "600"]] }],
    request: chap("chap-ok", "chap-pw"),
    expect: "Access-Accept",
  },
  {
    name: "CHAP with a wrong password",
    users: [{ username: "chap-bad", check: [pw("chap-pw")] }],
    request: chap("chap-bad", "other"),
    expect: "Access-Reject",
  },
  {
    name: "CHAP for a user with only an NT-Password",
    users: [{ username: "chap-nt", check: [ntPassword("chap-pw")] }],
    request: chap("chap-nt", "chap-pw"),
    expect: "Access-Reject",
  },
  {
    name: "user without a password",
    users: [{ username: "no-pw", reply: [["Session-Timeout", ":=", "60"]] }],
    request: pap("no-pw", "x"),
    expect: "Access-Reject",
  },
  {
    name: "Auth-Type := Reject beats the right password",
    users: [{ username: "authtype-reject", check: [pw("pw"), ["Auth-Type", ":=", "Reject"]] }],
    request: pap("authtype-reject", "pw"),
    expect: "Access-Reject",
  },
  {
    name: "Auth-Type := Accept needs no password",
    users: [
      {
        username: "authtype-accept",
        check: [["Auth-Type", ":=", "Accept"]],
        reply: [["Reply-Message", ":=", "welcome"]],
      },
    ],
    request: pap("authtype-accept", "anything"),
    expect: "Access-Accept",
  },
  {
    name: "usernames match exactly, not ignoring case",
    users: [{ username: "CaseUser", check: [pw("pw")] }],
    request: pap("caseuser", "pw"),
    expect: "Access-Reject",
  },
  operatorCase("eq-match", ["NAS-Identifier", "==", "lobby-ap"], "Access-Accept"),
  operatorCase("eq-miss", ["NAS-Identifier", "==", "roof-ap"], "Access-Reject"),
  operatorCase("ne", ["NAS-Identifier", "!=", "roof-ap"], "Access-Accept"),
  operatorCase("ne-miss", ["NAS-Identifier", "!=", "lobby-ap"], "Access-Reject"),
  operatorCase("gt", ["NAS-Port", ">", "10"], "Access-Accept"),
  operatorCase("gt-miss", ["NAS-Port", ">", "20"], "Access-Reject"),
  operatorCase("ge", ["NAS-Port", ">=", "20"], "Access-Accept"),
  operatorCase("lt", ["NAS-Port", "<", "21"], "Access-Accept"),
  operatorCase("lt-miss", ["NAS-Port", "<", "3"], "Access-Reject"),
  operatorCase("le", ["NAS-Port", "<=", "20"], "Access-Accept"),
  operatorCase("regex", ["Called-Station-Id", "=~", "^AA-BB-.*:Guest"], "Access-Accept"),
  operatorCase("regex-miss", ["Called-Station-Id", "=~", "^FF-"], "Access-Reject"),
  operatorCase("not-regex", ["Called-Station-Id", "!~", "Staff$"], "Access-Accept"),
  operatorCase("present", ["Calling-Station-Id", "=*", "ANY"], "Access-Accept"),
  // FreeRADIUS ignores the value of =* and !* but still parses it for the attribute's type.
  operatorCase("present-miss", ["Framed-IP-Address", "=*", "0.0.0.0"], "Access-Reject"),
  operatorCase("absent", ["Framed-IP-Address", "!*", "0.0.0.0"], "Access-Accept"),
  operatorCase("absent-miss", ["NAS-Port", "!*", "0"], "Access-Reject"),
  // Addresses compare as addresses: by value, not by their text.
  operatorCase("ip-lt", ["NAS-IP-Address", "<", "127.0.0.10"], "Access-Accept"),
  operatorCase("ip-gt-miss", ["NAS-IP-Address", ">", "127.0.0.10"], "Access-Reject"),
  ...(
    [
      ["ipv6-eq", "==", "2001:DB8:0:0:0:0:0:A", "Access-Accept"],
      ["ipv6-lt", "<", "2001:db8::10", "Access-Accept"],
      ["ipv6-gt-miss", ">", "2001:db8::10", "Access-Reject"],
    ] as const
  ).map(([name, op, value, expect]): ParityCase => {
    const username = `op-${name}`;
    return {
      name: `check operator NAS-IPv6-Address ${op} ${value}`,
      users: [{ username, check: [pw("pw"), ["NAS-IPv6-Address", op, value]] }],
      request: [...pap(username, "pw"), ["NAS-IPv6-Address", "2001:db8::a"]],
      expect,
    };
  }),
  {
    name: "reply: the user's = stays against a group's =, a group's := overrides",
    users: [
      {
        username: "merge-1",
        check: [pw("pw")],
        reply: [
          ["Session-Timeout", "=", "100"],
          ["Idle-Timeout", "=", "10"],
        ],
        groups: [["merge-g1", 1]],
      },
    ],
    groups: [
      {
        name: "merge-g1",
        reply: [
          ["Session-Timeout", "=", "200"],
          ["Idle-Timeout", ":=", "20"],
        ],
      },
    ],
    request: pap("merge-1", "pw"),
    expect: "Access-Accept",
  },
  {
    name: "reply: += appends to the user's items",
    users: [
      {
        username: "merge-2",
        check: [pw("pw")],
        reply: [["Reply-Message", "+=", "first"]],
        groups: [["merge-g2", 1]],
      },
    ],
    groups: [
      {
        name: "merge-g2",
        reply: [
          ["Reply-Message", "+=", "second"],
          ["Class", "=", "guests"],
        ],
      },
    ],
    request: pap("merge-2", "pw"),
    expect: "Access-Accept",
  },
  {
    name: "groups by priority: only the first matching group without Fall-Through",
    users: [
      {
        username: "prio-1",
        check: [pw("pw")],
        groups: [
          ["prio-late", 5],
          ["prio-early", 1],
        ],
      },
    ],
    groups: [
      { name: "prio-early", reply: [["Session-Timeout", ":=", "100"]] },
      {
        name: "prio-late",
        reply: [
          ["Session-Timeout", ":=", "500"],
          ["Idle-Timeout", ":=", "50"],
        ],
      },
    ],
    request: pap("prio-1", "pw"),
    expect: "Access-Accept",
  },
  {
    name: "groups: Fall-Through = Yes goes on to the next group",
    users: [
      {
        username: "fall-1",
        check: [pw("pw")],
        groups: [
          ["fall-a", 1],
          ["fall-b", 2],
        ],
      },
    ],
    groups: [
      {
        name: "fall-a",
        reply: [
          ["Session-Timeout", ":=", "100"],
          ["Fall-Through", "=", "Yes"],
        ],
      },
      {
        name: "fall-b",
        reply: [
          ["Session-Timeout", ":=", "500"],
          ["Idle-Timeout", ":=", "50"],
        ],
      },
    ],
    request: pap("fall-1", "pw"),
    expect: "Access-Accept",
  },
  {
    name: "groups: a group whose check items fail is skipped",
    users: [
      {
        username: "gcheck-1",
        check: [pw("pw")],
        groups: [
          ["gcheck-roof", 1],
          ["gcheck-any", 2],
        ],
      },
    ],
    groups: [
      {
        name: "gcheck-roof",
        check: [["NAS-Identifier", "==", "roof-ap"]],
        reply: [["Session-Timeout", ":=", "100"]],
      },
      { name: "gcheck-any", reply: [["Session-Timeout", ":=", "700"]] },
    ],
    request: pap("gcheck-1", "pw"),
    expect: "Access-Accept",
  },
  {
    name: "the password can come from a group",
    users: [{ username: "gpass-1", groups: [["gpass", 1]] }],
    groups: [{ name: "gpass", check: [pw("group-pw")], reply: [["Reply-Message", ":=", "from group"]] }],
    request: pap("gpass-1", "group-pw"),
    expect: "Access-Accept",
  },
  {
    name: "the user's Fall-Through = No stops before the groups",
    users: [
      {
        username: "nofall-1",
        check: [pw("pw")],
        reply: [
          ["Fall-Through", "=", "No"],
          ["Idle-Timeout", ":=", "5"],
        ],
        groups: [["nofall-g", 1]],
      },
    ],
    groups: [{ name: "nofall-g", reply: [["Session-Timeout", ":=", "999"]] }],
    request: pap("nofall-1", "pw"),
    expect: "Access-Accept",
  },
  {
    name: "the user's failing check items drop its reply items but not its groups",
    users: [
      {
        username: "ucheck-1",
        check: [pw("pw"), ["NAS-Identifier", "==", "roof-ap"]],
        reply: [["Idle-Timeout", ":=", "5"]],
        groups: [["ucheck-g", 1]],
      },
    ],
    groups: [{ name: "ucheck-g", check: [pw("pw")], reply: [["Session-Timeout", ":=", "300"]] }],
    request: pap("ucheck-1", "pw"),
    expect: "Access-Accept",
  },
  {
    name: "SQL-Group in a check item tests membership",
    users: [
      {
        username: "sqlgroup-1",
        check: [pw("pw"), ["SQL-Group", "==", "sqlgroup-staff"]],
        groups: [["sqlgroup-staff", 1]],
      },
    ],
    groups: [{ name: "sqlgroup-staff", reply: [["Session-Timeout", ":=", "42"]] }],
    request: pap("sqlgroup-1", "pw"),
    expect: "Access-Accept",
  },
  {
    name: "vendor reply attributes (WISPr, Mikrotik, ChilliSpot)",
    users: [
      {
        username: "vendor-1",
        check: [pw("pw")],
        reply: [
          ["WISPr-Bandwidth-Max-Down", ":=", "2000000"],
          ["Mikrotik-Rate-Limit", ":=", "2M/4M"],
          ["ChilliSpot-Max-Total-Octets", ":=", "1000000000"],
        ],
      },
    ],
    request: pap("vendor-1", "pw"),
    expect: "Access-Accept",
  },
  {
    name: "Expiration in the past rejects",
    users: [{ username: "expired-1", check: [pw("pw"), ["Expiration", ":=", "1000000000"]] }],
    request: pap("expired-1", "pw"),
    expect: "Access-Reject",
  },
  {
    name: "Expiration in the future caps Session-Timeout",
    users: [
      {
        username: "expires-1",
        check: [pw("pw"), ["Expiration", ":=", String(Math.floor(Date.now() / 1000) + 1800)]],
        reply: [["Session-Timeout", ":=", "86400"]],
      },
    ],
    request: pap("expires-1", "pw"),
    expect: "Access-Accept",
    clockDependent: true,
  },
  {
    name: "Simultaneous-Use := 1 with one open session rejects",
    users: [
      {
        username: "simul-1",
        check: [pw("pw"), ["Simultaneous-Use", ":=", "1"]],
        sessions: [{ startedAgo: 600 }],
      },
    ],
    request: pap("simul-1", "pw"),
    expect: "Access-Reject",
  },
  {
    name: "Simultaneous-Use := 2 with one open session accepts",
    users: [
      {
        username: "simul-2",
        check: [pw("pw"), ["Simultaneous-Use", ":=", "2"]],
        sessions: [{ startedAgo: 600 }],
      },
    ],
    request: pap("simul-2", "pw"),
    expect: "Access-Accept",
  },
  {
    name: "Simultaneous-Use := 1 with only closed sessions accepts",
    users: [
      {
        username: "simul-3",
        check: [pw("pw"), ["Simultaneous-Use", ":=", "1"]],
        sessions: [{ startedAgo: 600, sessionTime: 300, stopped: true }],
      },
    ],
    request: pap("simul-3", "pw"),
    expect: "Access-Accept",
  },
  {
    name: "Max-All-Session left over caps Session-Timeout",
    users: [
      {
        username: "maxall-1",
        check: [pw("pw"), ["Max-All-Session", ":=", "3600"]],
        sessions: [{ startedAgo: 5000, sessionTime: 1000, stopped: true }],
      },
    ],
    request: pap("maxall-1", "pw"),
    expect: "Access-Accept",
  },
  {
    name: "Max-All-Session used up rejects",
    users: [
      {
        username: "maxall-2",
        check: [pw("pw"), ["Max-All-Session", ":=", "3600"]],
        sessions: [{ startedAgo: 9000, sessionTime: 4000, stopped: true }],
      },
    ],
    request: pap("maxall-2", "pw"),
    expect: "Access-Reject",
  },
  {
    name: "Max-Daily-Session left over caps Session-Timeout",
    users: [
      {
        username: "maxdaily-1",
        check: [pw("pw"), ["Max-Daily-Session", ":=", "3600"]],
        sessions: [{ startedAgo: 400, sessionTime: 300, stopped: true }],
      },
    ],
    request: pap("maxdaily-1", "pw"),
    expect: "Access-Accept",
    // Within an hour of midnight sqlcounter adds the next day's allowance: the value moves with the clock.
    clockDependent: true,
  },
  {
    name: "Max-Daily-Session used up rejects",
    users: [
      {
        username: "maxdaily-2",
        check: [pw("pw"), ["Max-Daily-Session", ":=", "600"]],
        sessions: [{ startedAgo: 700, sessionTime: 650, stopped: true }],
      },
    ],
    request: pap("maxdaily-2", "pw"),
    expect: "Access-Reject",
  },
  {
    name: "Max-Monthly-Session left over caps Session-Timeout",
    users: [
      {
        username: "maxmonthly-1",
        check: [pw("pw"), ["Max-Monthly-Session", ":=", "7200"]],
        sessions: [{ startedAgo: 1200, sessionTime: 1000, stopped: true }],
      },
    ],
    request: pap("maxmonthly-1", "pw"),
    expect: "Access-Accept",
    clockDependent: true,
  },
  {
    name: "Max-Monthly-Session used up rejects",
    users: [
      {
        username: "maxmonthly-2",
        check: [pw("pw"), ["Max-Monthly-Session", ":=", "600"]],
        sessions: [{ startedAgo: 700, sessionTime: 650, stopped: true }],
      },
    ],
    request: pap("maxmonthly-2", "pw"),
    expect: "Access-Reject",
  },
  {
    name: "Expire-After counts from the first login",
    users: [
      {
        username: "expafter-1",
        check: [pw("pw"), ["Expire-After", ":=", "86400"]],
        sessions: [{ startedAgo: 1000, sessionTime: 100, stopped: true }],
      },
    ],
    request: pap("expafter-1", "pw"),
    expect: "Access-Accept",
    clockDependent: true,
  },
  {
    name: "Expire-After elapsed rejects",
    users: [
      {
        username: "expafter-2",
        check: [pw("pw"), ["Expire-After", ":=", "3600"]],
        sessions: [{ startedAgo: 7200, sessionTime: 100, stopped: true }],
      },
    ],
    request: pap("expafter-2", "pw"),
    expect: "Access-Reject",
  },
  {
    name: "a disabled user is rejected",
    users: [{ username: "disabled-1", check: [pw("pw")], status: "disabled" }],
    request: pap("disabled-1", "pw"),
    expect: "Access-Reject",
  },
  {
    name: "MS-CHAPv2 with the right password: MS-CHAP2-Success and MPPE keys",
    users: [{ username: "mschap-ok", check: [pw("mschap pw")], reply: [["Session-Timeout", ":=", "900"]] }],
    request: mschapv2("mschap-ok", "mschap pw"),
    expect: "Access-Accept",
  },
  {
    name: "MS-CHAPv2 with a wrong password",
    users: [{ username: "mschap-bad", check: [pw("mschap pw")] }],
    request: mschapv2("mschap-bad", "mschap pW"),
    expect: "Access-Reject",
  },
  {
    name: "MS-CHAPv2 for a user with only an NT-Password",
    users: [{ username: "mschap-nt", check: [ntPassword("nt pw")] }],
    request: mschapv2("mschap-nt", "nt pw"),
    expect: "Access-Accept",
  },
  {
    name: "MS-CHAPv2 with an NT-Password written 0x...",
    users: [{ username: "mschap-nt0x", check: [["NT-Password", ":=", `0x${ntPassword("nt pw")[2]}`]] }],
    request: mschapv2("mschap-nt0x", "nt pw"),
    expect: "Access-Accept",
  },
  {
    name: "MS-CHAPv2 with an NT-Password in base64 (rlm_pap's normalise runs first)",
    users: [
      { username: "mschap-nt64", check: [["NT-Password", ":=", ntPasswordHash("nt pw").toString("base64")]] },
    ],
    request: mschapv2("mschap-nt64", "nt pw"),
    expect: "Access-Accept",
  },
  {
    name: "MS-CHAPv2: an NT-Password that is no hash is passed over for the Cleartext-Password",
    users: [
      {
        username: "mschap-ntbad",
        imported: true,
        check: [pw("clear pw"), ["NT-Password", ":=", "clear pw"]],
      },
    ],
    request: mschapv2("mschap-ntbad", "clear pw"),
    expect: "Access-Accept",
  },
  {
    name: "MS-CHAPv2: an NT-Password of 16 octets is the hash itself",
    users: [{ username: "mschap-nt16", check: [["NT-Password", ":=", "sixteen-octets!!"]] }],
    request: mschapv2("mschap-nt16", Buffer.from("sixteen-octets!!")),
    expect: "Access-Accept",
  },
  {
    name: "MS-CHAPv2: an NT-Password beats the Cleartext-Password",
    users: [{ username: "mschap-both", check: [pw("clear pw"), ntPassword("nt pw")] }],
    request: mschapv2("mschap-both", "clear pw"),
    expect: "Access-Reject",
  },
  {
    name: "MS-CHAPv2 with a non-ASCII password",
    users: [{ username: "mschap-utf8", check: [pw("pässwörd €")] }],
    request: mschapv2("mschap-utf8", "pässwörd €"),
    expect: "Access-Accept",
  },
  {
    name: "MS-CHAPv2 for an unknown user",
    users: [],
    request: mschapv2("mschap-nobody", "x"),
    expect: "Access-Reject",
  },
  {
    name: "MS-CHAPv2 for a disabled user",
    users: [{ username: "mschap-disabled", check: [pw("pw")], status: "disabled" }],
    request: mschapv2("mschap-disabled", "pw"),
    expect: "Access-Reject",
  },
  {
    name: "MS-CHAPv2 with Auth-Type := Accept",
    users: [{ username: "mschap-accept", check: [["Auth-Type", ":=", "Accept"]] }],
    request: mschapv2("mschap-accept", "anything"),
    expect: "Access-Accept",
  },
  // CHAP and MS-CHAPv2 need the clear or NT form, which a Password-With-Header may give.
  {
    name: "CHAP with a Password-With-Header {clear}",
    users: [{ username: "chap-pwh", check: [["Password-With-Header", ":=", "{clear}chap pw"]] }],
    request: chap("chap-pwh", "chap pw"),
    expect: "Access-Accept",
  },
  {
    name: "CHAP for a user with only an SSHA-Password",
    users: [{ username: "chap-ssha", check: [["SSHA-Password", ":=", "qUqP5cyxm6YcTAhz05Hph5gvu9M2YWx0"]] }],
    request: chap("chap-ssha", "chap pw"),
    expect: "Access-Reject",
  },
  {
    name: "MS-CHAPv2 with a Password-With-Header {nthash}",
    users: [
      {
        username: "mschap-pwh",
        check: [["Password-With-Header", ":=", `{nthash}${ntPasswordHash("nt pw").toString("hex")}`]],
      },
    ],
    request: mschapv2("mschap-pwh", "nt pw"),
    expect: "Access-Accept",
  },
  {
    name: "MS-CHAPv2 for a user with only a Crypt-Password",
    users: [
      { username: "mschap-crypt", check: [["Crypt-Password", ":=", "$1$salt$qJH7.N4xYta3aEG/dfqo/0"]] },
    ],
    request: mschapv2("mschap-crypt", "password"),
    expect: "Access-Reject",
  },
  ...PASSWORD_PARITY_CASES,
  ...loginTimeCases(),
];

/** rlm_logintime (Login-Time), decided at Monday 09:30:05 (LOGIN_TIME_CLOCK). */
function loginTimeCases(): ParityCase[] {
  const user = (username: string, window: string, reply: [string, string, string][] = []): CaseUser => ({
    username,
    check: [pw("pw"), ["Login-Time", ":=", window]],
    reply,
  });
  const at = (c: Omit<ParityCase, "loginTimeClock">): ParityCase => ({ ...c, loginTimeClock: true });
  return [
    at({
      name: "Login-Time inside Wk0900-1700,Sa1000-1400: Session-Timeout to 17:00 inclusive",
      users: [user("lt-office", "Wk0900-1700,Sa1000-1400")],
      request: pap("lt-office", "pw"),
      expect: "Access-Accept",
      reply: ["Session-Timeout = 27060"],
    }),
    at({
      name: "Login-Time outside Sa1000-1400",
      users: [user("lt-saturday", "Sa1000-1400")],
      request: pap("lt-saturday", "pw"),
      expect: "Access-Reject",
    }),
    at({
      name: "Login-Time outside a night window Al2200-0600 (it wraps inside each day)",
      users: [user("lt-night", "Al2200-0600")],
      request: pap("lt-night", "pw"),
      expect: "Access-Reject",
    }),
    at({
      name: "Login-Time keeps a smaller Session-Timeout from radreply",
      users: [user("lt-short", "Al0800-2000", [["Session-Timeout", ":=", "3600"]])],
      request: pap("lt-short", "pw"),
      expect: "Access-Accept",
      reply: ["Session-Timeout = 3600"],
    }),
    at({
      name: "Login-Time caps a larger Session-Timeout from radreply",
      users: [user("lt-long", "Al0800-2000", [["Session-Timeout", ":=", "86400"]])],
      request: pap("lt-long", "pw"),
      expect: "Access-Accept",
      reply: ["Session-Timeout = 37860"],
    }),
    at({
      name: "Login-Time Any: no limit, no Session-Timeout",
      users: [user("lt-any", "Any")],
      request: pap("lt-any", "pw"),
      expect: "Access-Accept",
      reply: [],
    }),
    at({
      name: "Login-Time Mo-Fr runs on to Friday night",
      users: [user("lt-weekdays", "Mo-Fr")],
      request: pap("lt-weekdays", "pw"),
      expect: "Access-Accept",
      reply: ["Session-Timeout = 397800"],
    }),
    at({
      name: "Login-Time Mo0930-0930: the last minute, minimum_timeout 60 still lets it in",
      users: [user("lt-minute", "mo0930-0930")],
      request: pap("lt-minute", "pw"),
      expect: "Access-Accept",
      reply: ["Session-Timeout = 60"],
    }),
    at({
      name: "Login-Time from a group's check items",
      users: [{ username: "lt-member", check: [pw("pw")], groups: [["lt-staff", 1]] }],
      groups: [{ name: "lt-staff", check: [["Login-Time", ":=", "Wk0800-1000|Su"]] }],
      request: pap("lt-member", "pw"),
      expect: "Access-Accept",
      reply: ["Session-Timeout = 1860"],
    }),
    at({
      name: "Login-Time inside the window but a wrong password",
      users: [user("lt-wrong", "Wk0900-1700")],
      request: pap("lt-wrong", "not it"),
      expect: "Access-Reject",
    }),
  ];
}

export type { Pair };
