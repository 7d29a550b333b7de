// An account's team of console admins: owners invite members by email, change their roles and
// remove them. An invitation is a link carrying a 256-bit random secret; only its HMAC-SHA256 under
// a key derived from the deployment's secret key is stored, so the link cannot be forged or
// altered (any change names no invitation), and it works once, until it expires. The account always
// keeps an owner: the last one can be neither demoted nor removed. Removing a member deletes them
// and their sessions in one transaction: their next request is a logged-out one.
import { createHmac, randomBytes } from "node:crypto";
import { type Database, isUniqueViolation } from "../../db/database.ts";
import { type AccountRow, AccountsRepo } from "../accounts/repo.ts";
import { runAsAdmin } from "../audit/context.ts";
import {
  composeHtml,
  composeText,
  type MailBody,
  type MailSender,
  NoMailer,
  SmtpMailer,
} from "../guests/mail.ts";
import type { SmtpSettings } from "../guests/rules.ts";
import { AppError, ConflictError, NotFoundError, ValidationError } from "../shared/errors.ts";
import { isoNow } from "../shared/time.ts";
import { type KeySource, SecretBox } from "../webhooks/crypto.ts";
import { AdminsRepo, type InviteRow } from "./repo.ts";
import { ROLES, type Role, roleLabel } from "./roles.ts";
import { EMAIL_RULE, emailProblem, normalizeEmail, passwordProblem } from "./rules.ts";
import { type Admin, type AdminsService, checkRole } from "./service.ts";

/** How long an invitation link works. */
export const INVITE_TTL_MS = 72 * 3_600_000;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** A link that is not (or no longer) an open invitation: the page says which and what to do. */
export class InvitationError extends AppError {
  constructor(message: string) {
    super(400, message);
  }
}

/** The mail could not go out: nothing was kept. */
export class InvitationMailError extends AppError {
  constructor(reason: string) {
    super(502, `the invitation could not be mailed (${reason}); nothing was kept: try again`);
  }
}

export interface Invitation {
  id: number;
  email: string;
  role: string;
  created: string;
  expires: string;
}

/** An open invitation as its link's page shows it. */
export interface OpenInvitation extends Invitation {
  accountId: number;
  accountName: string;
}

export interface TeamDeps {
  repo: AdminsRepo;
  admins: AdminsService;
  mailer: MailSender;
  /** PUBLIC_URL: the invitation link points there. */
  publicUrl: string;
  /** The key invitation secrets are digested with (derived from the deployment's secret key). */
  digestKey: () => Buffer;
  /** Names the account in the mail. */
  accountName: (accountId: number) => Promise<string>;
}

function present(row: InviteRow): Invitation {
  return { id: row.id, email: row.email, role: row.role, created: row.created, expires: row.expires };
}

const LAST_OWNER = "is the account's last owner: make another member an owner first";

export class Team {
  constructor(private readonly deps: TeamDeps) {}

  private now(): number {
    return this.deps.admins.clock();
  }

  private digest(token: string): string {
    return createHmac("sha256", this.deps.digestKey()).update(token).digest("hex");
  }

  async members(accountId: number): Promise<Admin[]> {
    return this.deps.admins.list(accountId);
  }

  async openInvitations(accountId: number): Promise<Invitation[]> {
    return (await this.deps.repo.openInvites(accountId, isoNow(new Date(this.now())))).map(present);
  }

  /**
   * Mails an invitation to join the account with a role. An email that is already a console user
   * is refused; an older open invitation to the same email is withdrawn. A mail that cannot be
   * sent leaves nothing behind.
   */
  async invite(
    account: AccountRow,
    inviter: { adminId: number; email: string },
    input: { email: string; role: string },
  ): Promise<Invitation> {
    const email = normalizeEmail(input.email);
    if (emailProblem(email)) throw ValidationError.field("email", EMAIL_RULE);
    const role = checkRole(input.role || undefined);
    if (await this.deps.repo.findByEmail(email)) {
      throw new ConflictError(`${email} is already a console user: no invitation is needed`);
    }
    const token = randomBytes(32).toString("base64url");
    const now = this.now();
    const row = await this.deps.repo.transaction(async (repo) => {
      await repo.revokeInvites(account.id, { email }, isoNow(new Date(now)));
      const invite = await repo.insertInvite({
        account_id: account.id,
        email,
        role,
        token_digest: this.digest(token),
        invited_by: inviter.adminId,
        created: isoNow(new Date(now)),
        expires: isoNow(new Date(now + INVITE_TTL_MS)),
        accepted: null,
        revoked: null,
      });
      await repo.audit({
        accountId: account.id,
        resource: "invitation",
        id: invite.id,
        action: "create",
        after: present(invite),
      });
      return invite;
    });
    try {
      await this.mail(account.name, inviter.email, row, token);
    } catch (error) {
      await this.revoke(account.id, row.id);
      throw new InvitationMailError((error as Error).message);
    }
    return present(row);
  }

  private async mail(accountName: string, inviter: string, row: InviteRow, token: string): Promise<void> {
    const link = `${this.deps.publicUrl.replace(/\/+$/, "")}/console/invite/${token}`;
    const body: MailBody = {
      paragraphs: [
        `${inviter} invited you to the Wisp console of the account ${accountName}, as ${roleLabel(row.role)}: ${ROLES[row.role as Role].summary}`,
        `Open the link below to choose your password. It works once, until ${row.expires.replace("T", " ").replace("Z", " UTC")}.`,
      ],
      links: [{ text: "Accept the invitation", url: link }],
      footer: "If you did not expect this invitation, ignore this message: nothing happens without the link.",
    };
    const brand = {
      title: "Wisp console",
      colorPrimary: "#1f5f8b",
      colorBackground: "#f4f6f8",
      lang: "en" as const,
    };
    await this.deps.mailer.send({
      to: row.email,
      subject: `Invitation to the Wisp console of ${accountName}`,
      text: composeText(body),
      html: composeHtml(brand, body),
    });
  }

  /** The open invitation a link names, or an InvitationError saying why it is not one. */
  async lookup(token: string): Promise<OpenInvitation> {
    const row = TOKEN.test(token) ? await this.deps.repo.findInvite(this.digest(token)) : undefined;
    if (!row) {
      throw new InvitationError(
        "This invitation link is not valid: it was changed, cut short, or is not from this server. " +
          "Ask an owner of the account for a new invitation.",
      );
    }
    if (row.accepted) {
      throw new InvitationError(
        "This invitation was already used: an invitation works once. Log in with the password chosen then.",
      );
    }
    if (row.revoked) {
      throw new InvitationError("This invitation was withdrawn. Ask an owner of the account for a new one.");
    }
    if (Date.parse(row.expires) <= this.now()) {
      throw new InvitationError(
        `This invitation expired on ${row.expires.replace("T", " ").replace("Z", " UTC")}. Ask an owner of the account for a new one.`,
      );
    }
    return {
      ...present(row),
      accountId: row.account_id,
      accountName: await this.deps.accountName(row.account_id),
    };
  }

  /**
   * Uses an invitation: the console user is made with the invited role and the chosen password, and
   * the invitation is spent in the same transaction (two tabs racing: one wins, the other is told
   * the invitation was used).
   */
  async accept(token: string, password: string, client?: string): Promise<Admin> {
    const invitation = await this.lookup(token);
    const badPassword = passwordProblem(password);
    if (badPassword) throw ValidationError.field("password", badPassword);
    const passwordHash = await this.deps.admins.hashNewPassword(password, client);
    const now = isoNow(new Date(this.now()));
    let id: number;
    try {
      id = await this.deps.repo.transaction(async (repo) => {
        if (!(await repo.acceptInvite(invitation.accountId, invitation.id, now))) {
          throw new InvitationError("This invitation was already used: an invitation works once.");
        }
        const row = await repo.insert({
          account_id: invitation.accountId,
          email: invitation.email,
          password_hash: passwordHash,
          created: now,
          updated: now,
          last_login: null,
          role: invitation.role,
        });
        const after = { id: row.id, email: row.email, role: row.role, invitation: invitation.id };
        // The one acting is the invitee, who has an id only from this row on: the door could name
        // no one but the address, so the row names them here.
        await runAsAdmin(row, () =>
          repo.audit({
            accountId: invitation.accountId,
            resource: "admin",
            id: row.id,
            action: "create",
            after,
          }),
        );
        return row.id;
      });
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ConflictError(`${invitation.email} is already a console user: log in instead`);
      }
      throw error;
    }
    this.deps.admins.noteExisting();
    return this.member(invitation.accountId, id);
  }

  async withdraw(accountId: number, id: number): Promise<void> {
    if (!(await this.revoke(accountId, id)))
      throw new NotFoundError(`no open invitation ${id} in this account`);
  }

  /** Revokes one open invitation with its audit row; false: there was none. */
  private revoke(accountId: number, id: number): Promise<boolean> {
    return this.deps.repo.transaction(async (repo) => {
      if ((await repo.revokeInvites(accountId, { id }, isoNow(new Date(this.now())))) === 0) return false;
      await repo.audit({ accountId, resource: "invitation", id, action: "revoke" });
      return true;
    });
  }

  /** A new role for a member, from their next request on. The last owner stays an owner. */
  async setRole(accountId: number, adminId: number, roleText: string): Promise<Admin> {
    const role = checkRole(roleText);
    await this.deps.repo.transaction(async (repo) => {
      await repo.lockAccount(accountId);
      const member = await repo.findById(accountId, adminId);
      if (!member) throw new NotFoundError(`no console user ${adminId} in this account`);
      if (member.role === "owner" && role !== "owner" && (await repo.countOwners(accountId)) <= 1) {
        throw new ConflictError(`${member.email} ${LAST_OWNER}`);
      }
      await repo.setRole(accountId, adminId, role, isoNow(new Date(this.now())));
      await repo.audit({
        accountId,
        resource: "admin",
        id: adminId,
        action: "update",
        before: { email: member.email, role: member.role },
        after: { email: member.email, role },
      });
    });
    return this.member(accountId, adminId);
  }

  /** Removes a member and ends all their sessions at once. The last owner cannot be removed. */
  async remove(accountId: number, adminId: number): Promise<Admin> {
    const member = await this.member(accountId, adminId);
    await this.deps.repo.transaction(async (repo) => {
      await repo.lockAccount(accountId);
      const row = await repo.findById(accountId, adminId);
      if (!row) throw new NotFoundError(`no console user ${adminId} in this account`);
      if (row.role === "owner" && (await repo.countOwners(accountId)) <= 1) {
        throw new ConflictError(`${row.email} ${LAST_OWNER}`);
      }
      await repo.deleteAdmin(accountId, adminId);
      await repo.audit({ accountId, resource: "admin", id: adminId, action: "delete", before: member });
    });
    return member;
  }

  async member(accountId: number, adminId: number): Promise<Admin> {
    const member = (await this.deps.admins.list(accountId)).find((a) => a.id === adminId);
    if (!member) throw new NotFoundError(`no console user ${adminId} in this account`);
    return member;
  }
}

/** The team wired to one database and the process's settings (core/index.ts). */
export function createTeam(
  database: Database,
  admins: AdminsService,
  options: { publicUrl: string; smtp?: SmtpSettings | undefined; keys: KeySource },
): Team {
  const box = new SecretBox(options.keys, "console invitation key");
  let digestKey: Buffer | undefined;
  const accounts = new AccountsRepo(database.db);
  return new Team({
    repo: new AdminsRepo(database.db, database.dialect),
    admins,
    mailer: options.smtp ? new SmtpMailer(options.smtp) : new NoMailer(),
    publicUrl: options.publicUrl,
    // Read on first use, as the sealing key is.
    digestKey: () => {
      digestKey ??= box.derive("console invitations");
      return digestKey;
    },
    accountName: async (id) => (await accounts.list()).find((a) => a.id === id)?.name ?? `#${id}`,
  });
}
