// The RADIUS door on the address RADIUS_HOST names: an IPv6 literal, or a host name resolved when it
// binds. Its answers go back to each request's source address without a name lookup (server.ts).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { accessRequestPap, sendRadius } from "../../src/radius/client.ts";
import { freeUdpPort } from "../support/freeradius-lab.ts";
import { startTestServer, type TestServer } from "../support/server.ts";

const SECRET = "listen-Secret-52";

for (const { host, from } of [
  { host: "::1", from: "::1" },
  { host: "localhost", from: "127.0.0.1" },
]) {
  describe(`RADIUS_HOST=${host}`, () => {
    let server: TestServer;
    let authPort: number;

    before(async () => {
      authPort = await freeUdpPort();
      // "localhost" must resolve to 127.0.0.1 for this case to mean anything here.
      server = await startTestServer({
        env: { RADIUS_HOST: host, RADIUS_AUTH_PORT: String(authPort), RADIUS_ACCT_PORT: "0" },
      });
      const account = await server.account("default");
      await server.core.networks.create(account.id, { name: "lab", nas_ip: from, secret: SECRET });
      await server.core.users.create(account.id, { username: "alice", password: "pw-alice-52" });
    });
    after(() => server?.stop());

    test("answers a request from the same address", async () => {
      const login = (password: string) =>
        sendRadius({
          ...accessRequestPap("alice", password),
          host: from,
          port: authPort,
          secret: SECRET,
          timeoutMs: 2000,
          retries: 0,
        }).then((answer) => answer.type);
      assert.equal(await login("pw-alice-52"), "Access-Accept");
      assert.equal(await login("wrong"), "Access-Reject");
    });
  });
}
