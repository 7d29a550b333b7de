// The fuzz tests' seeded random numbers (mulberry32): WISP_FUZZ_SEED=<seed> replays a failure.

export function prng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const int = (max: number) => Math.floor(next() * max);
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => int(256)));
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  return { int, bytes, pick };
}
