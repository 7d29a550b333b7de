// The portal benchmark's baseline: a bare fastify (same version as Wisp) answering every GET with the
// exact bytes of a captive-portal page Wisp served, with no database, no template, no cookie. Started
// by bench/portal.ts as a child process; BODY_FILE names the captured page.
import fs from "node:fs";
import Fastify from "fastify";

const body = fs.readFileSync(process.env.BODY_FILE ?? "");
const app = Fastify();
app.get("/healthz", async () => ({ status: "ok" }));
app.get("/portal/:id", async (_request, reply) => reply.type("text/html; charset=utf-8").send(body));
await app.listen({ host: process.env.HOST || "127.0.0.1", port: Number(process.env.PORT || 0) });

const stop = () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
