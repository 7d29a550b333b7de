// Domain errors. Every door maps them: HTTP to status + error body, the CLI to a message and exit code.

export interface FieldProblem {
  field: string;
  message: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class ValidationError extends AppError {
  constructor(
    message: string,
    readonly details: FieldProblem[] = [],
  ) {
    super(400, message);
  }

  /** One problem with one field: "<field> <message>". */
  static field(field: string, message: string): ValidationError {
    return new ValidationError(`${field} ${message}`, [{ field, message }]);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super(404, message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, message);
  }
}

/** 429: the caller has too much in progress; it may try again after `retryAfterSeconds`. */
export class TooManyRequestsError extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(429, message);
  }
}
