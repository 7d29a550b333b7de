// The benches' certificates, made with openssl in a temporary folder: a CA, a server certificate for
// radius.test, and client certificates for the first bench users (EAP-TLS).
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { radiusBenchUser } from "./radius-load.ts";

/** A CA, and a server certificate for radius.test (EKU serverAuth) signed by it. */
export function makeCertificates(dir: string, key: "rsa" | "ec", clientCount = 0) {
  const run = (args: string[]) =>
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  const newKey = (file: string) =>
    key === "rsa"
      ? run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", file])
      : run(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", file]);
  newKey("ca.key");
  run([
    "req",
    "-x509",
    "-new",
    "-key",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=Wisp bench CA",
  ]);
  newKey("server.key");
  run(["req", "-new", "-key", "server.key", "-out", "server.csr", "-subj", "/CN=radius.test"]);
  fs.writeFileSync(
    path.join(dir, "server.ext"),
    "subjectAltName=DNS:radius.test\nextendedKeyUsage=serverAuth\n",
  );
  run(
    ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"].concat([
      "-out",
      "server.pem",
      "-days",
      "2",
      "-extfile",
      "server.ext",
    ]),
  );
  // EAP-TLS: a client certificate (EKU clientAuth, CN the user name) for the first clientCount
  // bench users, signed by the same CA, keys of the same kind as the server's.
  fs.writeFileSync(path.join(dir, "client.ext"), "extendedKeyUsage=clientAuth\n");
  const clients: { cert: string; key: string }[] = [];
  for (let n = 1; n <= clientCount; n++) {
    const name = radiusBenchUser(n).username;
    newKey(`${name}.key`);
    run(["req", "-new", "-key", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`]);
    run(
      ["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"].concat([
        "-out",
        `${name}.pem`,
        "-days",
        "2",
        "-extfile",
        "client.ext",
      ]),
    );
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
