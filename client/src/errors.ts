// What the client throws: every error says what was asked and what the server answered, and never
// carries the API key (no request headers are kept).

/** Wisp's error body (the API's one error shape). */
export interface WispErrorBody {
  error: true;
  message: string;
  code: number;
  details?: { field: string; message: string }[];
}

export class WispError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly method: string,
    readonly path: string,
    readonly body?: WispErrorBody | undefined,
  ) {
    super(message);
    this.name = "WispError";
  }
}

/** 401: the key is unknown, mistyped or revoked. Retrying cannot help. */
export class WispAuthError extends WispError {
  override name = "WispAuthError";
}

/** The server lacks a route this client knows: it is older than the types (or not Wisp). */
export class WispVersionError extends WispError {
  override name = "WispVersionError";
}

/** 429 still answered after the last attempt. */
export class WispRateLimitError extends WispError {
  override name = "WispRateLimitError";
}
