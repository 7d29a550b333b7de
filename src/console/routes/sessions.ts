// "Online now": the open sessions, counted per network and access point, and listed with a
// Disconnect button (a CSRF-checked form: RFC 5176 Disconnect-Request to the session's NAS). With
// JavaScript the counts and the list refresh in place (console.js fetches /sessions/live every
// few seconds and swaps that part); without it, the Refresh link reloads the page.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { ConflictError } from "../../core/shared/errors.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { show, showPart } from "../views.ts";
import { idParam, PAGE_SIZE, pageNumber, pagerOf, queryText } from "./common.ts";

export async function sessionRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "sessions" };

  async function online(request: FastifyRequest) {
    const { accountId } = sessionOf(request);
    const pageNo = pageNumber(queryText(request, "page"));
    const [counts, page] = await Promise.all([
      core.sessions.online(accountId),
      core.sessions.list(accountId, { status: "active" }, { page: pageNo, limit: PAGE_SIZE }, "-start"),
    ]);
    const networks = new Map<string, { network: string; total: number }>();
    for (const c of counts) {
      const key = String(c.network_id ?? "");
      const entry = networks.get(key) ?? { network: c.network ?? "(no network)", total: 0 };
      entry.total += c.sessions;
      networks.set(key, entry);
    }
    const now = Date.now();
    return {
      counts,
      networks: [...networks.values()],
      total: page.total,
      // How long each has run: since its start, or as the access point last reported it.
      sessions: page.data.map((s) => ({
        ...s,
        runningFor: s.start ? Math.max(0, Math.floor((now - Date.parse(s.start)) / 1000)) : s.duration,
      })),
      pager: pagerOf(page, "/console/sessions", {}),
      refreshedAt: new Date().toISOString().slice(11, 19),
    };
  }

  app.get("/sessions", need("sessions:read"), async (request, reply) => {
    const data = await online(request);
    return show(request, reply, "sessions", { title: "Online now", ...section }, data);
  });

  app.get("/sessions/live", need("sessions:read"), async (request, reply) => {
    const data = await online(request);
    return showPart(reply, "sessions-live", { ...data, page: { csrf: sessionOf(request).csrfToken } });
  });

  app.post("/sessions/:id/disconnect", need("sessions:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    try {
      const { disconnect } = await core.sessions.disconnect(accountId, idParam(request), "console");
      const notice =
        disconnect.result === "ack"
          ? "session-disconnected"
          : disconnect.result === "nak"
            ? "session-refused"
            : "session-no-answer";
      return reply.redirect(`/console/sessions?notice=${notice}`, 303);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
      const data = await online(request);
      return show(
        request,
        reply,
        "sessions",
        { title: "Online now", ...section, status: 409 },
        { ...data, error: error.message },
      );
    }
  });
}
