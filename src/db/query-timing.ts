// Statement timing for metrics, in the one place every Kysely statement passes: the driver's
// connection (both dialects, transactions included). Kysely's own `log` option would time them
// too, but costs two awaits per statement whether anyone listens or not; here a statement pays
// one property read while no observer is set.
import type { CompiledQuery, DatabaseConnection, Dialect } from "kysely";

export type QueryObserver = (milliseconds: number) => void;

/** The observer slot shared by a database's Kysely instances and its SQLite read connection. */
export interface QueryTiming {
  observer: QueryObserver | undefined;
}

function timeConnection(connection: DatabaseConnection, timing: QueryTiming): void {
  const execute = connection.executeQuery.bind(connection);
  connection.executeQuery = <R>(compiled: CompiledQuery) => {
    const observer = timing.observer;
    if (!observer) return execute<R>(compiled);
    const started = performance.now();
    return execute<R>(compiled).finally(() => observer(performance.now() - started));
  };
}

/** The dialect, with every statement its connections run reported to `timing.observer`. */
export function timedDialect(dialect: Dialect, timing: QueryTiming): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createDriver() {
      const driver = dialect.createDriver();
      const acquire = driver.acquireConnection.bind(driver);
      const timed = new WeakSet<DatabaseConnection>();
      driver.acquireConnection = async () => {
        const connection = await acquire();
        if (!timed.has(connection)) {
          timeConnection(connection, timing);
          timed.add(connection);
        }
        return connection;
      };
      return driver;
    },
  };
}
