// Checks every API response a test sees against the server's own OpenAPI document.
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
type OpenApiDocument = { paths: Record<string, Record<string, Operation>> };

export class OpenApiChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly routes: { regex: RegExp; template: string }[];

  constructor(private readonly doc: OpenApiDocument) {
    addFormats(this.ajv);
    this.ajv.addSchema(doc as object, "openapi.json");
    this.routes = Object.keys(doc.paths).map((template) => ({
      template,
      regex: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}/?$`),
    }));
  }

  /** Throws when a JSON response of a documented operation does not match its documented schema. */
  check(method: string, pathname: string, status: number, body: unknown): void {
    const route = this.routes.find((r) => r.regex.test(pathname));
    if (!route) return;
    const operation = this.doc.paths[route.template]?.[method.toLowerCase()];
    if (!operation?.responses) return;
    const key = [String(status), `${String(status)[0]}XX`, `${String(status)[0]}xx`, "default"].find(
      (k) => operation.responses?.[k],
    );
    if (!key)
      throw new Error(
        `${method} ${route.template} answered ${status}, which the OpenAPI document does not list`,
      );
    const content = operation.responses[key]?.content;
    if (!content) return;
    const pointer = [
      "paths",
      route.template,
      method.toLowerCase(),
      "responses",
      key,
      "content",
      "application/json",
      "schema",
    ]
      .map((part) => part.replace(/~/g, "~0").replace(/\//g, "~1"))
      .join("/");
    const validate = this.ajv.getSchema(`openapi.json#/${pointer}`);
    if (!validate) throw new Error(`no schema at ${pointer}`);
    if (!validate(body)) {
      throw new Error(
        `${method} ${pathname} ${status} does not match the OpenAPI schema: ${this.ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`,
      );
    }
  }
}
