// The words of the verified-guest pages (issue 27) in each language of the guest pages; {x} marks
// what is filled in (escaped like every value, html.ts).
import type { PortalLanguage } from "../core/portals/rules.ts";

export interface GuestWords {
  sponsorLabel: string;
  sponsorHint: string;
  phoneHint: string;
  checkTitle: string;
  codeSentEmail: string;
  codeSentSms: string;
  linkSent: string;
  codeLabel: string;
  codeButton: string;
  resendButton: string;
  resendIn: string;
  preverifyButton: string;
  preverifyText: string;
  deliveryQueued: string;
  deliveryFailed: string;
  wrongCode: string;
  codeLocked: string;
  codeExpired: string;
  limited: string;
  waitingTitle: string;
  waitingText: string;
  deniedTitle: string;
  deniedText: string;
  verifiedTitle: string;
  verifiedText: string;
  connectButton: string;
  expiredTitle: string;
  expiredText: string;
  badPhone: string;
  phoneCountry: string;
  sponsorMissing: string;
  sponsorNotAllowed: string;
  confirmTitle: string;
  confirmText: string;
  confirmButton: string;
  confirmedText: string;
  linkUsed: string;
  sponsorTitle: string;
  sponsorText: string;
  durationLabel: string;
  approveButton: string;
  denyButton: string;
  approvedText: string;
  deniedDone: string;
  badDuration: string;
  units: { minute: string; minutes: string; hour: string; hours: string; day: string; days: string };
}

const en: GuestWords = {
  sponsorLabel: "Your host's email",
  sponsorHint: "The person you are visiting: they approve your access.",
  phoneHint: "Mobile number in international format, like +34 612 345 678.",
  checkTitle: "Check your messages",
  codeSentEmail: "We sent a 6-digit code to {to}. Type it here.",
  codeSentSms: "We sent a 6-digit code by SMS to {to}. Type it here.",
  linkSent: "We sent a link to {to}. Open it to confirm your email: this page moves on by itself.",
  codeLabel: "Code",
  codeButton: "Verify",
  resendButton: "Send it again",
  resendIn: "You can ask for it again in {time}.",
  preverifyButton: "Go online for {minutes} minutes to read my email",
  preverifyText: "No signal for your email? Get a short connection to read it.",
  deliveryQueued: "The message could not be sent right now; we keep trying. It may take a few minutes.",
  deliveryFailed: "The message could not be sent. Ask for it again, or ask the staff for help.",
  wrongCode: "That code is not right. {left} tries left.",
  codeLocked: "Too many wrong codes. Ask for a new code.",
  codeExpired: "That code has expired. Ask for a new one.",
  limited: "Too many messages were asked for. Try again in {time}.",
  waitingTitle: "Waiting for approval",
  waitingText:
    "We asked {sponsor} to approve your access. This page moves on by itself when they do; you may also leave and come back with the link we emailed you.",
  deniedTitle: "Request declined",
  deniedText: "Your host declined the request.",
  verifiedTitle: "You are verified",
  verifiedText: "Connecting you now.",
  connectButton: "Connect now",
  expiredTitle: "This request has expired",
  expiredText: "Please register again.",
  badPhone: "Please enter a mobile number in international format, like +34 612 345 678.",
  phoneCountry: "Codes cannot be sent by SMS to numbers of that country here.",
  sponsorMissing: "Please enter your host's email.",
  sponsorNotAllowed: "That address is not one of the hosts who may approve guests here.",
  confirmTitle: "Confirm your email",
  confirmText: "Press the button to confirm {email}.",
  confirmButton: "Confirm",
  confirmedText: "Your email is confirmed. Go back to the Wi-Fi page: it moves on by itself.",
  linkUsed: "This link was already used, or it has expired.",
  sponsorTitle: "A guest asks for Wi-Fi",
  sponsorText: "{name} ({email}{phone}) asks for Wi-Fi access at {portal} and named you as their host.",
  durationLabel: "Access for",
  approveButton: "Approve",
  denyButton: "Deny",
  approvedText: "Approved: {name} can get online for {duration}.",
  deniedDone: "Denied: {name} will not get online.",
  badDuration: "Please choose one of the durations offered.",
  units: { minute: "minute", minutes: "minutes", hour: "hour", hours: "hours", day: "day", days: "days" },
};

const es: GuestWords = {
  sponsorLabel: "Correo de su anfitrión",
  sponsorHint: "La persona a la que visita: aprueba su acceso.",
  phoneHint: "Móvil en formato internacional, como +34 612 345 678.",
  checkTitle: "Revise sus mensajes",
  codeSentEmail: "Hemos enviado un código de 6 cifras a {to}. Escríbalo aquí.",
  codeSentSms: "Hemos enviado un código de 6 cifras por SMS a {to}. Escríbalo aquí.",
  linkSent: "Hemos enviado un enlace a {to}. Ábralo para confirmar su correo: esta página avanzará sola.",
  codeLabel: "Código",
  codeButton: "Verificar",
  resendButton: "Enviar de nuevo",
  resendIn: "Podrá pedirlo de nuevo dentro de {time}.",
  preverifyButton: "Conectarme {minutes} minutos para leer mi correo",
  preverifyText: "¿Sin conexión para leer el correo? Obtenga una conexión breve.",
  deliveryQueued:
    "No se ha podido enviar el mensaje ahora; seguimos intentándolo. Puede tardar unos minutos.",
  deliveryFailed: "No se ha podido enviar el mensaje. Pídalo de nuevo o pida ayuda al personal.",
  wrongCode: "Ese código no es correcto. Quedan {left} intentos.",
  codeLocked: "Demasiados códigos erróneos. Pida un código nuevo.",
  codeExpired: "Ese código ha caducado. Pida uno nuevo.",
  limited: "Se han pedido demasiados mensajes. Vuelva a intentarlo dentro de {time}.",
  waitingTitle: "Esperando aprobación",
  waitingText:
    "Hemos pedido a {sponsor} que apruebe su acceso. Esta página avanzará sola cuando lo haga; también puede salir y volver con el enlace que le hemos enviado.",
  deniedTitle: "Solicitud rechazada",
  deniedText: "Su anfitrión ha rechazado la solicitud.",
  verifiedTitle: "Verificado",
  verifiedText: "Le estamos conectando.",
  connectButton: "Conectar ahora",
  expiredTitle: "Esta solicitud ha caducado",
  expiredText: "Regístrese de nuevo.",
  badPhone: "Escriba un móvil en formato internacional, como +34 612 345 678.",
  phoneCountry: "Aquí no se envían códigos por SMS a números de ese país.",
  sponsorMissing: "Escriba el correo de su anfitrión.",
  sponsorNotAllowed: "Esa dirección no es de ninguno de los anfitriones que pueden aprobar invitados aquí.",
  confirmTitle: "Confirme su correo",
  confirmText: "Pulse el botón para confirmar {email}.",
  confirmButton: "Confirmar",
  confirmedText: "Su correo está confirmado. Vuelva a la página del Wi-Fi: avanzará sola.",
  linkUsed: "Este enlace ya se ha usado o ha caducado.",
  sponsorTitle: "Un invitado pide Wi-Fi",
  sponsorText: "{name} ({email}{phone}) pide acceso Wi-Fi en {portal} y le ha indicado como anfitrión.",
  durationLabel: "Acceso durante",
  approveButton: "Aprobar",
  denyButton: "Rechazar",
  approvedText: "Aprobado: {name} puede conectarse durante {duration}.",
  deniedDone: "Rechazado: {name} no se conectará.",
  badDuration: "Elija una de las duraciones ofrecidas.",
  units: { minute: "minuto", minutes: "minutos", hour: "hora", hours: "horas", day: "día", days: "días" },
};

const fr: GuestWords = {
  sponsorLabel: "E-mail de votre hôte",
  sponsorHint: "La personne que vous visitez : elle approuve votre accès.",
  phoneHint: "Mobile au format international, comme +33 6 12 34 56 78.",
  checkTitle: "Consultez vos messages",
  codeSentEmail: "Nous avons envoyé un code à 6 chiffres à {to}. Saisissez-le ici.",
  codeSentSms: "Nous avons envoyé un code à 6 chiffres par SMS au {to}. Saisissez-le ici.",
  linkSent:
    "Nous avons envoyé un lien à {to}. Ouvrez-le pour confirmer votre adresse : cette page avancera seule.",
  codeLabel: "Code",
  codeButton: "Vérifier",
  resendButton: "Renvoyer",
  resendIn: "Vous pourrez le redemander dans {time}.",
  preverifyButton: "Me connecter {minutes} minutes pour lire mes e-mails",
  preverifyText: "Pas de connexion pour lire vos e-mails ? Obtenez une connexion courte.",
  deliveryQueued:
    "Le message n’a pas pu partir pour l’instant ; nous réessayons. Cela peut prendre quelques minutes.",
  deliveryFailed: "Le message n’a pas pu être envoyé. Redemandez-le, ou demandez de l’aide au personnel.",
  wrongCode: "Ce code n’est pas le bon. Encore {left} essais.",
  codeLocked: "Trop de codes erronés. Demandez un nouveau code.",
  codeExpired: "Ce code a expiré. Demandez-en un nouveau.",
  limited: "Trop de messages ont été demandés. Réessayez dans {time}.",
  waitingTitle: "En attente d’approbation",
  waitingText:
    "Nous avons demandé à {sponsor} d’approuver votre accès. Cette page avancera seule ; vous pouvez aussi la quitter et revenir avec le lien envoyé par e-mail.",
  deniedTitle: "Demande refusée",
  deniedText: "Votre hôte a refusé la demande.",
  verifiedTitle: "Vous êtes vérifié",
  verifiedText: "Connexion en cours.",
  connectButton: "Se connecter",
  expiredTitle: "Cette demande a expiré",
  expiredText: "Veuillez vous inscrire à nouveau.",
  badPhone: "Veuillez saisir un mobile au format international, comme +33 6 12 34 56 78.",
  phoneCountry: "Les codes ne sont pas envoyés par SMS aux numéros de ce pays ici.",
  sponsorMissing: "Veuillez saisir l’e-mail de votre hôte.",
  sponsorNotAllowed: "Cette adresse n’est pas celle d’un hôte autorisé à approuver des invités ici.",
  confirmTitle: "Confirmez votre adresse",
  confirmText: "Appuyez sur le bouton pour confirmer {email}.",
  confirmButton: "Confirmer",
  confirmedText: "Votre adresse est confirmée. Revenez à la page du Wi-Fi : elle avancera seule.",
  linkUsed: "Ce lien a déjà servi, ou il a expiré.",
  sponsorTitle: "Un invité demande le Wi-Fi",
  sponsorText: "{name} ({email}{phone}) demande un accès Wi-Fi à {portal} et vous a désigné comme hôte.",
  durationLabel: "Accès pour",
  approveButton: "Approuver",
  denyButton: "Refuser",
  approvedText: "Approuvé : {name} peut se connecter pendant {duration}.",
  deniedDone: "Refusé : {name} ne se connectera pas.",
  badDuration: "Veuillez choisir l’une des durées proposées.",
  units: { minute: "minute", minutes: "minutes", hour: "heure", hours: "heures", day: "jour", days: "jours" },
};

export const GUEST_WORDS: Record<PortalLanguage, GuestWords> = { en, es, fr };

/** A number of seconds in the largest whole unit: "90 minutes", "8 hours", "1 day". */
export function duration(words: GuestWords, seconds: number): string {
  const u = words.units;
  if (seconds % 86_400 === 0) return `${seconds / 86_400} ${seconds === 86_400 ? u.day : u.days}`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} ${seconds === 3_600 ? u.hour : u.hours}`;
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  return `${minutes} ${minutes === 1 ? u.minute : u.minutes}`;
}

/** A wait rounded up: seconds under a minute, minutes under two hours, else hours ("try again in ..."). */
export function wait(words: GuestWords, seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const u = words.units;
  if (seconds < 2 * 3_600) {
    const minutes = Math.ceil(seconds / 60);
    return `${minutes} ${minutes === 1 ? u.minute : u.minutes}`;
  }
  return `${Math.ceil(seconds / 3_600)} ${u.hours}`;
}

export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    Object.hasOwn(values, name) ? String(values[name]) : whole,
  );
}
