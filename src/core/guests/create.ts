// The guests core wired to one database and the process's settings (core/index.ts).
import type { Database } from "../../db/database.ts";
import type { AaaService } from "../aaa/service.ts";
import type { JobQueue } from "../jobs/queue.ts";
import type { PortalsService } from "../portals/service.ts";
import type { SessionsService } from "../sessions/create.ts";
import type { UsersService } from "../users/service.ts";
import type { VouchersService } from "../vouchers/service.ts";
import type { SecretBox } from "../webhooks/crypto.ts";
import { WebhookSender } from "../webhooks/sender.ts";
import { NoMailer, SmtpMailer } from "./mail.ts";
import { GuestsRepo } from "./repo.ts";
import { DEFAULT_ACCOUNT_SENDS_PER_HOUR, type SmtpSettings } from "./rules.ts";
import { GuestsService } from "./service.ts";

export { GuestsService };

/** The SMS gateway's whole exchange is bounded like a webhook's, shorter: a guest is waiting. */
const SMS_TIMEOUT_MS = 8_000;

export function createGuests(
  database: Database,
  options: {
    publicUrl: string;
    smtp?: SmtpSettings | undefined;
    guestSendsPerAccountHour?: number | undefined;
    webhookAllowPrivate?: boolean | undefined;
    box: SecretBox;
    portals: PortalsService;
    users: UsersService;
    vouchers: VouchersService;
    aaa: AaaService;
    sessions: SessionsService;
    jobs: JobQueue;
  },
): GuestsService {
  const http = new WebhookSender({
    allowPrivate: options.webhookAllowPrivate ?? false,
    timeoutMs: SMS_TIMEOUT_MS,
  });
  let codeKey: Buffer | undefined;
  return new GuestsService({
    repo: new GuestsRepo(database.db),
    delivery: {
      mailer: options.smtp ? new SmtpMailer(options.smtp) : new NoMailer(),
      http,
      // Read on first use, as the sealing key is (a process that verifies no guest never reads it).
      get codeKey() {
        codeKey ??= options.box.derive("guest verification codes");
        return codeKey;
      },
      publicUrl: options.publicUrl,
    },
    portals: options.portals,
    users: options.users,
    aaa: options.aaa,
    vouchers: options.vouchers,
    sessions: options.sessions,
    enqueue: (jobs) => options.jobs.enqueue(database.db, jobs),
    accountSendsPerHour: options.guestSendsPerAccountHour ?? DEFAULT_ACCOUNT_SENDS_PER_HOUR,
  });
}
