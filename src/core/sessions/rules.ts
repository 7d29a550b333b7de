// What the sessions lists accept, and the names of a disconnect's outcomes.

export const SESSION_STATUSES = ["active", "closed"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** What a sessions list may be sorted by; newest (highest id) first by default. */
export const SESSION_SORT_FIELDS = [
  "id",
  "start",
  "stop",
  "update",
  "username",
  "duration",
  "input_bytes",
  "output_bytes",
] as const;
export type SessionSortField = (typeof SESSION_SORT_FIELDS)[number];

/**
 * A disconnect's outcome: the NAS acknowledged (Disconnect-ACK), refused (Disconnect-NAK, with its
 * Error-Cause), never answered a valid reply in time, or nothing could be sent (no address in the
 * network); `pending` while a queued disconnect waits for the worker.
 */
export const DISCONNECT_RESULTS = ["ack", "nak", "timeout", "error", "pending"] as const;
export type DisconnectResult = (typeof DISCONNECT_RESULTS)[number];

/** A session whose disconnect was tried this recently is not tried again by the sweeps. */
export const DISCONNECT_RETRY_AFTER_S = 600;
