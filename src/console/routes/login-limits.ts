// The limits of failed console logins (auth.ts's header says how they count), shared by the
// password form and the second-factor forms (sign-in.ts): a wrong code counts as a failed login
// of the email and address, like a wrong password.
import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import { normalizeEmail } from "../../core/admins/rules.ts";
import type { CounterStore, WindowCount } from "../../http/rate-limit.ts";
import { show } from "../views.ts";

export const LOGIN_WINDOW_MS = 15 * 60_000;
/** Failed logins (and wrong setup codes, and wrong second factors) per email and address in a window. */
export const LOGIN_FAILURE_LIMIT = 10;
/** Failed logins per address, whatever the emails, in a window. */
export const LOGIN_ADDRESS_FAILURE_LIMIT = 20;

interface Limit {
  /** The counter's name (a Redis key when REDIS_URL is set). */
  name: string;
  limit: number;
}

export interface Attempt {
  /** Seconds to wait when this attempt is over the limit; null when it may go on. */
  wait: number | null;
  /** Takes the attempt back from its counts (it was not a failure). */
  release(): Promise<void>;
}

export function loginLimiter(counters: CounterStore) {
  /** The email is hashed: counter names (Redis keys) carry no addresses of people. */
  const loginLimits = (address: string, email: string): Limit[] => [
    {
      name: `console-login:${createHash("sha256").update(normalizeEmail(email)).digest("hex").slice(0, 32)}:${address}`,
      limit: LOGIN_FAILURE_LIMIT,
    },
    { name: `console-login-address:${address}`, limit: LOGIN_ADDRESS_FAILURE_LIMIT },
  ];
  /** The address's own limit (a passkey sign-in names no email before it is checked). */
  const addressLimits = (address: string): Limit[] => [
    { name: `console-login-address:${address}`, limit: LOGIN_ADDRESS_FAILURE_LIMIT },
  ];
  const setupLimits = (address: string): Limit[] => [
    { name: `console-setup:${address}`, limit: LOGIN_FAILURE_LIMIT },
  ];

  /**
   * Counts an attempt against each limit before its work. Over any of them, it is refused and takes
   * all its counts back at once (it was not a failure: the attempts that hold the counts still
   * refuse the next). A store that fails counts nothing (Redis falls back itself).
   */
  async function attempt(limits: Limit[]): Promise<Attempt> {
    const windows = await Promise.all(
      limits.map((l) => counters.hit(l.name, LOGIN_WINDOW_MS).catch((): WindowCount | null => null)),
    );
    const counted = limits.flatMap((limit, i) => {
      const window = windows[i];
      return window ? [{ ...limit, window }] : [];
    });
    const release = async () => {
      await Promise.all(
        counted.map((c) => counters.release(c.name, LOGIN_WINDOW_MS, c.window.resetAt).catch(() => {})),
      );
    };
    const over = counted.filter((c) => c.window.count > c.limit);
    if (over.length === 0) return { wait: null, release };
    await release();
    const left = Math.max(...over.map((c) => c.window.resetAt - counters.now()));
    return { wait: Math.max(1, Math.ceil(left / 1000)), release: async () => {} };
  }

  function tooMany(request: FastifyRequest, reply: FastifyReply, wait: number) {
    reply.header("Retry-After", wait);
    const minutes = Math.ceil(wait / 60);
    return show(
      request,
      reply,
      "error",
      { title: "Too many attempts", status: 429 },
      {
        message:
          `Too many failed attempts from your address. Try again in ${minutes} minute` +
          `${minutes === 1 ? "" : "s"}.`,
      },
    );
  }

  return { attempt, loginLimits, addressLimits, setupLimits, tooMany };
}
