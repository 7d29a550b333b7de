// What a captive portal's guest page needs: the gateway it hands off to (vendor, UAM secret sealed
// like webhook secrets, the generic vendor's parameter names), its branding (title, welcome text,
// terms, two colours), the sign-in methods it offers, its language, and whether it is on at all.
import type { Kysely } from "kysely";
import type { DialectName } from "../database.ts";

export async function up(db: Kysely<unknown>, _dialect: DialectName): Promise<void> {
  const columns: [string, string, string | number][] = [
    ["enabled", "integer", 1],
    /** coovachilli | mikrotik | generic */
    ["vendor", "varchar(16)", "generic"],
    /** AES-256-GCM ciphertext (src/core/webhooks/crypto.ts) of the UAM secret; empty for none. */
    ["uam_secret", "text", ""],
    ["title", "varchar(100)", ""],
    ["welcome_text", "varchar(2000)", ""],
    ["terms", "text", ""],
    /** Comma-separated sign-in methods, e.g. "voucher,password". */
    ["methods", "varchar(100)", "voucher"],
    /** "auto" (Accept-Language) or a language code of the guest pages' catalogue. */
    ["language", "varchar(8)", "auto"],
    ["color_primary", "varchar(7)", "#1b5e9e"],
    ["color_background", "varchar(7)", "#f4f6f8"],
    ["generic_login_param", "varchar(64)", "login_url"],
    ["generic_username_field", "varchar(64)", "username"],
    ["generic_password_field", "varchar(64)", "password"],
    ["generic_redirect_field", "varchar(64)", ""],
  ];
  for (const [name, type, fallback] of columns) {
    await db.schema
      .alterTable("captive_portals")
      .addColumn(name, type as "text", (c) => c.notNull().defaultTo(fallback))
      .execute();
  }
}
