// The API's browsable documentation (/docs, swagger-ui) and its OpenAPI document live on the
// console's origin, so they carry the console's security headers (HSTS too when PUBLIC_URL is
// https), with a Content-Security-Policy that still lets swagger-ui's page work: checked over HTTP
// (every asset the page names is one the policy allows) and in Chromium (the operations render, no
// violation is reported).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { HSTS, SECURITY_HEADERS } from "../../src/console/security.ts";
import { browserUnavailable, launchBrowser } from "../support/browser.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

/** Every console security header but the policy, which the docs have their own of. */
const SAME_AS_CONSOLE = Object.entries(SECURITY_HEADERS).filter(
  ([name]) => name !== "Content-Security-Policy",
);

function directives(policy: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const part of policy.split(";")) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) map.set(name.toLowerCase(), values);
  }
  return map;
}

/** The sources a policy allows for a kind of resource (its directive, or default-src). */
function allowed(policy: string, directive: string): string[] {
  const all = directives(policy);
  return all.get(directive) ?? all.get("default-src") ?? [];
}

describe("/docs and /api/openapi.json carry the console's security headers", () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ env: { PUBLIC_URL: "https://wifi.example.org" } });
  });
  after(() => server?.stop());

  const paths = [
    "/docs",
    "/docs/",
    "/docs/static/swagger-ui.css",
    "/docs/static/swagger-ui-bundle.js",
    "/docs/static/swagger-initializer.js",
    "/docs/json",
    "/api/openapi.json",
  ];

  test("each answer has them, a policy that frames nothing and runs only this origin's scripts", async () => {
    for (const path of paths) {
      const res = await fetch(`${server.url}${path}`, { redirect: "manual" });
      await res.arrayBuffer();
      assert.ok(res.status === 200 || res.status === 302, `${path}: ${res.status}`);
      for (const [name, value] of SAME_AS_CONSOLE)
        assert.equal(res.headers.get(name), value, `${path}: ${name}`);
      assert.equal(res.headers.get("strict-transport-security"), HSTS, `${path}: HSTS`);
      const policy = res.headers.get("content-security-policy") ?? "";
      assert.deepEqual(allowed(policy, "script-src"), ["'self'"], `${path}: script-src`);
      assert.deepEqual(directives(policy).get("frame-ancestors"), ["'none'"], `${path}: frame-ancestors`);
      assert.deepEqual(directives(policy).get("object-src"), ["'none'"], `${path}: object-src`);
      assert.deepEqual(directives(policy).get("base-uri"), ["'none'"], `${path}: base-uri`);
    }
  });

  test("every script, stylesheet and image the page names is one its policy allows", async () => {
    const res = await fetch(`${server.url}/docs/`);
    const html = await res.text();
    const policy = res.headers.get("content-security-policy") ?? "";
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, "no inline script");
    assert.doesNotMatch(html, /<style|\sstyle=/, "no inline style");
    const sources = [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(sources.length >= 5, sources.join(", "));
    for (const source of sources) {
      const url = new URL(source, `${server.url}/docs/`);
      assert.equal(url.origin, server.url, `${source} is on this origin ('self')`);
      const asset = await fetch(url);
      await asset.arrayBuffer();
      assert.equal(asset.status, 200, source);
    }
    // The stylesheet draws its icons as data: SVG images.
    const css = await (await fetch(`${server.url}/docs/static/swagger-ui.css`)).text();
    assert.match(css, /url\(["']?data:image\/svg\+xml/);
    assert.ok(allowed(policy, "style-src").includes("'self'"), "its stylesheets");
    assert.ok(allowed(policy, "img-src").includes("data:"), policy);
    assert.ok(allowed(policy, "connect-src").includes("'self'"), "the page fetches ./json");
  });

  test("the page works in Chromium under its policy", { skip: browserUnavailable() ?? false }, async () => {
    const browser = await launchBrowser();
    try {
      const page = browser.page;
      const violations: string[] = [];
      page.on("console", (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      await page.addInitScript(() => {
        document.addEventListener("securitypolicyviolation", (event) => {
          console.error(`Content Security Policy violation: ${event.violatedDirective} ${event.blockedURI}`);
        });
      });
      await page.goto(`${server.url}/docs`);
      await page.waitForSelector(".opblock-summary-path");
      assert.match((await page.textContent(".info .title")) ?? "", /Wisp API/);
      assert.ok((await page.locator(".opblock").count()) > 10, "the operations are listed");
      // Open one operation: its details render too.
      await page.locator(".opblock-summary").first().click();
      await page.waitForSelector(".opblock-body");
      assert.deepEqual(violations, []);
    } finally {
      await browser.close();
    }
  });
});
