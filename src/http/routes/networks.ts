// /api/networks and /api/captiveportals: read-only in the API (networks and portals are managed in
// the console and the CLI). Writes on these paths answer 405 through the app's not-found handler.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import { MAB_MODES, MAB_PASSWORDS, RANDOM_MAC_CHOICES, REMEMBER_CHOICES } from "../../core/devices/rules.ts";
import {
  COA_FALLBACKS,
  DEFAULT_COA_RATE,
  EAP_METHOD_CHOICES,
  GATEWAY_VENDORS,
  MAX_COA_RATE,
  NETWORK_SORT_FIELDS,
} from "../../core/networks/rules.ts";
import type { NetworksService } from "../../core/networks/service.ts";
import {
  PORTAL_LANGUAGES,
  PORTAL_METHODS,
  PORTAL_SORT_FIELDS,
  PORTAL_VENDORS,
  UAM_AUTH_MODES,
} from "../../core/portals/rules.ts";
import type { PortalsService } from "../../core/portals/service.ts";
import { MAX_SEARCH } from "../../core/users/rules.ts";
import { errorResponses, Id, ListOf, PageQuery, SortQuery, StringEnum } from "../schemas.ts";

const Network = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    nas_ip: Type.String({
      description:
        "the RADIUS client's IPv4/IPv6 address or CIDR, unique across the installation; empty for a network reached over RadSec only (its NAS is known by certificate)",
    }),
    transport: StringEnum(["udp", "radsec", "both"] as const, {
      description:
        "how the network's NAS reaches Wisp: udp (by address), radsec (RADIUS over TLS, by certificate), or both",
    }),
    nas_identifier: Type.String({ description: "the NAS-Identifier the devices send; may be empty" }),
    description: Type.String(),
    require_message_authenticator: Type.Boolean({
      description: "Access-Requests without a Message-Authenticator are dropped",
    }),
    coa_enabled: Type.Boolean({
      description: "Wisp may send RFC 5176 Disconnect-Requests and CoA-Requests to the network's NAS",
    }),
    coa_port: Type.Integer({ description: "the NAS's Dynamic Authorization Server port (RFC 5176: 3799)" }),
    coa_fallback: StringEnum(COA_FALLBACKS, {
      description:
        "after a CoA-NAK or an unanswered CoA-Request: none (the outcome is recorded) or disconnect (a Disconnect-Request follows, so the next login applies the change)",
    }),
    coa_rate: Type.Integer({
      description: `CoA-Requests per second sent to one NAS when a change reaches many sessions (1-${MAX_COA_RATE}, default ${DEFAULT_COA_RATE})`,
    }),
    interim_interval: Type.Integer({
      description: "seconds sent as Acct-Interim-Interval in every Access-Accept; 0: none sent",
    }),
    stale_after: Type.Integer({
      description:
        "seconds without accounting after which an open session is closed (Lost-Carrier); 0: three interim intervals",
    }),
    eap_method: Type.Union(
      EAP_METHOD_CHOICES.map((m) => Type.Literal(m)),
      {
        description:
          "WPA-Enterprise: the EAP method proposed first (peap, ttls or tls); a supplicant set up for another one answers with a NAK and gets it",
      },
    ),
    mab_mode: Type.Union(
      MAB_MODES.map((m) => Type.Literal(m)),
      {
        description:
          "MAC authentication: off; devices (registered devices only); guests (devices and guests a portal remembered)",
      },
    ),
    mab_password: Type.Union(
      MAB_PASSWORDS.map((m) => Type.Literal(m)),
      {
        description:
          "the password the gateways send with MAC authentication: mac (the MAC itself), empty, or secret (a network-wide one)",
      },
    ),
    mab_secret_set: Type.Boolean({
      description: "whether a network-wide MAB password is set; it is never returned",
    }),
    time_zone: Type.Unsafe<string | null>({
      type: ["string", "null"],
      description:
        "IANA time zone of policies' day and time conditions on this network; null: the account's (GET /api/policies/default)",
    }),
    vendor: Type.Union(
      GATEWAY_VENDORS.map((v) => Type.Literal(v)),
      {
        description:
          "the gateway's vendor: which attributes carry a plan's bandwidth (generic: WISPr; chillispot: CoovaChilli and ChilliSpot)",
      },
    ),
    created: Type.String({ format: "date-time" }),
    updated: Type.String({ format: "date-time" }),
  },
  {
    $id: "Network",
    description:
      "A RADIUS client (the access points or controller of one site). The shared secret is never returned.",
  },
);

const CaptivePortal = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    network_id: Type.Integer(),
    login_url: Type.String({ format: "uri", description: "where the network's gateway sends guests" }),
    success_url: Type.String({ description: "where guests go after logging in; empty for none" }),
    enabled: Type.Boolean({ description: "off: the guest page at login_url answers 404" }),
    vendor: Type.Union(
      PORTAL_VENDORS.map((v) => Type.Literal(v)),
      { description: "the gateway protocol of the hand-off after sign-in" },
    ),
    uam_secret_set: Type.Boolean({
      description:
        "whether a UAM secret (shared with a CoovaChilli gateway) is set; the secret is never returned",
    }),
    uam_auth: Type.Union(
      UAM_AUTH_MODES.map((m) => Type.Literal(m)),
      {
        description:
          "CoovaChilli: the password handed to the gateway as a CHAP response (chap) or encoded with the challenge for PAP (pap)",
      },
    ),
    title: Type.String({ description: "the page's heading; empty: the portal's name" }),
    welcome_text: Type.String({ description: "plain text shown under the title" }),
    terms: Type.String({ description: "plain text terms of use: paragraphs and bare http(s) links" }),
    methods: Type.Array(Type.Union(PORTAL_METHODS.map((m) => Type.Literal(m))), {
      description: "sign-in methods the page offers",
    }),
    language: Type.String({
      description: `"auto" (the guest's Accept-Language) or one of ${PORTAL_LANGUAGES.join(", ")}`,
    }),
    color_primary: Type.String({ pattern: "^#[0-9a-f]{6}$", description: "header and button colour" }),
    color_background: Type.String({ pattern: "^#[0-9a-f]{6}$", description: "page background colour" }),
    generic_login_param: Type.String({
      description: "generic vendor: the query parameter carrying the gateway's login URL",
    }),
    generic_username_field: Type.String({ description: "generic vendor: the login form's username field" }),
    generic_password_field: Type.String({ description: "generic vendor: the login form's password field" }),
    generic_redirect_field: Type.String({
      description: "generic vendor: the login form's field for the page after login; empty for none",
    }),
    generic_extra_fields: Type.String({
      description:
        "generic vendor: extra login form fields, name=value&name=$gatewayParam (pfSense: accept=Continue&zone=$zone); empty for none",
    }),
    allowed_gateways: Type.Array(Type.String(), {
      description:
        "host names and CIDRs of the gateways guests may be handed to (the login address in the gateway's link: MikroTik link-login-only, the generic login URL, CoovaChilli uamip); empty: private, CGNAT, link-local and unique local addresses only",
    }),
    clickthrough_validity: Type.Integer({
      description: "click-through: seconds the one-time guest credential stays valid from its first use",
    }),
    clickthrough_session_timeout: Type.Integer({
      description: "click-through: seconds one guest session may last (Session-Timeout)",
    }),
    registration_validity: Type.Integer({
      description: "registration: seconds a registered guest stays valid (the user's Expiration)",
    }),
    identity_providers: Type.Array(Type.Integer(), {
      description: "idp method: the ids of the identity providers whose buttons the page shows",
    }),
    guest_group_id: Type.Union([Type.Integer(), Type.Null()], {
      description: "registration: the group (same account) registered guests join; null for none",
    }),
    remember_devices: Type.Union(
      REMEMBER_CHOICES.map((c) => Type.Literal(c)),
      {
        description:
          "remember a guest's device after a sign-in, for MAC authentication without the page: never, ask (a box the guest ticks), always",
      },
    ),
    remember_days: Type.Integer({ description: "days a device is remembered from the sign-in" }),
    random_macs: Type.Union(
      RANDOM_MAC_CHOICES.map((c) => Type.Literal(c)),
      {
        description:
          "randomised (locally administered) MAC addresses: refuse to remember them, or allow it when the guest ticks the box",
      },
    ),
    created: Type.String({ format: "date-time" }),
    updated: Type.String({ format: "date-time" }),
  },
  {
    $id: "CaptivePortal",
    description: "A captive portal (guest sign-in page). Read-only here: managed in the console and the CLI.",
  },
);

const search = (what: string) =>
  Type.Optional(
    Type.String({ maxLength: MAX_SEARCH, description: `case-insensitive substring of the ${what}` }),
  );

const NetworkQuery = Type.Object(
  { ...PageQuery, search: search("network's name"), sort: SortQuery(NETWORK_SORT_FIELDS) },
  { additionalProperties: false },
);
const PortalQuery = Type.Object(
  {
    ...PageQuery,
    search: search("portal's name"),
    network_id: Type.Optional(Id("only this network's portals")),
    sort: SortQuery(PORTAL_SORT_FIELDS),
  },
  { additionalProperties: false },
);

const NetworkParams = Type.Object({ network_id: Id("the network's id") }, { additionalProperties: false });
const PortalParams = Type.Object(
  { portal_id: Id("the captive portal's id") },
  { additionalProperties: false },
);

export async function networksRoutes(
  app: FastifyInstance,
  { networks, portals }: { networks: NetworksService; portals: PortalsService },
) {
  app.addSchema(Network);
  app.addSchema(CaptivePortal);
  const networksRead = { permission: ["networks", "read"] as ["networks", "read"] };
  const portalsRead = { permission: ["captiveportals", "read"] as ["captiveportals", "read"] };

  app.get<{ Querystring: Static<typeof NetworkQuery> }>(
    "/api/networks",
    {
      config: networksRead,
      schema: {
        tags: ["networks"],
        summary: "List networks",
        querystring: NetworkQuery,
        response: { 200: ListOf(Type.Ref("Network")), ...errorResponses },
      },
    },
    async (request) => {
      const { page = 1, limit = 50, search, sort } = request.query;
      return networks.list(request.principal.accountId, { search }, { page, limit }, sort);
    },
  );

  app.get<{ Params: Static<typeof NetworkParams> }>(
    "/api/networks/:network_id",
    {
      config: networksRead,
      schema: {
        tags: ["networks"],
        summary: "Get a network",
        params: NetworkParams,
        response: { 200: Type.Ref("Network"), ...errorResponses },
      },
    },
    async (request) => networks.get(request.principal.accountId, request.params.network_id),
  );

  // IronWiFi's clients (its Terraform provider among them) also call the hyphenated path: the same
  // operations under both, the alias marked in its summary and operationId.
  for (const [base, alias] of [
    ["/api/captiveportals", false],
    ["/api/captive-portals", true],
  ] as const) {
    const suffix = alias ? " (alias of /api/captiveportals)" : "";
    app.get<{ Querystring: Static<typeof PortalQuery> }>(
      base,
      {
        config: portalsRead,
        schema: {
          tags: ["captive portals"],
          summary: `List captive portals${suffix}`,
          ...(alias ? { operationId: "listCaptivePortalsAlias" } : {}),
          querystring: PortalQuery,
          response: { 200: ListOf(Type.Ref("CaptivePortal")), ...errorResponses },
        },
      },
      async (request) => {
        const { page = 1, limit = 50, search, network_id, sort } = request.query;
        const filter = { search, networkId: network_id };
        return portals.list(request.principal.accountId, filter, { page, limit }, sort);
      },
    );

    app.get<{ Params: Static<typeof PortalParams> }>(
      `${base}/:portal_id`,
      {
        config: portalsRead,
        schema: {
          tags: ["captive portals"],
          summary: `Get a captive portal${suffix}`,
          ...(alias ? { operationId: "getCaptivePortalAlias" } : {}),
          params: PortalParams,
          response: { 200: Type.Ref("CaptivePortal"), ...errorResponses },
        },
      },
      async (request) => portals.get(request.principal.accountId, request.params.portal_id),
    );
  }
}
