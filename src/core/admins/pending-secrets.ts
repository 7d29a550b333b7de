// Secrets a console form made (an API key, a webhook or network secret) and has not shown yet. The
// console answers such a POST with a redirect (Post/Redirect/Get): the POST keeps the secret here,
// the page it leads to takes it out as it shows it, so a reload or Back shows it no more and makes
// nothing new. Bound to one session, sealed at rest with the webhook secrets' key, gone once taken,
// when its session ends, or after PENDING_SECRET_MS.
import { isoNow } from "../shared/time.ts";
import type { SecretBox } from "../webhooks/crypto.ts";
import type { AdminsRepo } from "./repo.ts";

/** Long enough for a redirect on a slow link, short enough that a forgotten tab holds nothing. */
export const PENDING_SECRET_MS = 5 * 60_000;

export type SecretEvent = "created" | "rotated";

export interface PendingSecret {
  secret: string;
  event: SecretEvent;
}

/** The session a secret is kept for (a ConsoleSession is one). */
export interface SessionRef {
  id: number;
  accountId: number;
}

/** Authenticated with the ciphertext, so a row copied to another session or subject does not open. */
function sealContext(session: SessionRef, subject: string): string {
  return `console pending secret ${session.accountId} ${session.id} ${subject}`;
}

export class PendingSecrets {
  constructor(
    private readonly repo: AdminsRepo,
    private readonly box: SecretBox,
  ) {}

  /** `subject` names what the secret belongs to, e.g. "keys:3"; a newer secret replaces an older one. */
  async keep(session: SessionRef, subject: string, pending: PendingSecret): Promise<void> {
    const now = Date.now();
    await this.repo.putPendingSecret(
      {
        account_id: session.accountId,
        session_id: session.id,
        subject,
        event: pending.event,
        secret: this.box.seal(pending.secret, sealContext(session, subject)),
        expires: isoNow(new Date(now + PENDING_SECRET_MS)),
      },
      isoNow(new Date(now)),
    );
  }

  /** The secret kept for this session and subject, removed as it is read; null once shown or expired. */
  async take(session: SessionRef, subject: string): Promise<PendingSecret | null> {
    const rows = await this.repo.takePendingSecrets(session.accountId, session.id, subject);
    // One row per subject is kept, but two keeps racing may leave two: the newer one counts.
    const row = rows.sort((a, b) => b.id - a.id)[0];
    if (!row || Date.parse(row.expires) <= Date.now()) return null;
    const event: SecretEvent = row.event === "rotated" ? "rotated" : "created";
    return { secret: this.box.open(row.secret, sealContext(session, subject)), event };
  }
}
