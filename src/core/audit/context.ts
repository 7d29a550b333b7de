// Who is making a change: each door says it once, around the work it starts (an HTTP request, a
// CLI command, a job, a RADIUS packet), and the audit row of every change made inside reads it
// here. AsyncLocalStorage carries it through awaits, so services need no extra parameter.
import { AsyncLocalStorage } from "node:async_hooks";

export type ActorType = "api_key" | "admin" | "cli" | "worker" | "radius" | "portal" | "system";

export interface Actor {
  type: ActorType;
  /** The key's id, the admin's id, the operating-system user's name; empty for automatic actors. */
  id: string;
  /** The key's name, the admin's email, the OS user again. */
  name: string;
  /** The admin's role (console); empty for others. */
  role: string;
  /** The request's address after trusted-proxy handling; "local" for the CLI and automatic actors. */
  address: string;
}

/** A mutable slot: an HTTP request opens it before authentication, which fills it in later. */
interface Scope {
  actor: Actor | undefined;
}

const storage = new AsyncLocalStorage<Scope>();

/** No door said who: a change made by Wisp itself (start-up, a migration of data). */
const SYSTEM: Actor = { type: "system", id: "", name: "wisp", role: "", address: "local" };

/** Runs fn with this actor making every change inside it. */
export function runAs<T>(actor: Actor, fn: () => T): T {
  return storage.run({ actor }, fn);
}

/**
 * Opens an empty scope for callback-style code (a fastify onRequest hook calls `done` inside it),
 * so that a later hook can name the actor with setActor() once it knows who is asking.
 */
export function openScope<T>(fn: () => T): T {
  return storage.run({ actor: undefined }, fn);
}

/** Names the actor of the current scope (opened by openScope); ignored outside one. */
export function setActor(actor: Actor): void {
  const scope = storage.getStore();
  if (scope) scope.actor = actor;
}

export function currentActor(): Actor {
  return storage.getStore()?.actor ?? SYSTEM;
}

let skippedForBench = false;

/**
 * bench/audit.ts only: while on, no audit row is written, so the bench can time the same write
 * without it in the same process (its baseline). Not a setting: no door or variable reaches it.
 */
export function skipAuditForBench(on: boolean): void {
  skippedForBench = on;
}

export function auditSkipped(): boolean {
  return skippedForBench;
}

/**
 * Runs fn as this console admin, from the current door's address: for a change an admin makes
 * before the door can name them (the first-run setup, an accepted invitation, a factor enrolled
 * during a sign-in), whose id may exist only inside the change's own transaction.
 */
export function runAsAdmin<T>(admin: { id: number; email: string; role: string }, fn: () => T): T {
  const actor: Actor = { ...currentActor(), type: "admin", id: String(admin.id), name: admin.email };
  return runAs({ ...actor, role: admin.role }, fn);
}

/** Automatic actors: what the worker and the RADIUS door do on their own. */
export const WORKER: Actor = { type: "worker", id: "", name: "worker", role: "", address: "local" };
export const RADIUS: Actor = { type: "radius", id: "", name: "radius", role: "", address: "local" };

/** `handler`, run as the actor `actorOf` names from the same arguments (a door's route handler). */
export function withActor<A extends unknown[], R>(
  handler: (...args: A) => R,
  actorOf: (...args: A) => Actor,
): (...args: A) => R {
  return function (this: unknown, ...args: A): R {
    return runAs(actorOf(...args), () => handler.apply(this, args));
  };
}
