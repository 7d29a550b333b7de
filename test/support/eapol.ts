// eapol_test (wpa_supplicant's RADIUS/EAP test supplicant, Debian package eapoltest) run against
// a RADIUS server: one process per login, its verdict, MPPE check and round trips read from its
// output (see ../shared/design/eap-lab.md).
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "./databases.ts";

export function eapolTestUnavailable(): string | null {
  try {
    execFileSync("sh", ["-c", "command -v eapol_test"], { stdio: "ignore" });
    return null;
  } catch {
    return "eapol_test is not installed (Debian package eapoltest)";
  }
}

export interface EapolResult {
  /** Exit code: 0 success, 252 EAP failure, other: timeout or error. */
  code: number;
  success: boolean;
  /** "MPPE keys OK: 1 mismatch: 0" was printed. */
  mppeOk: boolean;
  accessRequests: number;
  tlsVersion: string | undefined;
  resumed: boolean;
  output: string;
}

export interface EapolOptions {
  port: number;
  secret: string;
  /** The network block's fields; strings are quoted, `raw` ones are not (eap=PEAP). */
  network: Record<string, string>;
  raw?: Record<string, string>;
  timeoutSeconds?: number;
  /** eapol_test -r: re-authentications after the first login (TLS resumption). */
  reauth?: number;
  mac?: string;
}

let counter = 0;
const dir = () => tempDir("eapol");

export function eapolTest(options: EapolOptions): Promise<EapolResult> {
  counter++;
  const file = path.join(dir(), `network-${counter}.conf`);
  const lines = [
    ...Object.entries(options.raw ?? {}).map(([k, v]) => `  ${k}=${v}`),
    ...Object.entries(options.network).map(([k, v]) => `  ${k}="${v}"`),
  ];
  fs.writeFileSync(file, `network={\n  key_mgmt=WPA-EAP\n${lines.join("\n")}\n}\n`);
  const mac =
    options.mac ??
    `02:00:00:00:${((counter >> 8) & 0xff).toString(16).padStart(2, "0")}:${(counter & 0xff).toString(16).padStart(2, "0")}`;
  const args = ["-c", file, "-a", "127.0.0.1", "-p", String(options.port), "-s", options.secret];
  args.push("-t", String(options.timeoutSeconds ?? 10), "-M", mac);
  if (options.reauth) args.push("-r", String(options.reauth));
  return new Promise((resolve) => {
    execFile("eapol_test", args, { maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      const code = error ? ((error as { code?: number }).code ?? 1) : 0;
      fs.rmSync(file, { force: true });
      const lines = stdout.trimEnd().split("\n");
      resolve({
        code: typeof code === "number" ? code : 1,
        success: code === 0 && lines.at(-1) === "SUCCESS",
        mppeOk: /MPPE keys OK: [1-9]\d* +mismatch: 0/.test(stdout),
        accessRequests: (stdout.match(/code=1 \(Access-Request\)/g) ?? []).length,
        tlsVersion:
          /SSL: Using TLS version (TLSv[\d.]+)/.exec(stdout)?.[1] ??
          /TLS version (TLSv1\.\d)/.exec(stdout)?.[1],
        resumed: /Resumed session|resumed session|abbreviated/i.test(stdout),
        output: stdout,
      });
    });
  });
}
