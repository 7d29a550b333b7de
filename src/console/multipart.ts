// multipart/form-data bodies (RFC 7578, with the part syntax of RFC 2046 §5.1.1) for the one
// console route that takes a file: the portal logo upload. Small and bounded on purpose: the body
// is read whole up to MULTIPART_BODY_LIMIT (fastify refuses more with 413), then split on the
// boundary. At most MAX_PARTS parts, MAX_PART_HEADER bytes of headers per part, and text fields of
// at most MAX_TEXT_FIELD bytes; anything else is a 400. Text fields land in a URLSearchParams (so
// formOf and the CSRF check read them as for any other form), files in `files`.
import type { FastifyInstance } from "fastify";

/** The logo limit (512 KB) and room to tell a too-large file apart from a broken request. */
export const MULTIPART_BODY_LIMIT = 2 * 1024 * 1024;
const MAX_PARTS = 10;
const MAX_PART_HEADER = 2048;
const MAX_TEXT_FIELD = 16 * 1024;

export interface UploadedFile {
  /** As the client named it; informational only, never trusted for the type. */
  filename: string;
  data: Buffer;
}

export class MultipartForm extends URLSearchParams {
  readonly files = new Map<string, UploadedFile>();
}

function badRequest(message: string): Error {
  return Object.assign(new Error(`This upload could not be read: ${message}.`), { statusCode: 400 });
}

/** The boundary parameter (RFC 2046 §5.1.1: 1-70 characters, optionally quoted). */
export function boundaryOf(contentType: string): string | null {
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))\s*(?:;|$)/i.exec(contentType);
  return match ? (match[1] ?? match[2] ?? null) : null;
}

/** A parameter of Content-Disposition (RFC 7578 §4.2): quoted, or a bare token. */
function dispositionParam(header: string, name: string): string | undefined {
  const match = new RegExp(`;\\s*${name}="((?:[^"\\\\]|\\\\.)*)"|;\\s*${name}=([^;\\s]+)`, "i").exec(header);
  if (!match) return undefined;
  return match[1] !== undefined ? match[1].replace(/\\(.)/g, "$1") : match[2];
}

export function parseMultipart(body: Buffer, boundary: string): MultipartForm {
  const form = new MultipartForm();
  const delimiter = Buffer.from(`--${boundary}`);
  let start = body.indexOf(delimiter);
  if (start < 0) throw badRequest("no parts");
  let parts = 0;
  for (;;) {
    let offset = start + delimiter.length;
    // "--" after a delimiter closes the body (the close-delimiter); epilogue ignored.
    if (body[offset] === 0x2d && body[offset + 1] === 0x2d) return form;
    // Transport padding (spaces, tabs) may follow a delimiter before its CRLF.
    while (body[offset] === 0x20 || body[offset] === 0x09) offset++;
    if (body[offset] !== 0x0d || body[offset + 1] !== 0x0a) throw badRequest("a malformed part boundary");
    offset += 2;
    if (++parts > MAX_PARTS) throw badRequest("too many fields");
    const headerEnd = body.indexOf("\r\n\r\n", offset);
    if (headerEnd < 0 || headerEnd - offset > MAX_PART_HEADER) throw badRequest("a malformed part header");
    const headers = body.toString("utf8", offset, headerEnd).split("\r\n");
    const next = body.indexOf(Buffer.concat([Buffer.from("\r\n"), delimiter]), headerEnd + 4);
    if (next < 0) throw badRequest("the body ends before its last boundary");
    const content = body.subarray(headerEnd + 4, next);
    const disposition = headers.find((line) => /^content-disposition:/i.test(line)) ?? "";
    if (!/^content-disposition:\s*form-data\s*(;|$)/i.test(disposition)) {
      throw badRequest("a part without Content-Disposition: form-data");
    }
    const name = dispositionParam(disposition, "name");
    if (!name) throw badRequest("a part without a name");
    const filename = dispositionParam(disposition, "filename");
    if (filename !== undefined) {
      if (form.files.has(name)) throw badRequest(`more than one file in ${name}`);
      // A file input left empty is sent with an empty filename and no content (RFC 7578 §4.2).
      if (filename !== "" || content.length > 0)
        form.files.set(name, { filename, data: Buffer.from(content) });
    } else {
      if (content.length > MAX_TEXT_FIELD) throw badRequest(`the field ${name} is too long`);
      form.append(name, content.toString("utf8"));
    }
    start = next + 2;
  }
}

/** Registers the parser in the (encapsulated) context of the routes that take uploads. */
export function registerMultipartParser(app: FastifyInstance, bodyLimit = MULTIPART_BODY_LIMIT): void {
  app.addContentTypeParser("multipart/form-data", { parseAs: "buffer", bodyLimit }, (request, body, done) => {
    const boundary = boundaryOf(request.headers["content-type"] ?? "");
    if (!boundary) return done(badRequest("no boundary"), undefined);
    try {
      done(null, parseMultipart(body as Buffer, boundary));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
