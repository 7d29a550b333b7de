// The benches' certificates, made with openssl in a temporary folder by the tests' helpers
// (test/support/eap-certs.ts): a CA, a server certificate for radius.test (EKU serverAuth), and
// client certificates (CN the user name, EKU clientAuth) for the first bench users (EAP-TLS).
import path from "node:path";
import { issue, type KeyKind, makeCa } from "../test/support/eap-certs.ts";
import { radiusBenchUser } from "./radius-load.ts";

export function makeCertificates(dir: string, key: KeyKind, clientCount = 0) {
  makeCa(dir, "ca", key);
  issue(
    dir,
    "ca",
    "server",
    "radius.test",
    "subjectAltName=DNS:radius.test\nextendedKeyUsage=serverAuth\n",
    key,
  );
  const clients: { cert: string; key: string }[] = [];
  for (let n = 1; n <= clientCount; n++) {
    const name = radiusBenchUser(n).username;
    issue(dir, "ca", name, name, "extendedKeyUsage=clientAuth\n", key);
    clients.push({ cert: path.join(dir, `${name}.pem`), key: path.join(dir, `${name}.key`) });
  }
  return {
    ca: path.join(dir, "ca.pem"),
    cert: path.join(dir, "server.pem"),
    key: path.join(dir, "server.key"),
    clients,
  };
}

export type Certificates = ReturnType<typeof makeCertificates>;
