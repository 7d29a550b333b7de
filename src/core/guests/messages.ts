// The words of the messages guests and sponsors receive, in each language of the guest pages
// (core/portals/rules.ts PORTAL_LANGUAGES). {x} marks what is filled in; every value is escaped in
// the HTML part (mail.ts) and none can add a header (nodemailer encodes them; addresses are checked).
import type { PortalLanguage } from "../portals/rules.ts";

export interface MailWords {
  codeSubject: string;
  codeIntro: string;
  codeExpires: string;
  linkSubject: string;
  linkIntro: string;
  linkButton: string;
  sponsorSubject: string;
  sponsorIntro: string;
  sponsorApprove: string;
  sponsorDeny: string;
  sponsorExpires: string;
  waitingSubject: string;
  waitingIntro: string;
  waitingButton: string;
  ignore: string;
  smsCode: string;
}

const en: MailWords = {
  codeSubject: "Your Wi-Fi code: {code}",
  codeIntro: "Hello {name}, your code to get online at {portal} is:",
  codeExpires: "It works for {minutes} minutes, once.",
  linkSubject: "Confirm your email for the Wi-Fi",
  linkIntro: "Hello {name}, open this link to confirm your email and get online at {portal}:",
  linkButton: "Confirm my email",
  sponsorSubject: "{name} asks you to approve their Wi-Fi access",
  sponsorIntro: "{name} ({email}{phone}) named you as their host at {portal} and asks for Wi-Fi access.",
  sponsorApprove: "Approve",
  sponsorDeny: "Deny",
  sponsorExpires: "These links work once, for {minutes} minutes.",
  waitingSubject: "Your Wi-Fi request at {portal}",
  waitingIntro:
    "Hello {name}, we asked {sponsor} to approve your access. Follow this link to see your request:",
  waitingButton: "See my request",
  ignore: "If you did not ask for this, ignore this message.",
  smsCode: "{code} is your Wi-Fi code for {portal}. It works for {minutes} minutes.",
};

const es: MailWords = {
  codeSubject: "Tu código de Wi-Fi: {code}",
  codeIntro: "Hola {name}, tu código para conectarte en {portal} es:",
  codeExpires: "Sirve durante {minutes} minutos, una sola vez.",
  linkSubject: "Confirma tu correo para el Wi-Fi",
  linkIntro: "Hola {name}, abre este enlace para confirmar tu correo y conectarte en {portal}:",
  linkButton: "Confirmar mi correo",
  sponsorSubject: "{name} te pide que apruebes su acceso Wi-Fi",
  sponsorIntro: "{name} ({email}{phone}) te ha indicado como anfitrión en {portal} y pide acceso Wi-Fi.",
  sponsorApprove: "Aprobar",
  sponsorDeny: "Rechazar",
  sponsorExpires: "Estos enlaces sirven una vez, durante {minutes} minutos.",
  waitingSubject: "Tu solicitud de Wi-Fi en {portal}",
  waitingIntro:
    "Hola {name}, hemos pedido a {sponsor} que apruebe tu acceso. Sigue este enlace para ver tu solicitud:",
  waitingButton: "Ver mi solicitud",
  ignore: "Si no lo has pedido tú, ignora este mensaje.",
  smsCode: "{code} es tu código de Wi-Fi para {portal}. Sirve durante {minutes} minutos.",
};

const fr: MailWords = {
  codeSubject: "Votre code Wi-Fi : {code}",
  codeIntro: "Bonjour {name}, votre code pour vous connecter à {portal} est :",
  codeExpires: "Il est valable {minutes} minutes, une seule fois.",
  linkSubject: "Confirmez votre adresse pour le Wi-Fi",
  linkIntro: "Bonjour {name}, ouvrez ce lien pour confirmer votre adresse et vous connecter à {portal} :",
  linkButton: "Confirmer mon adresse",
  sponsorSubject: "{name} vous demande d'approuver son accès Wi-Fi",
  sponsorIntro: "{name} ({email}{phone}) vous a désigné comme hôte à {portal} et demande un accès Wi-Fi.",
  sponsorApprove: "Approuver",
  sponsorDeny: "Refuser",
  sponsorExpires: "Ces liens ne servent qu'une fois, pendant {minutes} minutes.",
  waitingSubject: "Votre demande de Wi-Fi à {portal}",
  waitingIntro:
    "Bonjour {name}, nous avons demandé à {sponsor} d'approuver votre accès. Suivez ce lien pour voir votre demande :",
  waitingButton: "Voir ma demande",
  ignore: "Si vous n'avez rien demandé, ignorez ce message.",
  smsCode: "{code} est votre code Wi-Fi pour {portal}. Valable {minutes} minutes.",
};

export const MAIL_WORDS: Record<PortalLanguage, MailWords> = { en, es, fr };

/** The words with {name}s filled in (plain text; the HTML part escapes the result). */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    Object.hasOwn(values, name) ? String(values[name]) : whole,
  );
}
