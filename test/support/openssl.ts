// The openssl command, used by tests only to check what Wisp made (and to make files Wisp did not),
// never by Wisp itself. Tests that need it skip with the reason when it is missing.
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/** null when `openssl` runs, else why the tests that need it skip. */
export const opensslMissing: string | null = (() => {
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" });
    return null;
  } catch {
    const reason = "the openssl command is not installed (Debian package openssl)";
    console.log(`# skipping openssl checks: ${reason}`);
    return reason;
  }
})();

export interface OpensslResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs openssl with the arguments (and standard input), never throwing for a non-zero exit. */
export function openssl(args: string[], input?: string | Buffer): Promise<OpensslResult> {
  return new Promise((resolve, reject) => {
    const child = execFile("openssl", args, { encoding: "buffer" }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
      if (error && typeof error.code !== "number") reject(error);
      else resolve({ code, stdout: stdout.toString("utf8"), stderr: stderr.toString("utf8") });
    });
    child.stdin?.end(input);
  });
}

/** Writes `content` to `dir/name` and returns the path. */
export function writeFile(dir: string, name: string, content: string | Buffer): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

/** The text of one certificate as `openssl x509 -noout -text` prints it (plus the subject line). */
export async function describeCertificate(pem: string): Promise<string> {
  const result = await openssl(["x509", "-noout", "-text", "-subject", "-nameopt", "RFC2253"], pem);
  if (result.code !== 0) throw new Error(`openssl x509 failed: ${result.stderr}`);
  return result.stdout;
}

/** `openssl verify -CAfile ca -purpose <purpose> cert`: "OK" or openssl's error. */
export async function verifyWith(caFile: string, certFile: string, purpose: string): Promise<OpensslResult> {
  return openssl(["verify", "-CAfile", caFile, "-purpose", purpose, certFile]);
}
