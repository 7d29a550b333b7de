// Reads coalesced per turn of the event loop. On PostgreSQL every query is a round trip and wakes
// a server process; the requests read in one turn ask for their rows together, in one query made
// once the turn's I/O is done (so after each of them arrived: it sees every earlier commit).
interface Waiting<V> {
  resolve(value: V | undefined): void;
  reject(error: unknown): void;
}

export class TurnBatch<V> {
  private pending = new Map<string, Waiting<V>[]>();
  private scheduled = false;

  /** `load` answers for a set of keys; a key it leaves out has no value. */
  constructor(
    private readonly load: (keys: string[]) => Promise<Map<string, V>>,
    private readonly maxBatch = 500,
  ) {}

  get(key: string): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(key);
      if (waiting) waiting.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = () => {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = new Map();
    const keys = [...batch.keys()];
    for (let start = 0; start < keys.length; start += this.maxBatch) {
      const chunk = keys.slice(start, start + this.maxBatch);
      this.load(chunk).then(
        (found) => {
          for (const key of chunk) for (const w of batch.get(key) ?? []) w.resolve(found.get(key));
        },
        (error) => {
          for (const key of chunk) for (const w of batch.get(key) ?? []) w.reject(error);
        },
      );
    }
  };
}
