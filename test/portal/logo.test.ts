// Portal logos: which bytes are an image (magic bytes and a header that parses, whatever the name
// or claimed type), and how the guest page serves one (type, nosniff, ETag, CSP), only for an
// enabled portal.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { checkLogo } from "../../src/core/portals/logo.ts";
import { GIF, HTML_AS_PNG, JPEG, png, simpleWebp, WEBP, WEBP_LOSSLESS } from "../console/logo-fixtures.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

describe("logo type check", () => {
  test("PNG, JPEG and WebP (extended, lossy, lossless) with their sizes", () => {
    assert.deepEqual(checkLogo(png(24, 16, [1, 2, 3])), { type: "image/png", width: 24, height: 16 });
    assert.deepEqual(checkLogo(JPEG), { type: "image/jpeg", width: 24, height: 16 });
    assert.deepEqual(checkLogo(WEBP), { type: "image/webp", width: 24, height: 16 });
    assert.deepEqual(checkLogo(WEBP_LOSSLESS), { type: "image/webp", width: 24, height: 16 });
    assert.deepEqual(checkLogo(simpleWebp(WEBP, "VP8 ")), { type: "image/webp", width: 24, height: 16 });
    assert.deepEqual(checkLogo(simpleWebp(WEBP_LOSSLESS, "VP8L")), {
      type: "image/webp",
      width: 24,
      height: 16,
    });
  });

  test("refused: other types, truncated files, too large, absurd sizes", () => {
    const image = png(24, 16, [1, 2, 3]);
    for (const [what, bytes] of [
      ["GIF", GIF],
      ["HTML", HTML_AS_PNG],
      ["empty", Buffer.alloc(0)],
      ["truncated PNG", image.subarray(0, image.length - 20)],
      ["PNG signature only", image.subarray(0, 8)],
      ["truncated JPEG", JPEG.subarray(0, JPEG.length - 30)],
      ["truncated WebP", WEBP.subarray(0, WEBP.length - 10)],
      ["SVG", Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')],
    ] as const) {
      assert.equal(typeof checkLogo(bytes), "string", what);
    }
    assert.match(String(checkLogo(png(10, 10, [0, 0, 0], 600 * 1024))), /at most 512 KB/);
    assert.match(String(checkLogo(png(5000, 1, [0, 0, 0]))), /4096 pixels/);
  });
});

describe("the guest page's logo", () => {
  let server: TestServer;
  let portalId = 0;
  let accountId = 0;

  before(async () => {
    server = await startTestServer();
    const account = await server.account("default");
    accountId = account.id;
    const { network } = await server.core.networks.create(account.id, {
      name: "Hall",
      nas_ip: "10.7.0.0/24",
    });
    portalId = (await server.core.portals.create(account.id, { name: "Hall", network_id: network.id })).id;
  });
  after(() => server?.stop());

  test("served with its type, nosniff, a CSP, an ETag; 304 when unchanged; shown on the page", async () => {
    assert.equal((await fetch(`${server.url}/portal/${portalId}/logo`)).status, 404);
    assert.doesNotMatch(await (await fetch(`${server.url}/portal/${portalId}`)).text(), /<img/);
    await server.core.portals.setLogo(accountId, portalId, WEBP);
    const res = await fetch(`${server.url}/portal/${portalId}/logo`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "image/webp");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'none'/);
    assert.match(res.headers.get("cache-control") ?? "", /max-age=\d+/);
    const etag = res.headers.get("etag");
    assert.match(etag ?? "", /^"[0-9a-f]{16}"$/);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), WEBP);
    const again = await fetch(`${server.url}/portal/${portalId}/logo`, {
      headers: { "if-none-match": etag ?? "" },
    });
    assert.equal(again.status, 304);
    const page = await (
      await fetch(`${server.url}/portal/${portalId}?login_url=http%3A%2F%2F10.7.0.1%2Flogin`)
    ).text();
    assert.match(
      page,
      new RegExp(`<img class="logo" src="/portal/${portalId}/logo\\?v=[0-9a-f]{16}" alt="">`),
    );
  });

  test("a disabled portal's logo is not served; nor after removal", async () => {
    await server.core.portals.setLogo(accountId, portalId, JPEG);
    await server.core.portals.update(accountId, portalId, { enabled: false });
    assert.equal((await fetch(`${server.url}/portal/${portalId}/logo`)).status, 404);
    await server.core.portals.update(accountId, portalId, { enabled: true });
    assert.equal(
      (await fetch(`${server.url}/portal/${portalId}/logo`)).headers.get("content-type"),
      "image/jpeg",
    );
    assert.equal(await server.core.portals.removeLogo(accountId, portalId), true);
    assert.equal((await fetch(`${server.url}/portal/${portalId}/logo`)).status, 404);
  });
});
