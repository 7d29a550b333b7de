// The users the benchmark seeds into Wisp, and the bare server's copies of them: same shape and sizes,
// so both servers send comparable JSON.

export const SEEDED_USERS = 1000;
export const LIST_LIMIT = 50;
/** A fixed ISO 8601 timestamp in Wisp's stored format, so the bare copies match byte for byte. */
export const SEED_TIMESTAMP = "2025-01-01T00:00:00Z";

export interface BenchUser {
  username: string;
  email: string;
  fullname: string;
  status: "enabled";
  created: string;
  updated: string;
}

export function benchUser(n: number): BenchUser {
  const tag = String(n).padStart(4, "0");
  return {
    username: `user${tag}`,
    email: `user${tag}@example.com`,
    fullname: `Bench User ${tag}`,
    status: "enabled",
    created: SEED_TIMESTAMP,
    updated: SEED_TIMESTAMP,
  };
}
