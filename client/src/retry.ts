// The client's fetch: retries a 429 after its Retry-After (RFC 9110 section 10.2.3: seconds or an
// HTTP date), a bounded number of times, and nothing else: any other 4xx is the caller's to fix.

export interface RetryOptions {
  /** Attempts in all, the first included (default 3). */
  maxAttempts?: number;
  /** The longest wait honoured; a longer Retry-After ends the retries (default 60 s). */
  maxDelayMs?: number;
  /** How to wait (tests pass their own). */
  sleep?: (ms: number) => Promise<void>;
}

/** Milliseconds a Retry-After asks for; 1 s when it is missing or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number {
  if (header === null) return 1000;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? 1000 : Math.max(0, date - now);
}

export function retryingFetch(base: typeof fetch, options: RetryOptions = {}): typeof fetch {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const maxDelayMs = options.maxDelayMs ?? 60_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  return async (input, init) => {
    // A Request's body can be read once: each attempt sends a copy.
    const request = new Request(input, init);
    for (let attempt = 1; ; attempt++) {
      const response = await base(request.clone());
      if (response.status !== 429 || attempt >= maxAttempts) return response;
      const wait = retryAfterMs(response.headers.get("retry-after"));
      if (wait > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(wait);
    }
  };
}
