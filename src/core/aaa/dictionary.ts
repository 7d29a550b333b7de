// RADIUS dictionary: the FreeRADIUS dictionary files shipped by node-radius-utils plus the
// FreeRADIUS 3.2 internal attributes, parsed on first use and cached for the process.

import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";
import { performance } from "node:perf_hooks";
import { shippedFileError } from "../shared/shipped-files.ts";
import {
  dictionaryDirectory,
  FREERADIUS_INTERNAL_ATTRIBUTES,
  MAIN_DICTIONARY_FILE,
  REPLACED_INTERNAL_FILE,
  WISP_DICTIONARY_FILE,
  WISP_VENDORS_DICTIONARY_FILE,
} from "./dictionary-files.ts";

export type AttributeType =
  | "string"
  | "octets"
  | "integer"
  | "date"
  | "ipaddr"
  | "ipv6addr"
  | "ipv6prefix"
  | "ipv4prefix"
  | "byte"
  | "short"
  | "integer64"
  | "signed"
  | "ether"
  | "ifid"
  | "abinary"
  | "tlv"
  | "other";

export interface AttributeDef {
  name: string;
  /** Attribute number; for a VSA, the vendor's own type number. */
  code: number;
  type: AttributeType;
  vendorId?: number;
  vendorName?: string;
  /** VALUE names (as spelled in the dictionary) to numbers; see findValue for lookups. */
  values: ReadonlyMap<string, number>;
  hasTag: boolean;
  /** Server-side only (FreeRADIUS internal, `virtual`, or not encodable): never put on the wire. */
  internal: boolean;
  /** `encrypt=N`: 1 User-Password style, 2 Tunnel-Password style, 3 Ascend secret. */
  encrypt?: number;
  /** `concat`: long values are split over several attributes (EAP-Message). */
  concat?: boolean;
  /** `array`: the value may hold several fixed-size items. */
  array?: boolean;
}

export interface VendorDef {
  name: string;
  id: number;
  /** Octets of the type and length fields inside Vendor-Specific (`format=t,l`), 1,1 by default. */
  typeSize: number;
  lengthSize: number;
  /** `format=...,c`: WiMAX-style continuation byte. */
  continuation: boolean;
}

export interface Dictionary {
  byName: Map<string, AttributeDef>;
  /** vendorId (0 for standard attributes) -> code -> definition. */
  byCode: Map<number, Map<number, AttributeDef>>;
  vendorsByName: Map<string, VendorDef>;
  vendorsById: Map<number, VendorDef>;
  files: number;
  /** ATTRIBUTE lines left out: TLV/struct/extended children that a single code cannot name. */
  skipped: number;
  /** Problems met while loading (unreadable file, bad line); loading carries on past them. */
  warnings: string[];
  /** The files of `warnings` that could not be read, with why. */
  unreadable: { path: string; error: unknown }[];
  loadMs: number;
}

const TYPE_ALIASES: Record<string, AttributeType> = {
  string: "string",
  octets: "octets",
  integer: "integer",
  uint32: "integer",
  date: "date",
  ipaddr: "ipaddr",
  ipv4addr: "ipaddr",
  ipv6addr: "ipv6addr",
  ipv6prefix: "ipv6prefix",
  ipv4prefix: "ipv4prefix",
  byte: "byte",
  uint8: "byte",
  short: "short",
  uint16: "short",
  integer64: "integer64",
  uint64: "integer64",
  signed: "signed",
  int32: "signed",
  ether: "ether",
  ethernet: "ether",
  ifid: "ifid",
  abinary: "abinary",
  tlv: "tlv",
};

/**
 * The values of the attributes that have none (most of the ~10,000): one shared empty map rather
 * than one each, which was a third of the loaded dictionary's memory.
 */
const NO_VALUES: ReadonlyMap<string, number> = new Map();

function mapType(raw: string): AttributeType {
  const t = raw.toLowerCase();
  // FreeRADIUS 4 writes fixed-size octets as octets[N].
  if (t.startsWith("octets[")) return "octets";
  return TYPE_ALIASES[t] ?? "other";
}

/** Dictionary numbers are decimal, or hex with 0x (e.g. USR's 0x0066). */
function parseNumber(raw: string): number | undefined {
  if (/^\d+$/.test(raw)) return Number.parseInt(raw, 10);
  if (/^0x[0-9a-f]+$/i.test(raw)) return Number.parseInt(raw.slice(2), 16);
  return undefined;
}

interface ParseState {
  dict: Dictionary;
  visited: Set<string>;
  pendingValues: Array<[attr: string, name: string, value: number]>;
}

interface FileState {
  vendor?: VendorDef;
  /** Inside BEGIN-TLV, or a BEGIN-VENDOR with format= (extended vendor space): children skipped. */
  nested: number;
  evsVendor: boolean;
  /** `FLAGS internal` applies to the rest of the file. */
  internal: boolean;
}

function addAttribute(dict: Dictionary, def: AttributeDef): void {
  const key = def.name.toLowerCase();
  const existing = dict.byName.get(key);
  if (existing) {
    // FreeRADIUS refuses a name defined twice differently; keep the first one.
    if (existing.code !== def.code || existing.vendorId !== def.vendorId) {
      dict.warnings.push(`duplicate attribute ${def.name}`);
    }
    return;
  }
  dict.byName.set(key, def);
  const vendorKey = def.vendorId ?? 0;
  let codes = dict.byCode.get(vendorKey);
  if (!codes) {
    codes = new Map();
    dict.byCode.set(vendorKey, codes);
  }
  // A later name for the same number replaces the older one when decoding, as in FreeRADIUS
  // (dictionary.compat's Client-Id stays readable, NAS-IP-Address is what 4 decodes to).
  codes.set(def.code, def);
}

function parseAttribute(f: string[], file: FileState, dict: Dictionary, where: Where): void {
  const [, name, rawCode, rawType, rawFlags] = f;
  if (!name || !rawCode || !rawType) {
    dict.warnings.push(`${at(where)}: incomplete ATTRIBUTE`);
    return;
  }
  const code = parseNumber(rawCode);
  // Dotted numbers (241.1, 26.x, TLV children) and attributes inside BEGIN-TLV or an extended
  // vendor block live in a nested number space that a single code cannot express.
  if (code === undefined || file.nested > 0 || file.evsVendor) {
    dict.skipped++;
    return;
  }
  const vendor = file.vendor;
  const def: AttributeDef = {
    name,
    code,
    type: mapType(rawType),
    values: NO_VALUES,
    hasTag: false,
    internal: file.internal,
  };
  if (vendor) {
    def.vendorId = vendor.id;
    def.vendorName = vendor.name;
  }
  for (const flag of rawFlags ? rawFlags.split(",") : []) {
    if (flag === "has_tag") def.hasTag = true;
    else if (flag === "concat") def.concat = true;
    else if (flag === "array") def.array = true;
    else if (flag === "virtual" || flag === "internal") def.internal = true;
    else if (flag.startsWith("encrypt=")) def.encrypt = Number.parseInt(flag.slice(8), 10) || undefined;
  }
  // A number too wide for its type field cannot be encoded (e.g. BroadSoft's 256+ under format=1,1).
  const maxCode = vendor ? 2 ** (8 * vendor.typeSize) - 1 : 255;
  if (code > maxCode) def.internal = true;
  addAttribute(dict, def);
}

function parseVendor(f: string[], dict: Dictionary, where: Where): void {
  const [, name, rawId, format] = f;
  const id = rawId ? parseNumber(rawId) : undefined;
  if (!name || id === undefined) {
    dict.warnings.push(`${at(where)}: bad VENDOR`);
    return;
  }
  const vendor: VendorDef = { name, id, typeSize: 1, lengthSize: 1, continuation: false };
  const m = format ? /^format=([124]),([012])(,c)?$/.exec(format) : null;
  if (m) {
    vendor.typeSize = Number(m[1]);
    vendor.lengthSize = Number(m[2]);
    vendor.continuation = m[3] !== undefined;
  } else if (format) {
    dict.warnings.push(`${at(where)}: unknown vendor option ${format}`);
  }
  // Redefinitions (Starent is declared twice) take the last format, as FreeRADIUS does.
  dict.vendorsByName.set(name.toLowerCase(), vendor);
  dict.vendorsById.set(id, vendor);
}

// A keyword at the start of a line (any case, as FreeRADIUS allows), then its arguments up to a comment.
const KEYWORD_LINE = /^[ \t]*([A-Z$][A-Z-]*)(?=[ \t\r#]|$)([^#\r\n]*)/gim;

/** Position of a line, turned into "file:line" only when a warning needs it. */
interface Where {
  path: string;
  text: string;
  index: number;
}

function at(where: Where): string {
  let line = 1;
  for (let i = where.text.indexOf("\n"); i >= 0 && i < where.index; i = where.text.indexOf("\n", i + 1))
    line++;
  return `${where.path}:${line}`;
}

function parseFile(path: string, state: ParseState): void {
  const { dict } = state;
  if (state.visited.has(path)) return;
  state.visited.add(path);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    dict.warnings.push(`cannot read ${path}: ${(err as Error).message}`);
    dict.unreadable.push({ path, error: err });
    return;
  }
  dict.files++;
  const file: FileState = { nested: 0, evsVendor: false, internal: false };
  // One native regex pass finds the keyword lines, skipping comments and blanks without a JS
  // loop per line: that keeps the cold (un-JITted) load of ~17k lines well inside the budget.
  // A regex per file: $INCLUDE recurses mid-loop, and a shared lastIndex would be clobbered.
  const re = new RegExp(KEYWORD_LINE);
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    // f[0] is the keyword, as in the dictionary syntax docs ("ATTRIBUTE name number type").
    const f = `${m[1]}${m[2]}`.trim().split(/[ \t]+/);
    const where = { path, text, index: m.index };
    switch (f[0]?.toUpperCase()) {
      case "ATTRIBUTE":
        parseAttribute(f, file, dict, where);
        break;
      case "VALUE": {
        const [, attr, name, raw] = f;
        const value = raw === undefined ? undefined : parseNumber(raw);
        if (attr && name && value !== undefined) state.pendingValues.push([attr, name, value]);
        else dict.warnings.push(`${at(where)}: bad VALUE`);
        break;
      }
      case "VENDOR":
        parseVendor(f, dict, where);
        break;
      case "BEGIN-VENDOR": {
        const vendor = f[1] ? dict.vendorsByName.get(f[1].toLowerCase()) : undefined;
        if (!vendor) dict.warnings.push(`${at(where)}: unknown vendor ${f[1]}`);
        file.vendor = vendor;
        // `BEGIN-VENDOR x format=Extended-Vendor-Specific-N` puts the vendor inside attribute 241-246.
        file.evsVendor = f.length > 2;
        break;
      }
      case "END-VENDOR":
        file.vendor = undefined;
        file.evsVendor = false;
        break;
      case "BEGIN-TLV":
      case "BEGIN":
        file.nested++;
        break;
      case "END-TLV":
      case "END":
        if (file.nested > 0) file.nested--;
        break;
      case "FLAGS":
        for (const flag of (f[1] ?? "").split(",")) {
          if (flag === "internal") file.internal = true;
          else if (flag === "!internal") file.internal = false;
        }
        break;
      case "$INCLUDE":
      case "$INCLUDE-": {
        const target = f[1];
        if (!target) break;
        const full = isAbsolute(target) ? target : join(dirname(path), target);
        if (basename(full) === REPLACED_INTERNAL_FILE) {
          addInternalAttributes(dict);
          break;
        }
        // `$INCLUDE-` is FreeRADIUS's optional include: a missing file is fine.
        if (f[0] === "$INCLUDE-" && !existsSync(full)) break;
        parseFile(full, state);
        break;
      }
      default:
        // PROTOCOL, BEGIN-PROTOCOL, END-PROTOCOL and FreeRADIUS 4 keywords carry nothing we use.
        break;
    }
  }
}

function addInternalAttributes(dict: Dictionary): void {
  for (const spec of FREERADIUS_INTERNAL_ATTRIBUTES) {
    addAttribute(dict, {
      name: spec.name,
      code: spec.code,
      type: spec.type,
      values: spec.values ? new Map(spec.values) : NO_VALUES,
      hasTag: false,
      internal: true,
    });
  }
}

function emptyDictionary(): Dictionary {
  return {
    byName: new Map(),
    byCode: new Map(),
    vendorsByName: new Map(),
    vendorsById: new Map(),
    files: 0,
    skipped: 0,
    warnings: [],
    unreadable: [],
    loadMs: 0,
  };
}

/** Parses a dictionary tree from its main file. Never throws on bad content. */
export function parseDictionary(mainFile: string, extraFiles: readonly string[] = []): Dictionary {
  const started = performance.now();
  const dict = emptyDictionary();
  const state: ParseState = { dict, visited: new Set(), pendingValues: [] };
  parseFile(mainFile, state);
  for (const file of extraFiles) parseFile(file, state);
  // The internal table is normally spliced in where the main file includes the internal file.
  if (!dict.byName.has("cleartext-password")) addInternalAttributes(dict);
  // VALUEs may precede their ATTRIBUTE (FreeRADIUS resolves them at the end too).
  const seen = new Set<string>();
  for (const [attr, name, value] of state.pendingValues) {
    const def = dict.byName.get(attr.toLowerCase());
    if (!def) continue; // attribute skipped (TLV child) or unknown
    // The first definition of a name wins; FreeRADIUS rejects conflicting redefinitions.
    const key = `${def.name}\0${name.toLowerCase()}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (def.values === NO_VALUES) def.values = new Map();
    (def.values as Map<string, number>).set(name, value);
  }
  dict.loadMs = performance.now() - started;
  return dict;
}

let cached: Dictionary | undefined;

/**
 * The process-wide dictionary, parsed on first call. `reload` parses the files again. A file of it
 * that cannot be read throws (ShippedFileError): without Wisp's own file, for one, its quota
 * attributes would be refused as unknown. The server and the worker load it before they start.
 */
export function loadDictionary(options: { reload?: boolean } = {}): Dictionary {
  if (!cached || options.reload) {
    let directory: string;
    try {
      directory = dictionaryDirectory();
    } catch (error) {
      throw shippedFileError("the RADIUS dictionaries of", "node-radius-utils", error);
    }
    // Wisp's own attributes (quotas), in a dictionary file of their own, as vendors ship theirs.
    const dict = parseDictionary(join(directory, MAIN_DICTIONARY_FILE), [
      WISP_DICTIONARY_FILE,
      WISP_VENDORS_DICTIONARY_FILE,
    ]);
    const [first] = dict.unreadable;
    if (first) throw shippedFileError("the RADIUS dictionary file", first.path, first.error);
    cached = dict;
  }
  return cached;
}

/** Case-insensitive, as in FreeRADIUS; the result carries the canonical spelling. */
export function findAttribute(name: string): AttributeDef | undefined {
  return loadDictionary().byName.get(name.toLowerCase());
}

/** For decoding packets: vendorId is the Vendor-Specific enterprise number, absent for standard ones. */
export function findAttributeByCode(code: number, vendorId?: number): AttributeDef | undefined {
  return loadDictionary()
    .byCode.get(vendorId ?? 0)
    ?.get(code);
}

export function findVendor(nameOrId: string | number): VendorDef | undefined {
  const dict = loadDictionary();
  return typeof nameOrId === "number"
    ? dict.vendorsById.get(nameOrId)
    : dict.vendorsByName.get(nameOrId.toLowerCase());
}

export function listAttributes(): AttributeDef[] {
  return [...loadDictionary().byName.values()];
}

/**
 * Splits FreeRADIUS's tagged form `Tunnel-Type:1` (tag 0-31) and looks the name up. The tag is
 * only accepted on attributes flagged has_tag.
 */
export function parseAttributeName(raw: string): { def: AttributeDef; tag?: number } | undefined {
  const m = /^(.+):(\d{1,2})$/.exec(raw);
  if (m?.[1] && m[2]) {
    const def = findAttribute(m[1]);
    const tag = Number(m[2]);
    return def?.hasTag && tag <= 31 ? { def, tag } : undefined;
  }
  const def = findAttribute(raw);
  return def ? { def } : undefined;
}

// Lower-cased VALUE names per attribute, built when first asked for.
const valueIndex = new WeakMap<AttributeDef, Map<string, { name: string; value: number }>>();

/** A named VALUE of an attribute, matched case-insensitively as FreeRADIUS 3 does. */
export function findValue(def: AttributeDef, name: string): { name: string; value: number } | undefined {
  let index = valueIndex.get(def);
  if (!index) {
    index = new Map();
    for (const [n, value] of def.values) {
      const key = n.toLowerCase();
      if (!index.has(key)) index.set(key, { name: n, value });
    }
    valueIndex.set(def, index);
  }
  return index.get(name.toLowerCase());
}
