// The SCIM schemas Wisp serves (RFC 7643 section 7 and 8.7): the attributes of the core User and
// Group it keeps, with their types and mutability. The same definitions drive /Schemas, the
// reading of POST and PUT bodies and PATCH paths (names, types, what may change), so what the
// discovery endpoints say is what the server does.

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
/** Entra ID sends it with every user (RFC 7643 section 4.3); Wisp keeps none of its attributes. */
export const ENTERPRISE_SCHEMA = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";

export type Mutability = "readOnly" | "readWrite" | "immutable" | "writeOnly";

/** An attribute definition, as RFC 7643 section 7 writes it. */
export interface Attribute {
  name: string;
  type: "string" | "boolean" | "complex" | "reference" | "dateTime";
  multiValued: boolean;
  description: string;
  required: boolean;
  caseExact: boolean;
  mutability: Mutability;
  returned: "always" | "never" | "default" | "request";
  uniqueness: "none" | "server" | "global";
  subAttributes?: Attribute[];
  referenceTypes?: string[];
  /** Wisp's limit on a string's length (not part of the published definition). */
  maxLength?: number;
  /** Wisp's limit on a multi-valued attribute's values (unpublished); default 100. */
  maxValues?: number;
}

function attribute(
  name: string,
  description: string,
  options: Partial<Omit<Attribute, "name" | "description">> = {},
): Attribute {
  return {
    name,
    type: "string",
    multiValued: false,
    description,
    required: false,
    caseExact: false,
    mutability: "readWrite",
    returned: "default",
    uniqueness: "none",
    maxLength: 255,
    ...options,
  };
}

const NAME_PARTS = [
  attribute("formatted", "The full name; Wisp's fullname (else the parts joined)"),
  attribute("familyName", "The family name"),
  attribute("givenName", "The given name"),
  attribute("middleName", "The middle name(s)"),
  attribute("honorificPrefix", "e.g. Ms."),
  attribute("honorificSuffix", "e.g. III"),
];

export const USER_ATTRIBUTES: Attribute[] = [
  attribute(
    "userName",
    "The Wi-Fi login name: 1-64 of A-Z a-z 0-9 @ . _ : -, unique per account ignoring case",
    {
      required: true,
      uniqueness: "server",
      maxLength: 64,
    },
  ),
  attribute("name", "The user's name", { type: "complex", subAttributes: NAME_PARTS }),
  attribute("displayName", "The name shown for the user"),
  attribute("emails", "Email addresses; the primary one (else the first) is Wisp's email", {
    type: "complex",
    multiValued: true,
    subAttributes: [
      attribute("value", "The address", { maxLength: 254 }),
      attribute("display", "A label for the address"),
      attribute("type", "work, home or other", { maxLength: 32 }),
      attribute("primary", "The address Wisp keeps as the user's email", { type: "boolean" }),
    ],
  }),
  attribute("active", "false disables the Wi-Fi login and disconnects the user's sessions", {
    type: "boolean",
  }),
  attribute("password", "The Wi-Fi password (Cleartext-Password); never returned", {
    mutability: "writeOnly",
    returned: "never",
    caseExact: true,
    maxLength: 128,
  }),
  attribute("groups", "The Wisp groups the user is in", {
    type: "complex",
    multiValued: true,
    mutability: "readOnly",
    subAttributes: [
      attribute("value", "The group's id", { mutability: "readOnly" }),
      attribute("$ref", "The group's URI", {
        type: "reference",
        mutability: "readOnly",
        referenceTypes: ["Group"],
      }),
      attribute("display", "The group's name", { mutability: "readOnly" }),
    ],
  }),
];

export const GROUP_ATTRIBUTES: Attribute[] = [
  attribute("displayName", "The group's name; Wisp's group name is made from it", { required: true }),
  attribute("members", "The group's users", {
    type: "complex",
    multiValued: true,
    // A group's members are read back whole for every PATCH: only the body limit bounds them.
    maxValues: Number.MAX_SAFE_INTEGER,
    subAttributes: [
      attribute("value", "The member user's id", { mutability: "immutable" }),
      attribute("$ref", "The member's URI", {
        type: "reference",
        mutability: "immutable",
        referenceTypes: ["User"],
      }),
      attribute("display", "The member's userName", { mutability: "immutable" }),
      attribute("type", "User (groups of groups are not supported)", { mutability: "immutable" }),
    ],
  }),
];

/** The common attributes (RFC 7643 section 3.1), which every resource has beside its schema's. */
export const COMMON_ATTRIBUTES: Attribute[] = [
  attribute("id", "Wisp's id", {
    mutability: "readOnly",
    returned: "always",
    caseExact: true,
    uniqueness: "server",
  }),
  attribute("externalId", "The identity provider's id", { caseExact: true }),
  attribute("meta", "Resource metadata", { type: "complex", mutability: "readOnly" }),
  attribute("schemas", "The resource's schema URIs", { multiValued: true, mutability: "readOnly" }),
];

/** The attribute of `attributes` (or the common ones) named `name`, ignoring case (RFC 7643 section 2.1). */
export function findAttribute(attributes: readonly Attribute[], name: string): Attribute | undefined {
  const lowered = name.toLowerCase();
  return attributes.find((a) => a.name.toLowerCase() === lowered);
}

/** A published attribute: without Wisp's own limits. */
function published({
  maxLength: _limit,
  maxValues: _values,
  subAttributes,
  ...rest
}: Attribute): Record<string, unknown> {
  return subAttributes ? { ...rest, subAttributes: subAttributes.map(published) } : rest;
}

/** /Schemas (RFC 7643 section 7), each with its meta (RFC 7644 section 4). */
export function schemaDocuments(base: string): Record<string, unknown>[] {
  const schema = (id: string, name: string, attributes: Attribute[]) => ({
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:Schema"],
    id,
    name,
    description: `${name} account`,
    attributes: attributes.map(published),
    meta: { resourceType: "Schema", location: `${base}/Schemas/${id}` },
  });
  return [schema(USER_SCHEMA, "User", USER_ATTRIBUTES), schema(GROUP_SCHEMA, "Group", GROUP_ATTRIBUTES)];
}

/** /ResourceTypes (RFC 7643 section 6). */
export function resourceTypeDocuments(base: string): Record<string, unknown>[] {
  const type = (name: string, endpoint: string, schema: string, extensions: unknown[]) => ({
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
    id: name,
    name,
    endpoint,
    description: `Wisp ${name.toLowerCase()}s`,
    schema,
    schemaExtensions: extensions,
    meta: { resourceType: "ResourceType", location: `${base}/ResourceTypes/${name}` },
  });
  return [type("User", "/Users", USER_SCHEMA, []), type("Group", "/Groups", GROUP_SCHEMA, [])];
}

/** /ServiceProviderConfig (RFC 7643 section 5). */
export function serviceProviderConfig(base: string, maxResults: number): Record<string, unknown> {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
    documentationUri: "https://www.rfc-editor.org/rfc/rfc7644",
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults },
    changePassword: { supported: true },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [
      {
        type: "oauthbearertoken",
        name: "Bearer token",
        description: "A Wisp API key with the scim permission, sent as Authorization: Bearer <key>",
        specUri: "https://www.rfc-editor.org/rfc/rfc6750",
        primary: true,
      },
    ],
    meta: { resourceType: "ServiceProviderConfig", location: `${base}/ServiceProviderConfig` },
  };
}
