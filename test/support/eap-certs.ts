// Certificates for the EAP tests, made with the openssl CLI (test support only; Wisp itself never
// runs openssl): a CA (keyCertSign), a server certificate (SAN DNS:radius.test, EKU serverAuth),
// client certificates (CN = the username, EKU clientAuth) from that CA or from a foreign CA.
// P-256 keys by default; the benches ask for RSA 2048 (bench/eap-certs.ts).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { tempDir } from "./databases.ts";

export interface EapTestCerts {
  dir: string;
  /** Paths. */
  caFile: string;
  foreignCaFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  /** PEM texts. */
  caPem: string;
  serverCertPem: string;
  serverKeyPem: string;
  /** A client certificate and key (paths) for `name`, issued by the test CA or the foreign one. */
  client(name: string, issuer?: "ca" | "foreign"): { cert: string; key: string };
}

function openssl(dir: string, args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

/** A private key: P-256 (generated in milliseconds), or RSA 2048 (the benches' reference). */
function newKey(dir: string, file: string, kind: KeyKind): void {
  openssl(
    dir,
    kind === "rsa"
      ? ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", file]
      : ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file],
  );
}

export type KeyKind = "ec" | "rsa";

/** `dir/<name>.pem` and `.key`: a CA (keyCertSign) named `name`. */
export function makeCa(dir: string, name: string, kind: KeyKind = "ec"): void {
  newKey(dir, `${name}.key`, kind);
  openssl(dir, [
    "req",
    "-x509",
    "-new",
    "-key",
    `${name}.key`,
    "-out",
    `${name}.pem`,
    "-days",
    "3",
    "-subj",
    `/CN=${name}`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
}

/** `dir/<name>.pem` and `.key`: a certificate for CN `cn` with `extensions`, issued by CA `ca`. */
export function issue(
  dir: string,
  ca: string,
  name: string,
  cn: string,
  extensions: string,
  kind: KeyKind = "ec",
): void {
  newKey(dir, `${name}.key`, kind);
  openssl(dir, ["req", "-new", "-key", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${cn}`]);
  fs.writeFileSync(path.join(dir, `${name}.ext`), extensions);
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${ca}.pem`,
    "-CAkey",
    `${ca}.key`,
    "-CAcreateserial",
    "-out",
    `${name}.pem`,
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
  ]);
}

export function makeEapCerts(): EapTestCerts {
  const dir = tempDir("eap-certs");
  makeCa(dir, "ca");
  makeCa(dir, "foreign-ca");
  issue(dir, "ca", "server", "radius.test", "subjectAltName=DNS:radius.test\nextendedKeyUsage=serverAuth\n");
  const read = (file: string) => fs.readFileSync(path.join(dir, file), "utf8");
  const issued = new Map<string, { cert: string; key: string }>();
  return {
    dir,
    caFile: path.join(dir, "ca.pem"),
    foreignCaFile: path.join(dir, "foreign-ca.pem"),
    serverCertFile: path.join(dir, "server.pem"),
    serverKeyFile: path.join(dir, "server.key"),
    caPem: read("ca.pem"),
    serverCertPem: read("server.pem"),
    serverKeyPem: read("server.key"),
    client(name, issuer = "ca") {
      const file = `client-${issuer}-${name.replace(/[^a-z0-9]/gi, "_")}`;
      let found = issued.get(file);
      if (!found) {
        issue(dir, issuer === "ca" ? "ca" : "foreign-ca", file, name, "extendedKeyUsage=clientAuth\n");
        found = { cert: path.join(dir, `${file}.pem`), key: path.join(dir, `${file}.key`) };
        issued.set(file, found);
      }
      return found;
    },
  };
}

/** The serial number (hex, upper case as openssl prints it) of a certificate file. */
export function serialOf(certFile: string): string {
  return execFileSync("openssl", ["x509", "-in", certFile, "-noout", "-serial"], { encoding: "utf8" })
    .trim()
    .replace(/^serial=/, "");
}
