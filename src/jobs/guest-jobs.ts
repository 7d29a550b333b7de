// The worker's guest jobs: a verification message (email or SMS) that did not go out when the guest
// asked is tried again on core/guests DELIVERY_RETRIES' schedule, with a fresh code or link each
// time, then given up (the guest's page says so and offers to send again).

import { DELIVER_JOB } from "../core/guests/service.ts";
import type { Core } from "../core/index.ts";
import { RetryLater, type Worker } from "./worker.ts";

export function registerGuestJobs(worker: Worker, core: Core): void {
  worker.handle(DELIVER_JOB, async (job) => {
    const { verification, portal } = JSON.parse(job.payload) as { verification: number; portal: number };
    // attempts counts this run: the first retry is attempt 1 (DELIVERY_RETRIES[1] after it fails).
    const result = await core.guests.retryDelivery(job.account_id!, verification, portal, job.attempts);
    if (typeof result === "number") throw new RetryLater("the message did not go out", result);
    return result;
  });
}
