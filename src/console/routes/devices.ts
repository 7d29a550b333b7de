// Devices: search and page through them, add, edit, revoke (disable) or forget (after a
// confirmation page), and CSV import (all or nothing, every refused row listed) and export. The
// device page shows its latest sessions and authentications.
import { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ImportRefused } from "../../core/devices/csv.ts";
import { DEVICE_KINDS, DEVICE_STATUSES } from "../../core/devices/rules.ts";
import type { Device, DeviceInput } from "../../core/devices/service.ts";
import { ValidationError } from "../../core/shared/errors.ts";
import { type ConsoleContext, need, sessionOf } from "../context.ts";
import { type Form, formOf, positiveId } from "../forms.ts";
import { MultipartForm, registerMultipartParser } from "../multipart.ts";
import { type FieldErrors, show } from "../views.ts";
import { attempt, idParam, PAGE_SIZE, pageNumber, pagerOf, queryText } from "./common.ts";

interface DeviceFormValues {
  mac: string;
  name: string;
  description: string;
  username: string;
  voucher: string;
  group_id: string;
  expires: string;
}

const GROUP_CHOICES = 1000;
/** A CSV of 100,000 devices is about 4 MB. */
const IMPORT_LIMIT = 32 * 1024 * 1024;

function readForm(form: Form): DeviceFormValues {
  return {
    mac: form.text("mac"),
    name: form.text("name"),
    description: form.text("description"),
    username: form.text("username"),
    voucher: form.text("voucher"),
    group_id: form.text("group_id"),
    expires: form.text("expires"),
  };
}

const empty: DeviceFormValues = {
  mac: "",
  name: "",
  description: "",
  username: "",
  voucher: "",
  group_id: "",
  expires: "",
};

export async function deviceRoutes(app: FastifyInstance, { core }: ConsoleContext): Promise<void> {
  const section = { section: "devices" };

  /** The form's values as the service's input: owner and group by name or id, checked there. */
  async function inputOf(accountId: number, values: DeviceFormValues): Promise<DeviceInput> {
    const ids = await core.devices.idsOf(accountId, { username: values.username, voucher: values.voucher });
    if (ids.user_id && ids.voucher_id) {
      throw ValidationError.field(
        "voucher",
        "must be empty when an owner username is given: a device has one owner",
      );
    }
    return {
      mac: values.mac,
      name: values.name,
      description: values.description,
      ...ids,
      group_id: values.group_id === "" ? null : (positiveId(values.group_id) ?? Number.NaN),
      expires: values.expires === "" ? null : values.expires,
    };
  }

  async function valuesOf(accountId: number, device: Device): Promise<DeviceFormValues> {
    const names = await core.devices.ownerNames(accountId, device);
    return {
      mac: device.mac,
      name: device.name,
      description: device.description,
      username: names.username,
      voucher: names.voucher,
      group_id: device.group_id === null ? "" : String(device.group_id),
      expires: device.expires ?? "",
    };
  }

  const groups = async (accountId: number) =>
    (await core.groups.list(accountId, undefined, { page: 1, limit: GROUP_CHOICES })).data;

  async function devicePage(
    request: FastifyRequest,
    reply: FastifyReply,
    id: number,
    state: { values?: DeviceFormValues; errors?: FieldErrors; status?: number } = {},
  ) {
    const { accountId } = sessionOf(request);
    const activity = await core.devices.activity(accountId, id);
    const values = state.values ?? (await valuesOf(accountId, activity.device));
    return show(
      request,
      reply,
      "device",
      { title: activity.device.name || activity.device.mac, ...section, status: state.status ?? 200 },
      { ...activity, values, errors: state.errors ?? {}, groups: await groups(accountId) },
    );
  }

  app.get("/devices", need("devices:read"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const search = queryText(request, "search").slice(0, 100);
    const pick = (name: string, allowed: readonly string[]) => {
      const value = queryText(request, name);
      return allowed.includes(value) ? value : "";
    };
    const status = pick("status", DEVICE_STATUSES);
    const kind = pick("kind", DEVICE_KINDS);
    const page = await core.devices.list(
      accountId,
      { search: search || undefined, status: status || undefined, kind: kind || undefined },
      { page: pageNumber(queryText(request, "page")), limit: PAGE_SIZE },
    );
    const pager = pagerOf(page, "/console/devices", { search, status, kind });
    return show(
      request,
      reply,
      "devices",
      { title: "Devices", ...section },
      { devices: page.data, pager, search, status, kind, statuses: DEVICE_STATUSES, kinds: DEVICE_KINDS },
    );
  });

  app.get("/devices/new", need("devices:write"), async (request, reply) =>
    show(
      request,
      reply,
      "device-new",
      { title: "New device", ...section },
      { values: empty, errors: {}, groups: await groups(sessionOf(request).accountId) },
    ),
  );

  app.post("/devices", need("devices:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const values = readForm(formOf(request));
    const result = await attempt(
      async () => core.devices.create(accountId, await inputOf(accountId, values)),
      "mac",
    );
    if ("errors" in result) {
      return show(
        request,
        reply,
        "device-new",
        { title: "New device", ...section, status: 400 },
        { values, errors: result.errors, groups: await groups(accountId) },
      );
    }
    return reply.redirect(`/console/devices/${result.ok.id}?notice=device-created`, 303);
  });

  app.get("/devices/export", need("devices:read"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    return reply
      .type("text/csv; charset=utf-8")
      .header("Content-Disposition", 'attachment; filename="devices.csv"')
      .header("Cache-Control", "no-store")
      .send(Readable.from(core.devices.exportCsv(accountId)));
  });

  app.get("/devices/import", need("devices:write"), (request, reply) =>
    show(
      request,
      reply,
      "device-import",
      { title: "Import devices", ...section },
      { problems: [], message: "" },
    ),
  );

  await app.register(async (uploads) => {
    registerMultipartParser(uploads, IMPORT_LIMIT);
    uploads.post("/devices/import", need("devices:write"), async (request, reply) => {
      const { accountId } = sessionOf(request);
      const file = request.body instanceof MultipartForm ? request.body.files.get("file") : undefined;
      const refused = (problems: { line: number; message: string }[], message: string) =>
        show(
          request,
          reply,
          "device-import",
          { title: "Import devices", ...section, status: 400 },
          { problems, message },
        );
      if (!file) return refused([{ line: 0, message: "choose a CSV file" }], "No file was chosen.");
      try {
        const { created } = await core.devices.importCsv(accountId, Readable.from([file.data]));
        return reply.redirect(`/console/devices?notice=devices-imported&count=${created}`, 303);
      } catch (error) {
        if (!(error instanceof ImportRefused)) throw error;
        const more = error.count - error.problems.length;
        return refused(
          error.problems,
          `Nothing was imported: ${error.count} row${error.count === 1 ? " was" : "s were"} refused${more > 0 ? ` (the first ${error.problems.length} are listed)` : ""}.`,
        );
      }
    });
  });

  app.get("/devices/:id", need("devices:read"), (request, reply) =>
    devicePage(request, reply, idParam(request)),
  );

  app.post("/devices/:id", need("devices:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    await core.devices.get(accountId, id);
    const values = readForm(formOf(request));
    const result = await attempt(
      async () => core.devices.update(accountId, id, await inputOf(accountId, values)),
      "mac",
    );
    if ("errors" in result)
      return devicePage(request, reply, id, { values, errors: result.errors, status: 400 });
    return reply.redirect(`/console/devices/${id}?notice=device-updated`, 303);
  });

  app.post("/devices/:id/status", need("devices:write"), async (request, reply) => {
    const { accountId } = sessionOf(request);
    const id = idParam(request);
    const form = formOf(request);
    const status = form.text("status") === "disabled" ? "disabled" : "enabled";
    await core.devices.update(accountId, id, { status });
    const back = form.text("back") === "list" ? "/console/devices" : `/console/devices/${id}`;
    return reply.redirect(`${back}?notice=device-${status}`, 303);
  });

  app.get("/devices/:id/delete", need("devices:write"), async (request, reply) => {
    const device = await core.devices.get(sessionOf(request).accountId, idParam(request));
    return show(request, reply, "device-delete", { title: `Forget ${device.mac}`, ...section }, { device });
  });

  app.post("/devices/:id/delete", need("devices:write"), async (request, reply) => {
    await core.devices.delete(sessionOf(request).accountId, idParam(request));
    return reply.redirect("/console/devices?notice=device-deleted", 303);
  });
}
