// The clock logins are decided by. Time-of-day rules (policies, Login-Time) can only be tested on the
// wire with a clock the test sets: WISP_TEST_CLOCK_FILE names a file holding Unix seconds, read at
// each decision. It is a test hook only: the server logs a warning at start when it is set.
import { readFileSync } from "node:fs";

export const unixNow = (): number => Math.floor(Date.now() / 1000);

/** A clock read from `path` at each call; the real clock when the file is missing or empty. */
export function fileClock(path: string): () => number {
  return () => {
    let text: string;
    try {
      text = readFileSync(path, "utf8").trim();
    } catch {
      return unixNow();
    }
    if (text === "") return unixNow();
    const seconds = Number(text);
    if (!Number.isSafeInteger(seconds) || seconds < 0) {
      throw new Error(`WISP_TEST_CLOCK_FILE ${path} holds ${JSON.stringify(text)}, not Unix seconds`);
    }
    return seconds;
  };
}
