// The baseline: a bare fastify (same version as Wisp) answering the same paths with fixed JSON, with no
// auth, no rate limit, no validation and no database. Started by bench/users.ts as a child process.
import Fastify from "fastify";
import { benchUser, LIST_LIMIT, SEEDED_USERS } from "./fixtures.ts";

const host = process.env.HOST || "127.0.0.1";
const port = Number(process.env.PORT || 0);

const user = { id: 1, ...benchUser(1) };
const page = {
  data: Array.from({ length: LIST_LIMIT }, (_, i) => ({ id: i + 1, ...benchUser(i + 1) })),
  page: 1,
  total: SEEDED_USERS,
  limit: LIST_LIMIT,
};

const app = Fastify();
app.get("/healthz", async () => ({ status: "ok" }));
app.get("/api/users/:user_id", async () => user);
app.get("/api/users", async () => page);

await app.listen({ host, port });

const stop = () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
