// /api/networks/{network_id}/radsec...: a network's RadSec settings. Certificates Wisp issues for the
// network's NAS (the private key is returned once, encrypted with the caller's password, and never
// kept), and an outside CA with the rule that matches its certificates to the network.
import type { FastifyInstance } from "fastify";
import { type Static, Type } from "typebox";
import { MAX_PKCS12_PASSWORD, MIN_PKCS12_PASSWORD } from "../../core/certs/rules.ts";
import type { NetworksService } from "../../core/networks/service.ts";
import {
  MATCH_FIELDS,
  MAX_CA_PEM,
  MAX_PATTERN,
  MAX_PATTERNS,
  MAX_RADSEC_CERT_DAYS,
  RADSEC_CERT_DAYS,
} from "../../core/radsec/rules.ts";
import type { RadsecService } from "../../core/radsec/service.ts";
import type { RadsecConnections } from "../../core/radsec/types.ts";
import { NotFoundError } from "../../core/shared/errors.ts";
import { errorResponses, Id, StringEnum } from "../schemas.ts";

const Time = Type.String({ format: "date-time" });
const Fingerprint = Type.String({ description: "SHA-256 of the DER, colon-separated hex" });

const RadsecCertificate = Type.Object(
  {
    serial: Type.String({ description: "lowercase hex" }),
    subject: Type.String(),
    not_before: Time,
    not_after: Time,
    revoked_at: Type.Union([Time, Type.Null()]),
    status: StringEnum(["valid", "revoked", "expired"] as const),
    fingerprint: Fingerprint,
    created: Time,
  },
  { $id: "RadsecCertificate", description: "A client certificate Wisp issued for a network's NAS" },
);

const MatchRule = Type.Object(
  {
    field: StringEnum(MATCH_FIELDS, {
      description: "cn: the subject CN; dns or uri: a subjectAltName DNS or URI value",
    }),
    patterns: Type.Array(Type.String({ minLength: 1, maxLength: MAX_PATTERN }), {
      minItems: 1,
      maxItems: MAX_PATTERNS,
      description:
        "globs: * is any run of characters (dots and slashes too), everything else matches itself; DNS names ignore case, CN and URI do not",
    }),
  },
  { $id: "RadsecMatchRule", additionalProperties: false },
);

const TrustedCa = Type.Object(
  {
    subject: Type.String(),
    fingerprint: Fingerprint,
    not_after: Time,
    match: Type.Ref("RadsecMatchRule"),
    pem: Type.String({ description: "the CA certificate" }),
    created: Time,
    updated: Time,
  },
  {
    $id: "RadsecCa",
    description:
      "An outside CA the network trusts for RadSec: a NAS certificate it issued belongs to the network when the rule matches it (and no other network's rule does)",
  },
);

const RadsecConnection = Type.Object(
  {
    remote: Type.String({ description: "address:port of the NAS as Wisp sees it" }),
    since: Time,
    tls_version: Type.String(),
    protocol: StringEnum(["radius/1.0", "radius/1.1"] as const),
    peer_subject: Type.String(),
    peer_fingerprint: Fingerprint,
  },
  { $id: "RadsecConnection" },
);

const RadsecSettings = Type.Object(
  {
    network_id: Type.Integer(),
    transport: StringEnum(["udp", "radsec", "both"] as const),
    certificates: Type.Array(Type.Ref("RadsecCertificate")),
    ca: Type.Union([Type.Ref("RadsecCa"), Type.Null()]),
    connections: Type.Array(Type.Ref("RadsecConnection"), {
      description: "the network's NASes connected over RadSec now (to the instance that answers)",
    }),
  },
  { $id: "RadsecSettings" },
);

const IssueBody = Type.Object(
  {
    password: Type.String({
      minLength: MIN_PKCS12_PASSWORD,
      maxLength: MAX_PKCS12_PASSWORD,
      description: "protects the PKCS#12 file and the PEM private key",
    }),
    days: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_RADSEC_CERT_DAYS, description: `default ${RADSEC_CERT_DAYS}` }),
    ),
  },
  { additionalProperties: false },
);

const Issued = Type.Object({
  certificate: Type.Ref("RadsecCertificate"),
  cert: Type.String({ description: "the certificate, PEM" }),
  key: Type.String({
    description: "its private key: PKCS#8 PEM encrypted with the password; never shown again",
  }),
  ca: Type.String({ description: "Wisp's RadSec client CA that issued it, PEM" }),
  pkcs12: Type.String({
    contentEncoding: "base64",
    description: "certificate, key and CA as a PKCS#12 file protected by the password, base64",
  }),
});

const CaBody = Type.Object(
  {
    ca: Type.String({
      maxLength: MAX_CA_PEM,
      description: "the CA certificate, PEM (one certificate, no key)",
    }),
    match: Type.Ref("RadsecMatchRule"),
  },
  { additionalProperties: false },
);

const NetworkParams = Type.Object({ network_id: Id("the network's id") }, { additionalProperties: false });
const SerialParams = Type.Object(
  { network_id: Id("the network's id"), serial: Type.String({ maxLength: 64, description: "hex" }) },
  { additionalProperties: false },
);

export interface RadsecRouteOptions {
  radsec: RadsecService;
  networks: NetworksService;
  connections: () => RadsecConnections;
}

export async function radsecRoutes(app: FastifyInstance, options: RadsecRouteOptions) {
  for (const schema of [RadsecCertificate, MatchRule, TrustedCa, RadsecConnection, RadsecSettings]) {
    app.addSchema(schema);
  }
  readRoutes(app, options);
  certificateRoutes(app, options);
  caRoutes(app, options);
}

const tags = ["networks"];
const read = { permission: ["networks", "read"] as ["networks", "read"] };
const write = { permission: ["networks", "write"] as ["networks", "write"] };
type NetworkRequest = { Params: Static<typeof NetworkParams> };
type SerialRequest = { Params: Static<typeof SerialParams> };

function readRoutes(app: FastifyInstance, { radsec, networks, connections }: RadsecRouteOptions) {
  app.get<NetworkRequest>(
    "/api/networks/:network_id/radsec",
    {
      config: read,
      schema: {
        tags,
        summary: "A network's RadSec settings: transport, certificates, uploaded CA, live connections",
        params: NetworkParams,
        response: { 200: Type.Ref("RadsecSettings"), ...errorResponses },
      },
    },
    async (request) => {
      const { accountId } = request.principal;
      const id = request.params.network_id;
      const network = await networks.get(accountId, id);
      const [certificates, ca] = await Promise.all([
        radsec.certificates(accountId, id),
        radsec.trusted(accountId, id),
      ]);
      const live = connections()
        .byNetwork(accountId, id)
        .map((c) => ({
          remote: c.remote,
          since: c.since,
          tls_version: c.tlsVersion,
          protocol: c.protocol,
          peer_subject: c.peerSubject,
          peer_fingerprint: c.peerFingerprint,
        }));
      return { network_id: id, transport: network.transport, certificates, ca, connections: live };
    },
  );

  app.get<NetworkRequest>(
    "/api/networks/:network_id/radsec/certificates",
    {
      config: read,
      schema: {
        tags,
        summary: "List the RadSec certificates Wisp issued for a network",
        params: NetworkParams,
        response: {
          200: Type.Object({ data: Type.Array(Type.Ref("RadsecCertificate")) }),
          ...errorResponses,
        },
      },
    },
    async (request) => ({
      data: await radsec.certificates(request.principal.accountId, request.params.network_id),
    }),
  );

  app.get<SerialRequest>(
    "/api/networks/:network_id/radsec/certificates/:serial",
    {
      config: read,
      schema: {
        tags,
        summary: "Get one RadSec certificate of a network, with its PEM (never its key)",
        params: SerialParams,
        response: {
          200: Type.Object({ certificate: Type.Ref("RadsecCertificate"), cert: Type.String() }),
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { network_id, serial } = request.params;
      return radsec.certificate(request.principal.accountId, network_id, serial);
    },
  );
}

function certificateRoutes(app: FastifyInstance, { radsec }: RadsecRouteOptions) {
  app.post<NetworkRequest & { Body: Static<typeof IssueBody> }>(
    "/api/networks/:network_id/radsec/certificates",
    {
      config: write,
      schema: {
        tags,
        summary:
          "Issue a RadSec client certificate for the network's NAS (the key is returned once, never kept)",
        params: NetworkParams,
        body: IssueBody,
        response: { 201: Issued, ...errorResponses },
      },
    },
    async (request, reply) => {
      const id = request.params.network_id;
      const issued = await radsec.issue(request.principal.accountId, id, request.body);
      const location = `/api/networks/${id}/radsec/certificates/${issued.certificate.serial}`;
      return reply
        .code(201)
        .header("Location", location)
        .header("Cache-Control", "no-store")
        .send({ ...issued, pkcs12: issued.pkcs12.toString("base64") });
    },
  );

  app.post<SerialRequest>(
    "/api/networks/:network_id/radsec/certificates/:serial/revoke",
    {
      config: write,
      schema: {
        tags,
        summary: "Revoke a network's RadSec certificate: refused from the next TLS handshake",
        params: SerialParams,
        body: Type.Optional(Type.Object({}, { additionalProperties: false, description: "empty" })),
        response: { 200: Type.Ref("RadsecCertificate"), ...errorResponses },
      },
    },
    async (request) => {
      const { network_id, serial } = request.params;
      return radsec.revoke(request.principal.accountId, network_id, serial);
    },
  );
}

function caRoutes(app: FastifyInstance, { radsec }: RadsecRouteOptions) {
  app.get<NetworkRequest>(
    "/api/networks/:network_id/radsec/ca",
    {
      config: read,
      schema: {
        tags,
        summary: "The outside CA the network trusts for RadSec, with its match rule",
        params: NetworkParams,
        response: { 200: Type.Ref("RadsecCa"), ...errorResponses },
      },
    },
    async (request) => {
      const id = request.params.network_id;
      const ca = await radsec.trusted(request.principal.accountId, id);
      if (!ca) throw new NotFoundError(`network ${id} has no uploaded RadSec CA`);
      return ca;
    },
  );

  app.put<NetworkRequest & { Body: Static<typeof CaBody> }>(
    "/api/networks/:network_id/radsec/ca",
    {
      config: write,
      schema: {
        tags,
        summary: "Upload or replace the network's outside RadSec CA and its match rule",
        params: NetworkParams,
        body: CaBody,
        response: { 200: Type.Ref("RadsecCa"), ...errorResponses },
      },
    },
    async (request) => radsec.trust(request.principal.accountId, request.params.network_id, request.body),
  );

  app.delete<NetworkRequest>(
    "/api/networks/:network_id/radsec/ca",
    {
      config: write,
      schema: {
        tags,
        summary:
          "Remove the network's outside RadSec CA: its certificates are refused from the next handshake",
        params: NetworkParams,
        response: { 204: Type.Null(), ...errorResponses },
      },
    },
    async (request, reply) => {
      await radsec.untrust(request.principal.accountId, request.params.network_id);
      return reply.code(204).send();
    },
  );
}
