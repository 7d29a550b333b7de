// Small pieces the page modules share: ids from paths, page numbers, pager links, field errors.
import type { FastifyRequest } from "fastify";
import type { Core } from "../../core/index.ts";
import { ConflictError, NotFoundError, ValidationError } from "../../core/shared/errors.ts";
import type { Page } from "../../core/shared/pages.ts";
import { positiveId } from "../forms.ts";
import type { FieldErrors } from "../views.ts";
import { fieldErrors } from "../views.ts";

export const PAGE_SIZE = 50;

/** The :id of the path; a 404 page for anything that is not a positive whole number. */
export function idParam(request: FastifyRequest, name = "id"): number {
  const id = positiveId((request.params as Record<string, unknown>)[name]);
  if (id === undefined) throw new NotFoundError("there is nothing at this address");
  return id;
}

export function pageNumber(text: unknown): number {
  return Math.min(positiveId(text) ?? 1, 100_000);
}

export interface Pager {
  page: number;
  pages: number;
  total: number;
  first: number;
  last: number;
  prev: string | null;
  next: string | null;
}

/** Links to the previous and next pages, keeping the other query parameters. */
export function pagerOf(page: Page<unknown>, path: string, query: Record<string, string | undefined>): Pager {
  const pages = Math.max(1, Math.ceil(page.total / page.limit));
  const link = (n: number) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value) params.set(key, value);
    if (n > 1) params.set("page", String(n));
    const text = params.toString();
    return text ? `${path}?${text}` : path;
  };
  const first = page.total === 0 ? 0 : (page.page - 1) * page.limit + 1;
  return {
    page: page.page,
    pages,
    total: page.total,
    first,
    last: Math.min(page.total, page.page * page.limit),
    prev: page.page > 1 ? link(page.page - 1) : null,
    next: page.page < pages ? link(page.page + 1) : null,
  };
}

/**
 * Runs a service call; a ValidationError becomes field errors for the form (the page is shown
 * again with each message next to its field), a ConflictError an error of `conflictField`
 * (a duplicate name, an address in use); anything else propagates.
 */
export async function attempt<T>(
  fn: () => Promise<T>,
  conflictField = "_form",
): Promise<{ ok: T } | { errors: FieldErrors }> {
  try {
    return { ok: await fn() };
  } catch (error) {
    if (error instanceof ConflictError) return { errors: { [conflictField]: error.message } };
    if (!(error instanceof ValidationError)) throw error;
    const errors = fieldErrors(error.details);
    if (Object.keys(errors).length === 0) errors._form = error.message;
    return { errors };
  }
}

/** Query parameters as plain strings (fastify gives strings, or arrays for repeated ones). */
export function queryText(request: FastifyRequest, name: string): string {
  const value = (request.query as Record<string, unknown>)[name];
  return typeof value === "string" ? value.trim() : "";
}

/** A plan select's value: "" is none (null); anything but digits NaN, which the service names. */
export function planIdOf(text: string): number | null {
  if (text === "") return null;
  return /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN;
}

/**
 * A plan chosen in a select that is not (or no longer) the account's: an error next to the select
 * rather than the services' 404 page. The services check again inside their transactions.
 */
export async function checkChosenPlan(core: Core, accountId: number, planId: number | null): Promise<void> {
  if (planId === null || !Number.isSafeInteger(planId) || planId < 1) return;
  if (!(await core.plans.exists(accountId, planId)))
    throw ValidationError.field("plan_id", "is not one of this account's plans (was it deleted?)");
}
