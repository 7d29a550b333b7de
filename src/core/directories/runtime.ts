// The directories this process talks to: each account's enabled sources, read from the database at
// most every SOURCES_CACHE_MS (a change made by another process is seen that soon; one made here at
// once, through forget()), each with its client kept while its settings stay the same, so pools,
// breakers and the group cache outlive a single login.
import type { SecretBox } from "../webhooks/crypto.ts";
import { type ConnectDirectory, DirectoryClient, type ServerStatus } from "./ldap.ts";
import type { DirectoriesRepo, DirectoryRow } from "./repo.ts";
import { SOURCES_CACHE_MS } from "./rules.ts";
import { DirectorySource } from "./source.ts";
import { DirectoryThread } from "./worker-client.ts";

export const sealContext = (accountId: number, id: number) => `directory bind password ${accountId} ${id}`;

export interface DirectoryHealth {
  account_id: number;
  directory: string;
  servers: ServerStatus[];
}

export class DirectoryRuntime {
  private readonly accounts = new Map<number, { sources: Promise<DirectorySource[]>; expires: number }>();
  /** Live sources by directory id, with the `updated` stamp they were built from. */
  private readonly live = new Map<number, { stamp: string; source: Promise<DirectorySource> }>();

  /** The directory worker thread, when the clients live there (DIRECTORY_WORKER). */
  private readonly thread: DirectoryThread | undefined;
  private readonly connect: ConnectDirectory;

  constructor(
    private readonly repo: DirectoriesRepo,
    private readonly box: SecretBox,
    options: { worker?: boolean } = {},
  ) {
    this.thread = options.worker ? new DirectoryThread() : undefined;
    this.connect =
      this.thread?.connect ?? ((urls, settings, bind) => new DirectoryClient(urls, settings, bind));
  }

  bindPassword(row: DirectoryRow): string {
    return row.bind_password ? this.box.open(row.bind_password, sealContext(row.account_id, row.id)) : "";
  }

  /** The source of a row, built once per version of its settings. */
  source(row: DirectoryRow): Promise<DirectorySource> {
    const stamp = `${row.updated}|${row.enabled}`;
    const current = this.live.get(row.id);
    if (current?.stamp === stamp) return current.source;
    if (current) void current.source.then((s) => s.client.close()).catch(() => {});
    const source = this.repo
      .mappings(row.account_id, row.id)
      .then((mappings) => new DirectorySource(row, this.bindPassword(row), mappings, this.connect));
    source.catch(() => this.live.delete(row.id));
    this.live.set(row.id, { stamp, source });
    return source;
  }

  /** The account's directories, enabled or not, in id order (a login tries the enabled ones in turn). */
  sources(accountId: number): Promise<DirectorySource[]> {
    const cached = this.accounts.get(accountId);
    if (cached && cached.expires > Date.now()) return cached.sources;
    const sources = this.repo
      .list(accountId)
      .then((rows) => Promise.all(rows.map((row) => this.source(row))));
    sources.catch(() => this.accounts.delete(accountId));
    this.accounts.set(accountId, { sources, expires: Date.now() + SOURCES_CACHE_MS });
    return sources;
  }

  /** Settings changed in this process: read them again at the next use. */
  forget(accountId?: number): void {
    if (accountId === undefined) this.accounts.clear();
    else this.accounts.delete(accountId);
  }

  /** Every directory this process has talked to, with its servers' breaker states. */
  async health(): Promise<DirectoryHealth[]> {
    const sources = await Promise.allSettled([...this.live.values()].map((l) => l.source));
    return sources.flatMap((s) =>
      s.status === "fulfilled" && s.value.row.enabled === 1
        ? [{ account_id: s.value.row.account_id, directory: s.value.row.name, servers: s.value.status() }]
        : [],
    );
  }

  async close(): Promise<void> {
    const sources = await Promise.allSettled([...this.live.values()].map((l) => l.source));
    this.live.clear();
    this.accounts.clear();
    await Promise.all(sources.map((s) => (s.status === "fulfilled" ? s.value.client.close() : undefined)));
    await this.thread?.stop();
  }
}
