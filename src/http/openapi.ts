// What every operation of the OpenAPI document gets in one place, so a route added later has it
// without anyone remembering: an operationId derived from its method and path, the error responses
// in the one error shape (4XX, 5XX), and examples of its request body and of each JSON response,
// built from the schemas (a schema's own `examples` win). test/http/openapi-quality.test.ts checks
// the result (every operation has them, examples match their schemas, a real 3.1 linter passes).

type Json = Record<string, unknown>;

/** English singulars of the API's path words. */ const IRREGULAR: Record<string, string> = {
  identityproviders: "identityprovider",
  radsec: "radsec",
  ca: "ca",
};

function singular(word: string): string {
  if (IRREGULAR[word]) return IRREGULAR[word];
  if (/ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (/(ss|us)$/.test(word)) return word;
  if (/s$/.test(word)) return word.slice(0, -1);
  return word;
}

type Operation = {
  operationId?: string;
  summary?: string;
  requestBody?: { content?: Record<string, { schema?: Json; example?: unknown; examples?: unknown }> };
  responses?: Record<
    string,
    { description?: string; content?: Record<string, { schema?: Json; example?: unknown }> }
  >;
};

const METHODS = ["get", "put", "post", "patch", "delete"] as const;
const ERROR_REF = { $ref: "#/components/schemas/Error" };

/** camelCase of path words: "identity-providers" -> "IdentityProviders". */
const pascal = (word: string) =>
  word
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join("");

/**
 * GET /api/devices -> listDevices; GET /api/devices/{device_id} -> getDevice; POST -> createDevice;
 * PUT -> replaceDevice; PATCH -> updateDevice; DELETE -> deleteDevice; a trailing action word
 * (POST /api/sessions/{id}/disconnect) -> disconnectSession. Nested resources name their parents.
 */
export function operationIdFor(method: string, path: string): string {
  const parts = path.replace(/^\/api\//, "").split("/");
  const item = parts.at(-1)?.startsWith("{") ?? false;
  const words = parts.filter((p) => !p.startsWith("{"));
  const m = method.toLowerCase();
  // A word after an item that is not a collection: an action on it (POST .../{id}/revoke).
  const last = words.at(-1) ?? "";
  const lastIsAction = m === "post" && !item && parts.length >= 2 && parts.at(-2)?.startsWith("{");
  if (lastIsAction && !last.endsWith("s")) {
    return `${last.replace(/-(.)/g, (_, c: string) => c.toUpperCase())}${words
      .slice(0, -1)
      .map((w) => pascal(singular(w)))
      .join("")}`;
  }
  const collection = /[^su]s$/.test(last);
  const nouns = words
    .map((w, i) => pascal(i < words.length - 1 || item || m !== "get" || !collection ? singular(w) : w))
    .join("");
  // A collection (plural last word) is listed; a singular resource (/api/account, .../radsec) is got.
  const verb = {
    get: item || !collection ? "get" : "list",
    post: "create",
    put: "replace",
    patch: "update",
    delete: "delete",
  }[m];
  return `${verb ?? m}${nouns}`;
}

/** An example value for a schema: its own example when it has one, else one built from its type. */
export function exampleOf(schema: unknown, doc: Json, name = "", depth = 0): unknown {
  if (!schema || typeof schema !== "object" || depth > 16) return null;
  const s = schema as Json;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if ("example" in s) return s.example;
  if (typeof s.$ref === "string") {
    const target = (doc.components as Json | undefined)?.schemas as Json | undefined;
    return exampleOf(target?.[s.$ref.split("/").at(-1) ?? ""], doc, name, depth + 1);
  }
  if ("const" in s) return s.const;
  if ("default" in s) return s.default;
  if (Array.isArray(s.enum)) return s.enum.find((v) => v !== null) ?? null;
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const options = s[key] as unknown[] | undefined;
    if (options?.length)
      return exampleOf(options.find((o) => (o as Json).type !== "null") ?? options[0], doc, name, depth + 1);
  }
  const types = Array.isArray(s.type) ? s.type : [s.type];
  const type = types.find((t) => t !== "null") ?? types[0];
  switch (type) {
    case "object": {
      const properties = (s.properties ?? {}) as Json;
      return Object.fromEntries(
        Object.entries(properties).map(([key, value]) => [key, exampleOf(value, doc, key, depth + 1)]),
      );
    }
    case "array":
      return [exampleOf(s.items, doc, singular(name), depth + 1)];
    case "integer":
    case "number":
      return typeof s.minimum === "number" ? Math.max(s.minimum, 1) : 1;
    case "boolean":
      return true;
    case "string":
      return exampleString(s, name);
    case "null":
      return null;
    default:
      return null;
  }
}

/** Strings by format, then by what the field's name says it holds. */
function exampleString(s: Json, name: string): string {
  const byFormat: Record<string, string> = {
    "date-time": "2025-06-01T09:30:00Z",
    date: "2025-06-01",
    email: "ana@example.org",
    uri: "https://wifi.example.org/",
    ipv4: "192.0.2.10",
    ipv6: "2001:db8::10",
    byte: "V2lzcA==",
  };
  if (typeof s.format === "string" && byFormat[s.format]) return byFormat[s.format]!;
  if (/mac$/.test(name)) return "02:00:00:00:00:01";
  if (/colou?r/.test(name)) return "#1b5e9e";
  if (/email/.test(name)) return "ana@example.org";
  if (/(^|_)ip$|address|nas_ip/.test(name)) return "192.0.2.10";
  if (name === "message") return "a sentence saying what went wrong";
  const text = name ? name.replace(/_/g, "-") : "text";
  const max = typeof s.maxLength === "number" ? s.maxLength : 64;
  const min = typeof s.minLength === "number" ? s.minLength : 0;
  return text.padEnd(min, "x").slice(0, Math.max(max, min));
}

/** The error shape's example for one status class. */
function errorExample(key: string) {
  return key.startsWith("5")
    ? { error: true, message: "internal server error", code: 500 }
    : {
        error: true,
        message: "name must be 1-64 characters",
        code: 400,
        details: [{ field: "name", message: "must be 1-64 characters" }],
      };
}

/** Fills in what each operation lacks (see the header). Applied by @fastify/swagger's transformObject. */
export function completeDocument<T extends object>(doc: T): T {
  const paths = ((doc as Json).paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      op.operationId ??= operationIdFor(method, path);
      op.responses ??= {};
      for (const key of ["4XX", "5XX"]) {
        op.responses[key] ??= {
          description: "Error",
          content: { "application/json": { schema: ERROR_REF } },
        };
      }
      for (const [key, response] of Object.entries(op.responses)) {
        const json = response.content?.["application/json"];
        if (!json?.schema || "example" in json) continue;
        json.example = key.endsWith("XX") ? errorExample(key) : exampleOf(json.schema, doc as Json);
      }
      const body = op.requestBody?.content?.["application/json"];
      if (body?.schema && !("example" in body) && !body.examples)
        body.example = exampleOf(body.schema, doc as Json);
    }
  }
  return doc;
}
