// The console's routes as fastify registers them (collected from its onRoute hook), and the table of
// the permission each must need: shared by the route-by-route roles test (test/console/roles.test.ts)
// and the audit walk (test/audit/console-walk.test.ts), so a route added without an entry fails both.
import Fastify from "fastify";
import { consolePlugin } from "../../src/console/plugin.ts";
import type { Permission } from "../../src/core/keys/permissions.ts";
import { MemoryCounterStore } from "../../src/http/rate-limit.ts";
import type { TestServer } from "./server.ts";

/** What each console route must need: "public" (no session), "self" (any role), or a permission. */
export const ROUTES: Record<string, Permission | "public" | "self"> = {
  "GET /console/static/:name": "public",
  "GET /console/setup": "public",
  "POST /console/setup": "public",
  "GET /console/login": "public",
  "POST /console/login": "public",
  "POST /console/logout": "self",
  "GET /console": "self",
  "GET /console/keys": "keys:read",
  "POST /console/keys": "keys:write",
  "GET /console/keys/:id/secret": "keys:write",
  "GET /console/keys/:id/revoke": "keys:write",
  "POST /console/keys/:id/revoke": "keys:write",
  "GET /console/networks": "networks:read",
  "GET /console/networks/new": "networks:write",
  "POST /console/networks": "networks:write",
  "GET /console/networks/:id": "networks:read",
  "GET /console/networks/:id/edit": "networks:write",
  "POST /console/networks/:id": "networks:write",
  "GET /console/networks/:id/secret": "networks:write",
  "GET /console/networks/:id/rotate": "networks:write",
  "POST /console/networks/:id/rotate": "networks:write",
  "GET /console/networks/:id/delete": "networks:write",
  "POST /console/networks/:id/delete": "networks:write",
  "POST /console/networks/:id/radsec/certificates": "networks:write",
  "GET /console/networks/:id/radsec/certificates/:serial": "networks:read",
  "POST /console/networks/:id/radsec/certificates/:serial/revoke": "networks:write",
  "POST /console/networks/:id/radsec/ca": "networks:write",
  "POST /console/networks/:id/radsec/ca/delete": "networks:write",
  "GET /console/eap/ca.pem": "networks:read",
  "GET /console/eap/ca.der": "networks:read",
  "GET /console/portals": "captiveportals:read",
  "GET /console/portals/new": "captiveportals:write",
  "POST /console/portals": "captiveportals:write",
  "GET /console/portals/:id/edit": "captiveportals:read",
  "POST /console/portals/:id": "captiveportals:write",
  "POST /console/portals/:id/logo": "captiveportals:write",
  "POST /console/portals/:id/logo/delete": "captiveportals:write",
  "GET /console/portals/:id/logo": "captiveportals:read",
  "GET /console/portals/:id/preview": "captiveportals:read",
  "POST /console/portals/:id/preview": "captiveportals:read",
  "POST /console/portals/preview": "captiveportals:read",
  "GET /console/portals/:id/delete": "captiveportals:write",
  "POST /console/portals/:id/delete": "captiveportals:write",
  "GET /console/guests": "users:read",
  "POST /console/guests/:id/decide": "users:write",
  "GET /console/users": "users:read",
  "GET /console/users/new": "users:write",
  "POST /console/users": "users:write",
  "GET /console/users/:id": "users:read",
  "POST /console/users/:id": "users:write",
  "POST /console/users/:id/status": "users:write",
  "POST /console/users/:id/attributes": "attributes:write",
  "POST /console/users/:id/attributes/delete": "attributes:write",
  "POST /console/users/:id/groups": "users:write",
  "POST /console/users/:id/groups/:groupId/delete": "users:write",
  "GET /console/users/:id/delete": "users:write",
  "POST /console/users/:id/delete": "users:write",
  "GET /console/groups": "groups:read",
  "POST /console/groups": "groups:write",
  "GET /console/groups/:id/delete": "groups:write",
  "POST /console/groups/:id/delete": "groups:write",
  "GET /console/vouchers": "vouchers:read",
  "POST /console/vouchers/batches": "vouchers:write",
  "GET /console/vouchers/batches/:id": "vouchers:read",
  "GET /console/vouchers/batches/:id/print": "vouchers:read",
  "GET /console/vouchers/batches/:id/csv": "vouchers:read",
  "GET /console/devices": "devices:read",
  "GET /console/devices/new": "devices:write",
  "POST /console/devices": "devices:write",
  "GET /console/devices/export": "devices:read",
  "GET /console/devices/import": "devices:write",
  "POST /console/devices/import": "devices:write",
  "GET /console/devices/:id": "devices:read",
  "POST /console/devices/:id": "devices:write",
  "POST /console/devices/:id/status": "devices:write",
  "GET /console/devices/:id/delete": "devices:write",
  "POST /console/devices/:id/delete": "devices:write",
  "GET /console/reports": "reports:read",
  "GET /console/reports/csv": "reports:read",
  "POST /console/reports/tasks": "reports:read",
  "GET /console/reports/tasks/:name": "reports:read",
  "GET /console/reports/tasks/:name/download": "reports:read",
  "GET /console/webhooks": "webhooks:read",
  "POST /console/webhooks": "webhooks:write",
  "GET /console/webhooks/:id/secret": "webhooks:write",
  "GET /console/webhooks/:id": "webhooks:read",
  "POST /console/webhooks/:id/enabled": "webhooks:write",
  "POST /console/webhooks/:id/test": "webhooks:write",
  "POST /console/webhooks/:id/deliveries/:delivery/resend": "webhooks:write",
  "GET /console/webhooks/:id/rotate": "webhooks:write",
  "POST /console/webhooks/:id/rotate": "webhooks:write",
  "GET /console/webhooks/:id/delete": "webhooks:write",
  "POST /console/webhooks/:id/delete": "webhooks:write",
  "GET /console/sessions": "sessions:read",
  "GET /console/sessions/live": "sessions:read",
  "POST /console/sessions/:id/disconnect": "sessions:write",
  "GET /console/identity-providers": "identityproviders:read",
  "GET /console/identity-providers/new": "identityproviders:write",
  "GET /console/identity-providers/:id": "identityproviders:read",
  "POST /console/identity-providers": "identityproviders:write",
  "POST /console/identity-providers/:id": "identityproviders:write",
  "GET /console/identity-providers/:id/delete": "identityproviders:write",
  "POST /console/identity-providers/:id/delete": "identityproviders:write",
  "POST /console/identity-providers/password-login": "team:write",
  "GET /console/team": "team:read",
  "POST /console/team/invites": "team:write",
  "POST /console/team/invites/:id/withdraw": "team:write",
  "POST /console/team/:id/role": "team:write",
  "GET /console/team/:id/remove": "team:write",
  "POST /console/team/:id/remove": "team:write",
  "GET /console/team/:id/sessions": "team:write",
  "POST /console/team/:id/sessions/:session/end": "team:write",
  "GET /console/invite/:token": "public",
  "POST /console/invite/:token": "public",
  "GET /console/account/sessions": "self",
  "POST /console/account/sessions/:id/end": "self",
  "GET /console/policies": "policies:read",
  "POST /console/policies": "policies:write",
  "POST /console/policies/explain": "policies:read",
  "POST /console/policies/default": "policies:write",
  "POST /console/policies/:id/move": "policies:write",
  "GET /console/policies/:id": "policies:read",
  "POST /console/policies/:id": "policies:write",
  "POST /console/policies/:id/delete": "policies:write",
  "GET /console/plans": "plans:read",
  "POST /console/plans": "plans:write",
  "GET /console/plans/:id": "plans:read",
  "POST /console/plans/:id": "plans:write",
  "POST /console/plans/:id/delete": "plans:write",
  "GET /console/directories": "directories:read",
  "GET /console/directories/new": "directories:write",
  "POST /console/directories": "directories:write",
  "GET /console/directories/:id": "directories:read",
  "POST /console/directories/:id": "directories:write",
  "POST /console/directories/:id/delete": "directories:write",
  "POST /console/directories/:id/sync": "directories:write",
  "POST /console/groups/:id/plan": "groups:write",
  "POST /console/vouchers/batches/:id/plan": "vouchers:write",
  "GET /console/access-points": "nodes:read",
  "GET /console/audit": "audit:read",
  "GET /console/audit.csv": "audit:read",
  "GET /console/access-points/:mac": "nodes:read",
  "GET /console/security": "self",
  "GET /console/security/totp": "self",
  "POST /console/security/totp": "self",
  "POST /console/security/totp/remove": "self",
  "POST /console/security/passkeys": "self",
  "POST /console/security/passkeys/:id": "self",
  "POST /console/security/passkeys/:id/remove": "self",
  "POST /console/security/recovery-codes": "self",
  "GET /console/security/recovery-codes": "self",
  "POST /console/security/requirement": "team:write",
  "GET /console/login/second-factor": "public",
  "POST /console/login/second-factor/:method": "public",
  "GET /console/login/enrol": "public",
  "POST /console/login/enrol/:method": "public",
  "POST /console/login/passkey": "public",
  "POST /console/login/passkey/finish": "public",
  "POST /console/login/cancel": "public",
  "POST /console/sso": "public",
  "POST /console/sso/:provider": "public",
  "GET /console/sso/:provider/finish/:token": "public",
};

/** Fields some allowed forms get so that letting them through changes nothing. */
export const FIELDS: Record<string, Record<string, string>> = {
  "POST /console/identity-providers/password-login": { password_login: "on" },
};

export interface Route {
  method: string;
  url: string;
  permission: string | undefined;
  public: boolean;
}

/** The console's routes as fastify registers them, collected from its onRoute hook. */
export async function consoleRoutes(server: TestServer): Promise<Route[]> {
  const routes: Route[] = [];
  const app = Fastify({ logger: false });
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) {
      if (method === "HEAD") continue;
      const config = (route.config ?? {}) as { consolePermission?: string; consolePublic?: boolean };
      routes.push({
        method,
        url: route.url,
        permission: config.consolePermission,
        public: config.consolePublic === true,
      });
    }
  });
  await app.register(consolePlugin, {
    prefix: "/console",
    core: server.core,
    counters: new MemoryCounterStore(),
  });
  await app.ready();
  await app.close();
  return routes;
}

/** A path for the route: ids that name nothing, so an allowed request changes nothing. */
export function pathOf(url: string): string {
  return url.replace(/:([A-Za-z]+)/g, (_, name: string) => (name === "name" ? "nothing" : "999999"));
}
