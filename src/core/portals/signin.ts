// A guest's sign-in on a portal page, checked with the RADIUS rules before the guest is handed to the
// gateway (AaaService.precheck: the same decision, nothing recorded, no voucher activated). What the
// guest is told is decided here: a code's problem may be named (the code is the secret), but a
// username's never is (an unknown user and a wrong password read the same).
import type { AaaService } from "../aaa/service.ts";
import type { PortalMethod } from "./rules.ts";
import type { GuestPortal } from "./service.ts";

export type SignInProblem =
  | "invalid_code"
  | "code_expired"
  | "code_used_up"
  | "wrong_credentials"
  | "already_online"
  | "method_off";

export type SignInResult =
  | { ok: true; username: string; password: string }
  | { ok: false; problem: SignInProblem };

export interface SignInInput {
  method: PortalMethod;
  /** voucher: the code as typed (spaces and dashes are ignored). */
  code?: string;
  username?: string;
  password?: string;
  clientMac: string | null;
}

const VOUCHER_PROBLEMS: Record<string, SignInProblem> = {
  "voucher expired": "code_expired",
  "voucher already used on its maximum number of devices": "code_used_up",
};

export async function checkSignIn(
  aaa: AaaService,
  portal: GuestPortal,
  input: SignInInput,
  now?: number,
): Promise<SignInResult> {
  if (!portal.methods.includes(input.method)) return { ok: false, problem: "method_off" };
  if (input.method === "voucher") {
    // The code is both username and password (src/core/vouchers/login.ts).
    const code = (input.code ?? "").replace(/[\s-]/g, "");
    if (!/^[A-Za-z0-9]{1,16}$/.test(code)) return { ok: false, problem: "invalid_code" };
    const verdict = await aaa.precheck(
      portal.accountId,
      { username: code, password: code, clientMac: input.clientMac },
      now,
    );
    if (verdict.accepted && verdict.voucher) return { ok: true, username: code, password: code };
    const problem = verdict.voucher ? VOUCHER_PROBLEMS[verdict.reason ?? ""] : undefined;
    return { ok: false, problem: problem ?? "invalid_code" };
  }
  const username = (input.username ?? "").trim();
  const password = input.password ?? "";
  if (username === "" || password === "" || username.length > 64 || password.length > 128) {
    return { ok: false, problem: "wrong_credentials" };
  }
  const verdict = await aaa.precheck(
    portal.accountId,
    { username, password, clientMac: input.clientMac },
    now,
  );
  if (verdict.accepted && !verdict.voucher) return { ok: true, username, password };
  // Only a reason reached after the password matched may be told apart (decide.ts checks
  // Simultaneous-Use last); everything else reads the same, whether or not the user exists.
  if (verdict.reason === "already logged in") return { ok: false, problem: "already_online" };
  return { ok: false, problem: "wrong_credentials" };
}
