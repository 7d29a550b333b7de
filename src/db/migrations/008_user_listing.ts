// Reading users as the API shows them without building them on every read: each user row carries
// its own JSON, and each account its number of users, both kept by the database's triggers, so
// every writer (the services, the demo seed, a script with SQL) keeps them right.
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../database.ts";

/** The fields of a user in the API, in order, as this migration found them. */
const FIELDS = ["id", "username", "email", "fullname", "status", "created", "updated"] as const;

/** The user's JSON, from the row named `row` (NEW in triggers, the table elsewhere). */
function userJson(dialect: DialectName, row: string): string {
  const pairs = FIELDS.map((f) => `'${f}', ${row}${f}`).join(", ");
  return dialect === "postgres" ? `json_build_object(${pairs})::text` : `json_object(${pairs})`;
}

export async function up(db: Kysely<unknown>, dialect: DialectName): Promise<void> {
  const run = (text: string) => sql.raw(text).execute(db);
  await run("alter table users add column api_json text not null default ''");
  await run(`update users set api_json = ${userJson(dialect, "")}`);
  await run("alter table accounts add column user_count integer not null default 0");
  await run(
    "update accounts set user_count = (select count(*) from users where users.account_id = accounts.id)",
  );

  if (dialect === "sqlite") {
    const refresh = `update users set api_json = ${userJson(dialect, "NEW.")} where id = NEW.id;`;
    await run(`create trigger wisp_users_json_insert after insert on users begin ${refresh} end`);
    await run(
      `create trigger wisp_users_json_update after update of ${FIELDS.join(", ")} on users begin ${refresh} end`,
    );
    await run(
      "create trigger wisp_users_count_insert after insert on users begin " +
        "update accounts set user_count = user_count + 1 where id = NEW.account_id; end",
    );
    await run(
      "create trigger wisp_users_count_delete after delete on users begin " +
        "update accounts set user_count = user_count - 1 where id = OLD.account_id; end",
    );
    return;
  }
  await run(`create function wisp_users_json() returns trigger language plpgsql as $$
    begin
      NEW.api_json := ${userJson(dialect, "NEW.")};
      return NEW;
    end $$`);
  await run(
    "create trigger wisp_users_json before insert or update on users for each row execute function wisp_users_json()",
  );
  await run(`create function wisp_users_count() returns trigger language plpgsql as $$
    begin
      if TG_OP = 'INSERT' then
        update accounts set user_count = user_count + 1 where id = NEW.account_id;
      else
        update accounts set user_count = user_count - 1 where id = OLD.account_id;
      end if;
      return null;
    end $$`);
  await run(
    "create trigger wisp_users_count after insert or delete on users for each row execute function wisp_users_count()",
  );
}
