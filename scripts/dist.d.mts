// Types of dist.mjs for the TypeScript that imports it (the test support's process spawner).
export const ROOT: string;
export const DIST: string;
export const STAMP: string;
/** Files besides src/ whose change makes dist stale. */
export const INPUTS: readonly string[];
export const ASSET_DIRS: readonly string[];
export function distState(): "current" | "stale" | "missing";
