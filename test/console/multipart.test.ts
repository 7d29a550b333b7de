// The console's bounded multipart/form-data parser (RFC 7578 / RFC 2046 §5.1.1), as used by the
// portal logo upload.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { boundaryOf, MultipartForm, parseMultipart } from "../../src/console/multipart.ts";

const CRLF = "\r\n";

function body(boundary: string, parts: string[], close = true): Buffer {
  return Buffer.from(
    `preamble${CRLF}${parts.map((p) => `--${boundary}${CRLF}${p}${CRLF}`).join("")}${close ? `--${boundary}--${CRLF}epilogue` : ""}`,
    "latin1",
  );
}

describe("multipart/form-data", () => {
  test("boundary: token or quoted, at most 70 characters", () => {
    assert.equal(boundaryOf("multipart/form-data; boundary=----abc123"), "----abc123");
    assert.equal(boundaryOf('multipart/form-data; charset=utf-8; boundary="a b:c"'), "a b:c");
    assert.equal(boundaryOf("multipart/form-data"), null);
    assert.equal(boundaryOf(`multipart/form-data; boundary=${"x".repeat(71)}`), null);
  });

  test("text fields and one file, as a browser sends them", () => {
    const png = "\x89PNG\r\n\x1a\n--not-the-boundary\r\n";
    const form = parseMultipart(
      body("XyZ", [
        `Content-Disposition: form-data; name="_csrf"${CRLF}${CRLF}token-value`,
        `Content-Disposition: form-data; name="logo"; filename="a \\"b\\".png"${CRLF}Content-Type: image/png${CRLF}${CRLF}${png}`,
        `Content-Disposition: form-data; name="note"${CRLF}${CRLF}caf\xc3\xa9`,
      ]),
      "XyZ",
    );
    assert.ok(form instanceof URLSearchParams, "read by formOf like any form");
    assert.ok(form instanceof MultipartForm);
    assert.equal(form.get("_csrf"), "token-value");
    assert.equal(form.get("note"), "café");
    const file = form.files.get("logo");
    assert.equal(file?.filename, 'a "b".png');
    assert.deepEqual(file?.data, Buffer.from(png, "latin1"));
  });

  test("an empty file input is no file", () => {
    const form = parseMultipart(
      body("b", [
        `Content-Disposition: form-data; name="logo"; filename=""${CRLF}Content-Type: application/octet-stream${CRLF}${CRLF}`,
      ]),
      "b",
    );
    assert.equal(form.files.size, 0);
  });

  test("refused with 400: no closing boundary, no name, not form-data, too many parts, two files", () => {
    const field = `Content-Disposition: form-data; name="a"${CRLF}${CRLF}1`;
    const file = `Content-Disposition: form-data; name="f"; filename="x"${CRLF}${CRLF}1`;
    for (const [what, data] of [
      ["truncated", Buffer.from(`--b${CRLF}${field}`)],
      ["no name", body("b", [`Content-Disposition: form-data${CRLF}${CRLF}1`])],
      ["attachment", body("b", [`Content-Disposition: attachment; name="a"${CRLF}${CRLF}1`])],
      [
        "too many parts",
        body(
          "b",
          Array.from({ length: 11 }, () => field),
        ),
      ],
      ["two files", body("b", [file, file])],
      [
        "long text field",
        body("b", [`Content-Disposition: form-data; name="a"${CRLF}${CRLF}${"x".repeat(17 * 1024)}`]),
      ],
      ["no boundary at all", Buffer.from("hello")],
    ] as const) {
      assert.throws(
        () => parseMultipart(data, "b"),
        (error: Error & { statusCode?: number }) => {
          assert.equal(error.statusCode, 400, what);
          return true;
        },
      );
    }
  });
});
