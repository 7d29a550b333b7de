// The domain core, wired to one database. Every door (HTTP, CLI, RADIUS, console) starts here.
import type { Database } from "../db/database.ts";
import { AccountsRepo } from "./accounts/repo.ts";
import { AccountsService } from "./accounts/service.ts";
import { KeysRepo } from "./keys/repo.ts";
import { KeysService } from "./keys/service.ts";
import { UsersRepo } from "./users/repo.ts";
import { UsersService } from "./users/service.ts";

export interface Core {
  database: Database;
  accounts: AccountsService;
  keys: KeysService;
  users: UsersService;
  // (services of further areas are declared below, one line each)
}

export function createCore(database: Database): Core {
  const { db } = database;
  return {
    database,
    accounts: new AccountsService(new AccountsRepo(db)),
    keys: new KeysService(new KeysRepo(db)),
    users: new UsersService(new UsersRepo(db)),
    // (services of further areas are constructed below, one line each)
  };
}
