// Where an attribute goes on the wire: attribute names (dictionary, tagged or raw) resolved to
// codes and vendor header layouts, cached by name.

import {
  type AttributeDef,
  type Dictionary,
  loadDictionary,
  parseAttributeName,
  type VendorDef,
} from "../../core/aaa/dictionary.ts";
import { encodeError } from "./codes.ts";
import { rawName } from "./shared.ts";

/** Where an attribute goes on the wire. */
export interface Target {
  name: string;
  code: number;
  /** undefined for raw attributes (Attr-<n>): octets. */
  def?: AttributeDef;
  vendorId?: number;
  typeSize: number;
  lengthSize: number;
  continuation: boolean;
  tag?: number;
}

const targets = new Map<string, Target>();
const MAX_CACHED_TARGETS = 10_000;

function vendorTarget(target: Target, vendor: VendorDef | undefined): Target {
  if (vendor) {
    target.typeSize = vendor.typeSize;
    target.lengthSize = vendor.lengthSize;
    target.continuation = vendor.continuation;
  }
  return target;
}

function rawTarget(name: string, dict: Dictionary): Target | undefined {
  let m = /^Attr-(\d{1,3})$/i.exec(name);
  if (m) {
    const code = Number(m[1]);
    if (code < 1 || code > 255) return undefined;
    return { name: `Attr-${code}`, code, typeSize: 1, lengthSize: 1, continuation: false };
  }
  m = /^(?:Attr-26\.(\d{1,10})\.(\d{1,10})|Vendor-(\d{1,10})-Attr-(\d{1,10}))$/i.exec(name);
  if (!m) return undefined;
  const vendorId = Number(m[1] ?? m[3]);
  const code = Number(m[2] ?? m[4]);
  const vendor = dict.vendorsById.get(vendorId);
  if (vendorId < 1 || vendorId > 0xffffff || code > 2 ** (8 * (vendor?.typeSize ?? 1)) - 1) return undefined;
  const target: Target = {
    name: rawName(code, vendorId),
    code,
    vendorId,
    typeSize: 1,
    lengthSize: 1,
    continuation: false,
  };
  return vendorTarget(target, vendor);
}

export function resolveTarget(name: string): Target {
  const cached = targets.get(name);
  if (cached) return cached;
  const dict = loadDictionary();
  let target: Target | undefined;
  const parsed = parseAttributeName(name);
  if (parsed) {
    const { def, tag } = parsed;
    if (def.internal) encodeError(`${def.name} is a server-side attribute and never goes in a packet`);
    if (def.type === "tlv" || (def.vendorId === undefined && def.code >= 241 && def.code <= 246)) {
      encodeError(`${def.name}: TLV and extended attributes cannot be encoded`);
    }
    target = { name: def.name, code: def.code, def, typeSize: 1, lengthSize: 1, continuation: false };
    if (tag !== undefined) target.tag = tag;
    if (def.vendorId !== undefined) {
      target.vendorId = def.vendorId;
      vendorTarget(target, dict.vendorsById.get(def.vendorId));
    }
  } else target = rawTarget(name, dict);
  if (!target) encodeError(`unknown attribute ${name}`);
  if (targets.size >= MAX_CACHED_TARGETS) targets.clear();
  targets.set(name, target);
  return target;
}
