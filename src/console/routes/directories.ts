// Directories (issue 30): the account's LDAP / Active Directory sources. A list with each one's
// server status and last sync, a form for new ones and edits, delete, and "Sync now" showing the
// sync's report. The bind password is write-only: the form never shows it back, only whether one
// is set. Every rule is the service's (src/core/directories).

import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ServerStatus } from "../../core/directories/ldap.ts";
import { DISABLED_MODES, NUMBER_FIELDS, type NumberField, SCOPES } from "../../core/directories/rules.ts";
import {
  TEXT_FIELDS as DIRECTORY_TEXT_FIELDS,
  type Directory,
  type DirectoryInput,
  type GroupMapping,
} from "../../core/directories/service.ts";
import type { SyncReport } from "../../core/directories/sync.ts";
import { ValidationError } from "../../core/shared/errors.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { type Form, formOf } from "../forms.ts";
import { type FieldErrors, show } from "../views.ts";
import { attempt, idParam } from "./common.ts";

const TEXT_FIELDS = ["name", "servers", ...DIRECTORY_TEXT_FIELDS, "group_mappings"] as const;
const NUMBERS = Object.keys(NUMBER_FIELDS) as NumberField[];
const NUMBER_LABELS: Record<NumberField, string> = {
  sync_interval: "Sync interval (minutes; 0: no scheduled sync)",
  group_cache_seconds: "Group cache (seconds)",
  connect_timeout_ms: "Connect timeout (ms)",
  timeout_ms: "Operation timeout (ms)",
  pool_size: "Connections per server",
  breaker_failures: "Failures in a row before a server is skipped",
  breaker_cooldown_seconds: "Skip a failing server for (seconds)",
};

type Values = Record<(typeof TEXT_FIELDS)[number] | NumberField, string> & {
  enabled: boolean;
  start_tls: boolean;
  /** Write-only: never filled in from the stored directory. */
  bind_password: string;
  clear_bind_password: boolean;
};

/** A new directory's form: the stored defaults (migration 036). */
const blank = (): Values => ({
  name: "",
  servers: "",
  ca_pem: "",
  bind_dn: "",
  user_base: "",
  user_scope: "sub",
  user_filter: "(objectClass=person)",
  username_attribute: "uid",
  name_attribute: "cn",
  email_attribute: "mail",
  disabled_mode: "none",
  disabled_attribute: "",
  disabled_value: "",
  nt_hash_attribute: "",
  group_base: "",
  group_filter: "(|(objectClass=groupOfNames)(objectClass=group))",
  group_member_attribute: "member",
  group_name_attribute: "cn",
  group_mappings: "",
  sync_interval: "0",
  group_cache_seconds: "300",
  connect_timeout_ms: "2000",
  timeout_ms: "3000",
  pool_size: "4",
  breaker_failures: "3",
  breaker_cooldown_seconds: "30",
  enabled: true,
  start_tls: false,
  bind_password: "",
  clear_bind_password: false,
});

/** Mappings are typed one a line as "directory group -> Wisp group" (a DN holds "=" and ","). */
const ARROW = "->";

function readValues(form: Form): Values {
  const values = blank();
  for (const field of TEXT_FIELDS) values[field] = form.text(field);
  for (const field of NUMBERS) values[field] = form.text(field);
  values.enabled = form.checked("enabled");
  values.start_tls = form.checked("start_tls");
  values.bind_password = form.raw("bind_password");
  values.clear_bind_password = form.checked("clear_bind_password");
  return values;
}

function valuesOf(d: Directory): Values {
  const values = blank();
  for (const field of TEXT_FIELDS) {
    if (field === "servers" || field === "group_mappings") continue;
    values[field] = d[field];
  }
  for (const field of NUMBERS) values[field] = String(d[field]);
  values.servers = d.servers.join("\n");
  values.group_mappings = d.group_mappings.map((m) => `${m.directory_group} ${ARROW} ${m.group}`).join("\n");
  values.enabled = d.enabled;
  values.start_tls = d.start_tls;
  return values;
}

const lines = (text: string) =>
  text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "");

/** "directory group -> Wisp group" lines; split at the last arrow (Wisp group names hold no ">"). */
function mappingsOf(text: string): GroupMapping[] {
  return lines(text).map((line, i) => {
    const at = line.lastIndexOf(ARROW);
    if (at <= 0)
      throw ValidationError.field(
        "group_mappings",
        `line ${i + 1} must be "directory group ${ARROW} Wisp group"`,
      );
    return { directory_group: line.slice(0, at).trim(), group: line.slice(at + ARROW.length).trim() };
  });
}

/** A whole number typed in the form: empty keeps the stored one; anything else NaN, which the service names. */
const whole = (text: string) =>
  text === "" ? undefined : /^\d{1,9}$/.test(text) ? Number(text) : Number.NaN;

function inputOf(v: Values, creating: boolean): DirectoryInput {
  const input: DirectoryInput = {
    enabled: v.enabled,
    start_tls: v.start_tls,
    servers: lines(v.servers),
    group_mappings: mappingsOf(v.group_mappings),
  };
  if (creating) input.name = v.name;
  for (const field of TEXT_FIELDS) {
    if (field === "name" || field === "servers" || field === "group_mappings") continue;
    input[field] = v[field];
  }
  for (const field of NUMBERS) input[field] = whole(v[field]);
  // Empty keeps the stored password; the checkbox removes it.
  if (v.clear_bind_password) input.bind_password = "";
  else if (v.bind_password !== "") input.bind_password = v.bind_password;
  return input;
}

export type Health = "ok" | "degraded" | "down";

/**
 * A server's health from this process's breaker: open is down (skipped until its cooldown), a
 * failing one not yet open or on its half-open probe is degraded.
 */
export function serverHealth(s: ServerStatus): Health {
  if (s.state === "open") return "down";
  return s.state === "half-open" || s.last_error !== "" ? "degraded" : "ok";
}

/** A directory's health: every server down is down, every server fine is ok, anything between degraded. */
export function directoryHealth(d: Directory): Health | "disabled" {
  if (!d.enabled) return "disabled";
  const states = d.server_status.map(serverHealth);
  if (states.length > 0 && states.every((s) => s === "down")) return "down";
  return states.every((s) => s === "ok") ? "ok" : "degraded";
}

/** A sync report in one line. */
export function syncSummary(r: SyncReport): string {
  const c = r.counts;
  const counts =
    `${r.seen} seen: ${c.created} created, ${c.updated} updated, ${c.disabled} disabled, ` +
    `${c.enabled} enabled, ${c.removed} removed, ${c.conflict} conflicts, ${c.skipped} skipped`;
  return r.ok ? counts : `failed: ${r.error ?? "unknown error"} (${counts})`;
}

interface FormState {
  values?: Values;
  errors?: FieldErrors;
  report?: SyncReport | null;
  status?: number;
}

export async function directoryRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "directories" };
  const helpers = { health: directoryHealth, serverHealth, syncSummary, scopes: SCOPES };

  function formPage(
    request: FastifyRequest,
    reply: FastifyReply,
    directory: Directory | null,
    state: FormState = {},
  ) {
    const title = directory ? directory.name : "New directory";
    return show(
      request,
      reply,
      "directory-form",
      { title, ...section, status: state.status ?? 200 },
      {
        directory,
        values: { ...(state.values ?? (directory ? valuesOf(directory) : blank())), bind_password: "" },
        errors: state.errors ?? {},
        report: state.report ?? null,
        numbers: NUMBERS.map((key) => [key, NUMBER_LABELS[key], NUMBER_FIELDS[key]]),
        disabledModes: DISABLED_MODES,
        ...helpers,
      },
    );
  }

  app.get("/directories", need("directories:read"), async (request, reply) => {
    const directories = await core.directories.list(sessionOf(request).accountId);
    return show(
      request,
      reply,
      "directories",
      { title: "Directories", ...section },
      { directories, ...helpers },
    );
  });

  app.get("/directories/new", need("directories:write"), (request, reply) => formPage(request, reply, null));

  app.post("/directories", need("directories:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const values = readValues(formOf(request));
    const result = await attempt(() => core.directories.create(accountId, inputOf(values, true)), "name");
    if ("errors" in result)
      return formPage(request, reply, null, { values, errors: result.errors, status: 400 });
    return reply.redirect(`/console/directories/${result.ok.id}?notice=directory-created`, 303);
  });

  app.get("/directories/:id", need("directories:read"), async (request, reply) => {
    const directory = await core.directories.get(sessionOf(request).accountId, idParam(request));
    return formPage(request, reply, directory);
  });

  app.post("/directories/:id", need("directories:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const directory = await core.directories.get(accountId, idParam(request));
    const values = { ...readValues(formOf(request)), name: directory.name };
    const result = await attempt(() =>
      core.directories.update(accountId, directory.id, inputOf(values, false)),
    );
    if ("errors" in result)
      return formPage(request, reply, directory, { values, errors: result.errors, status: 400 });
    return reply.redirect(`/console/directories/${directory.id}?notice=directory-updated`, 303);
  });

  app.post("/directories/:id/delete", need("directories:write"), async (request, reply) => {
    await core.directories.delete(sessionOf(request).accountId, idParam(request));
    return reply.redirect("/console/directories?notice=directory-deleted", 303);
  });

  /** Sync now: answers when the sync is done, with its report (a failed one says why). */
  app.post("/directories/:id/sync", need("directories:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    const result = await attempt(() => core.directories.sync(accountId, id));
    const directory = await core.directories.get(accountId, id);
    if ("errors" in result)
      return formPage(request, reply, directory, { errors: result.errors, status: 409 });
    return formPage(request, reply, directory, { report: result.ok });
  });
}
