// What saml.ts needs of @node-saml/node-saml (and of metadata.ts, which brings @xmldom/xmldom),
// gathered in one module that saml.ts imports when the first SAML sign-in or metadata request comes:
// with its XML stack (xml-crypto, xml-encryption, xmldom, xpath, xml2js, xmlbuilder, sax) node-saml
// is about 1.2 MB of code that a server without SAML providers would hold from its start. A module of
// Wisp's own, because the bundle's dynamic import of a CommonJS package gives only its wrapper.
export { SAML, ValidateInResponseTo } from "@node-saml/node-saml";
export { certPem } from "./metadata.ts";
