// Compiles Wisp's one native addon, src/radius/eap/native/openssl-tunnel.c (EAP's TLS on OpenSSL's
// memory BIOs), beside its source, where the build copies it into dist/ with the other files of
// src/. It needs a C compiler (cc, or $CC) and node's headers, which come with node
// (include/node, OpenSSL's among them). Without them the build still succeeds: EAP then runs on
// node's TLS sockets (EAP_TLS_ENGINE=auto), and the build says so. Plain JavaScript, like the build.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./dist.mjs";

const SOURCE = path.join(ROOT, "src/radius/eap/native/openssl-tunnel.c");
export const ADDON = SOURCE.replace(/\.c$/, ".node");

/**
 * node's headers: beside the running node (bin/../include/node, as node's own packages install
 * them), else npm's nodedir setting.
 */
function nodeHeaders() {
  const candidates = [
    path.resolve(path.dirname(process.execPath), "../include/node"),
    process.env.npm_config_nodedir && path.join(process.env.npm_config_nodedir, "include/node"),
  ].filter(Boolean);
  return candidates.find(
    (dir) => fs.existsSync(path.join(dir, "node_api.h")) && fs.existsSync(path.join(dir, "openssl/ssl.h")),
  );
}

/** Builds the addon when it is missing or older than its source; a note when it cannot. */
export function buildNativeAddon() {
  const built = fs.statSync(ADDON, { throwIfNoEntry: false });
  if (built && built.mtimeMs >= fs.statSync(SOURCE).mtimeMs) return;
  const headers = nodeHeaders();
  if (!headers) return skipped("node's headers (include/node with openssl/) were not found");
  // Symbols stay undefined in the addon and resolve against node's own OpenSSL when it loads.
  const flags = process.platform === "darwin" ? ["-bundle", "-undefined", "dynamic_lookup"] : ["-shared"];
  const partial = `${ADDON}.building-${process.pid}`;
  try {
    execFileSync(
      process.env.CC || "cc",
      [
        ...flags,
        "-fPIC",
        "-O2",
        "-std=c11",
        "-DNODE_GYP_MODULE_NAME=openssl_tunnel",
        `-I${headers}`,
        "-o",
        partial,
        SOURCE,
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    fs.renameSync(partial, ADDON);
  } catch (error) {
    fs.rmSync(partial, { force: true });
    // The compiler's first line of complaint, else why it did not run (not found, a signal).
    const said = String(error.stderr ?? "").trim();
    skipped((said || error.message).split("\n")[0]);
  }
}

function skipped(reason) {
  console.warn(`wisp: the OpenSSL EAP addon was not built (${reason}); EAP will use node's TLS sockets`);
}
