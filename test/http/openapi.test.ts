import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startTestServer, type TestServer } from "../support/server.ts";

describe("OpenAPI document and docs", () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server?.stop());

  test("/api/openapi.json is OpenAPI 3.1 generated from the route schemas", async () => {
    const { status, body } = await server.call("GET", "/api/openapi.json");
    assert.equal(status, 200);
    assert.equal(body.openapi, "3.1.0");
    assert.deepEqual(Object.keys(body.paths["/api/users"]).sort(), ["get", "post"]);
    assert.deepEqual(Object.keys(body.paths["/api/users/{user_id}"]).sort(), [
      "delete",
      "get",
      "patch",
      "put",
    ]);
    const create = body.paths["/api/users"].post;
    assert.deepEqual(create.requestBody.content["application/json"].schema.required, ["username"]);
    assert.equal(create.requestBody.content["application/json"].schema.additionalProperties, false);
    assert.ok(create.responses["201"], "documents the 201");
    assert.ok(create.responses["4XX"], "documents the error shape");
    assert.ok(body.components.schemas.Error && body.components.schemas.User);
    assert.deepEqual(body.security, [{ bearer: [] }]);
    const params = body.paths["/api/users"].get.parameters.map((p: { name: string }) => p.name).sort();
    assert.deepEqual(params, ["limit", "page", "search", "sort", "status"]);
    assert.ok(!("/healthz" in body.paths), "operational routes stay out of the API document");
  });

  test("/docs serves the browsable documentation", async () => {
    const res = await fetch(`${server.url}/docs`, { redirect: "follow" });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /text\/html/);
    assert.match(await res.text(), /swagger/i);
  });

  test("responses are checked against the document: a wrong body would fail the helper", async () => {
    const { OpenApiChecker } = await import("../support/openapi.ts");
    const doc = (await server.call("GET", "/api/openapi.json")).body;
    const checker = new OpenApiChecker(doc);
    assert.throws(() => checker.check("GET", "/api/users/1", 200, { id: "one" }), /does not match/);
    assert.throws(
      () => checker.check("GET", "/api/users", 404, { message: "no error flag" }),
      /does not match/,
    );
    checker.check("GET", "/api/users/1", 404, { error: true, message: "user 1 not found", code: 404 });
  });
});
