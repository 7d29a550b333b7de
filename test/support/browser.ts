// A real browser for the console tests: Debian's chromium (never a downloaded build) driven by
// playwright-core, with a fresh profile each launch. Screenshots go to one folder the tests print.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM = process.env.WISP_TEST_CHROMIUM || "/usr/bin/chromium";
export const SCREENSHOT_DIR = path.join(os.tmpdir(), "wisp-console-screenshots");

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** null when the browser can run; otherwise why the browser tests skip (printed). */
export function browserUnavailable(): string | null {
  if (fs.existsSync(CHROMIUM)) return null;
  const reason = `${CHROMIUM} is missing (Debian: apt-get install -y chromium); browser tests skipped`;
  console.log(reason);
  return reason;
}

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Writes <name>.png of the current page to SCREENSHOT_DIR and returns its path. */
  screenshot(name: string, options?: { fullPage?: boolean }): Promise<string>;
  close(): Promise<void>;
}

export async function launchBrowser(viewport = { width: 1280, height: 900 }): Promise<TestBrowser> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "wisp-chromium-"));
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport,
    timeout: 30_000,
  });
  // A step that takes 10 s was seen with two dozen runnable processes on two cores (a page posting
  // a form that hashes a password): the limit is for a test that hangs, not a slow machine.
  context.setDefaultTimeout(30_000);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async screenshot(name, options = {}) {
      const file = path.join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path: file, fullPage: options.fullPage ?? true });
      return file;
    },
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface PageResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The Location of a redirect, as sent. */
  location: string | null;
  setCookies: string[];
}

/**
 * A browser without JavaScript, for HTTP-level console tests: keeps cookies, follows no redirects,
 * reads the CSRF token out of the last page's forms.
 */
export class ConsoleClient {
  readonly cookies = new Map<string, string>();
  /** The _csrf value of the last page fetched. */
  csrf = "";

  constructor(
    readonly base: string,
    readonly headers: Record<string, string> = {},
  ) {}

  private async send(
    method: string,
    path: string,
    body?: URLSearchParams,
    headers: Record<string, string> = {},
  ) {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(`${this.base}${path}`, {
      method,
      redirect: "manual",
      headers: {
        ...this.headers,
        ...(cookie ? { cookie } : {}),
        ...(body ? { "content-type": "application/x-www-form-urlencoded" } : {}),
        ...headers,
      },
      body,
    });
    const text = await response.text();
    const setCookies = response.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (/Max-Age=0/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const token = /name="_csrf" value="([^"]*)"/.exec(text)?.[1];
    if (token) this.csrf = token;
    return {
      status: response.status,
      headers: response.headers,
      text,
      location: response.headers.get("location"),
      setCookies,
    };
  }

  get(path: string, headers?: Record<string, string>): Promise<PageResponse> {
    return this.send("GET", path, undefined, headers);
  }

  /** Posts a form; `_csrf` is the last page's token unless the fields give one (null: none at all). */
  post(
    path: string,
    fields: Record<string, string | string[]> = {},
    options: { csrf?: string | null; headers?: Record<string, string> } = {},
  ): Promise<PageResponse> {
    const body = new URLSearchParams();
    const csrf = options.csrf === undefined ? this.csrf : options.csrf;
    if (csrf !== null) body.set("_csrf", csrf);
    for (const [name, value] of Object.entries(fields)) {
      for (const item of Array.isArray(value) ? value : [value]) body.append(name, item);
    }
    return this.send("POST", path, body, options.headers);
  }

  /** Posts a multipart/form-data form (file inputs), with the last page's `_csrf`. */
  async postMultipart(
    path: string,
    fields: Record<string, string | string[]>,
    files: Record<string, { name: string; type: string; data: Buffer }>,
  ): Promise<PageResponse> {
    const body = new FormData();
    body.set("_csrf", this.csrf);
    for (const [name, value] of Object.entries(fields)) {
      for (const item of Array.isArray(value) ? value : [value]) body.append(name, item);
    }
    for (const [name, file] of Object.entries(files)) {
      body.set(name, new Blob([new Uint8Array(file.data)], { type: file.type }), file.name);
    }
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(`${this.base}${path}`, {
      method: "POST",
      body,
      headers: { ...this.headers, ...(cookie ? { cookie } : {}) },
      redirect: "manual",
    });
    return {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
      location: response.headers.get("location"),
      setCookies: response.headers.getSetCookie(),
    };
  }

  /** Opens the login page and logs in; returns the answer to the form. */
  async login(email: string, password: string, headers?: Record<string, string>): Promise<PageResponse> {
    await this.get("/console/login", headers);
    return this.post("/console/login", { email, password }, { headers });
  }
}
