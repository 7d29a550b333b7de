// A real SMTP server for tests (nodemailer's smtp-server) on loopback: it receives every message
// Wisp sends and parses it (mailparser), so tests read the code or the link out of the mail itself.
// It can answer slowly, refuse messages, or go down and come back on the same port.
import type { AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  /** Envelope recipients (RCPT TO). */
  to: string[];
  from: string;
  subject: string;
  text: string;
  html: string;
  /** The raw message as it came, headers included. */
  raw: string;
  headers: Map<string, unknown>;
}

export class TestSmtp {
  readonly mails: ReceivedMail[] = [];
  /** Milliseconds to hold each message before answering (a slow server). */
  delayMs = 0;
  /** Refuse each message with a 451 (a server that cannot take mail now). */
  refuse = false;
  port = 0;
  private server: SMTPServer;
  private waiters = new Set<() => void>();

  private constructor() {
    this.server = this.create();
  }

  static async start(): Promise<TestSmtp> {
    const smtp = new TestSmtp();
    await smtp.listen(0);
    return smtp;
  }

  private create(): SMTPServer {
    return new SMTPServer({
      // A local relay without TLS or login (SMTP_SECURITY=none), as a test needs nothing else.
      secure: false,
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", async () => {
          const raw = Buffer.concat(chunks);
          const finish = async () => {
            if (this.refuse) {
              const error = new Error("try again later") as Error & { responseCode: number };
              error.responseCode = 451;
              return callback(error);
            }
            const parsed = await simpleParser(raw);
            this.mails.push({
              to: session.envelope.rcptTo.map((r) => r.address),
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
              subject: parsed.subject ?? "",
              text: parsed.text ?? "",
              html: typeof parsed.html === "string" ? parsed.html : "",
              raw: raw.toString("utf8"),
              headers: parsed.headers as Map<string, unknown>,
            });
            callback();
            for (const wake of this.waiters) wake();
          };
          if (this.delayMs) setTimeout(finish, this.delayMs);
          else await finish();
        });
      },
    });
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, "127.0.0.1", () => {
        this.port = (this.server.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  /** The environment that points Wisp at this server. */
  env(): Record<string, string> {
    return {
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(this.port),
      SMTP_SECURITY: "none",
      SMTP_FROM: "Guest Wi-Fi <wifi@example.net>",
      SMTP_TIMEOUT_MS: "1000",
    };
  }

  to(address: string): ReceivedMail[] {
    return this.mails.filter((m) => m.to.includes(address));
  }

  /** Resolves with the first mail matching, waiting for it up to timeoutMs. */
  waitFor(
    match: (mail: ReceivedMail) => boolean,
    timeoutMs = 10_000,
    what = "a mail",
  ): Promise<ReceivedMail> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.mails.find(match);
        if (!found) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`${what} not received in ${timeoutMs} ms; ${this.mails.length} mails in all`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** Stops listening (connections are refused) but keeps the port for up(). */
  async down(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  async up(): Promise<void> {
    this.server = this.create();
    await this.listen(this.port);
  }

  async close(): Promise<void> {
    if (this.server.server.listening) await this.down();
  }
}

/** The 6-digit code in a mail or SMS text. */
export function codeIn(text: string): string {
  const code = /\b(\d{6})\b/.exec(text)?.[1];
  if (!code) throw new Error(`no 6-digit code in: ${text.slice(0, 300)}`);
  return code;
}

/** The first link to `path` (like /confirm/) in a mail's text part. */
export function linkIn(text: string, path: string): string {
  const link = new RegExp(`https?://\\S+${path}\\S*`).exec(text)?.[0];
  if (!link) throw new Error(`no link to ${path} in: ${text.slice(0, 500)}`);
  return link;
}
