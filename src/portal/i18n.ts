// The guest pages' words in each language of PORTAL_LANGUAGES. A portal fixes one, or "auto" picks
// the guest's first Accept-Language that has a catalogue; ?lang= (the visible switch) wins over both.
import { PORTAL_LANGUAGES, type PortalLanguage } from "../core/portals/rules.ts";

export interface Messages {
  languageName: string;
  signIn: string;
  voucherHeading: string;
  voucherLabel: string;
  voucherHint: string;
  voucherButton: string;
  passwordHeading: string;
  usernameLabel: string;
  passwordLabel: string;
  passwordButton: string;
  termsHeading: string;
  termsNote: string;
  languageSwitch: string;
  invalidCode: string;
  codeExpired: string;
  codeUsedUp: string;
  wrongCredentials: string;
  alreadyOnline: string;
  gatewayRefused: string;
  noGateway: string;
  tooMany: string;
  staleForm: string;
  handoffTitle: string;
  handoffText: string;
  handoffButton: string;
  onlineTitle: string;
  onlineText: string;
  continueLink: string;
  notFoundTitle: string;
  notFoundText: string;
  clickHeading: string;
  clickButton: string;
  registerHeading: string;
  nameLabel: string;
  emailLabel: string;
  phoneLabel: string;
  optional: string;
  registerButton: string;
  acceptTerms: string;
  termsRequired: string;
  badName: string;
  badEmail: string;
  badPhone: string;
  guestRefused: string;
  /** "Remember this device": {days} is replaced by the portal's number of days. */
  rememberDevice: string;
  rememberAlways: string;
  randomMacTitle: string;
  randomMacRefused: string;
  randomMacAllowed: string;
  /** One line per platform: how to use the device's own address on this network. */
  randomMacHowTo: string;
  myDevicesTitle: string;
  myDevicesIntro: string;
  myDevicesSignIn: string;
  myDevicesCount: string;
  myDevicesNone: string;
  addDeviceHeading: string;
  macLabel: string;
  macHint: string;
  deviceNameLabel: string;
  addDeviceButton: string;
  renameButton: string;
  removeButton: string;
  signOutButton: string;
  lastSeen: string;
  never: string;
  deviceLimit: string;
  badMac: string;
  macTaken: string;
  badDeviceName: string;
  signInAgain: string;
}

const en: Messages = {
  languageName: "English",
  signIn: "Sign in to the Wi-Fi",
  voucherHeading: "I have a code",
  voucherLabel: "Access code",
  voucherHint: "The code on your ticket or receipt.",
  voucherButton: "Connect",
  passwordHeading: "I have an account",
  usernameLabel: "Username",
  passwordLabel: "Password",
  passwordButton: "Sign in",
  termsHeading: "Terms of use",
  termsNote: "By connecting you accept the terms of use.",
  languageSwitch: "Language",
  invalidCode: "That code is not valid. Check it and try again.",
  codeExpired: "That code has expired.",
  codeUsedUp: "That code is already in use on as many devices as it allows.",
  wrongCredentials: "The username or password is not right, or this account cannot sign in now.",
  alreadyOnline: "This account is already online on as many devices as it allows.",
  gatewayRefused: "The network did not accept the sign-in. Please try again.",
  noGateway:
    "This page must be opened by the Wi-Fi network itself. Connect to the network and open any web page.",
  tooMany: "Too many attempts. Wait a minute, then try again.",
  staleForm: "This page was out of date. Please try again.",
  handoffTitle: "Connecting…",
  handoffText: "Your sign-in is checked. Press the button to finish connecting.",
  handoffButton: "Finish connecting",
  onlineTitle: "You are online",
  onlineText: "Your device is connected. Enjoy the Wi-Fi.",
  continueLink: "Continue",
  notFoundTitle: "Page not found",
  notFoundText: "There is no sign-in page at this address. Connect to the Wi-Fi and open any web page.",
  clickHeading: "Just browse",
  clickButton: "Accept and connect",
  registerHeading: "Register for Wi-Fi",
  nameLabel: "Name",
  emailLabel: "Email",
  phoneLabel: "Phone",
  optional: "(optional)",
  registerButton: "Register and connect",
  acceptTerms: "I accept the terms of use",
  termsRequired: "Please accept the terms of use to connect.",
  badName: "Please enter your name (up to 100 characters).",
  badEmail: "Please enter a valid email address.",
  badPhone: "Please enter a valid phone number, or leave it empty.",
  guestRefused: "We could not sign you in. Please ask the staff for help.",
  rememberDevice: "Remember this device for {days} days (next time you are online without this page)",
  rememberAlways:
    "This device will be remembered for {days} days, so next time you are online without this page.",
  randomMacTitle: "Your device uses a private Wi-Fi address",
  randomMacRefused:
    "It changes, so this network cannot remember your device. To skip this page next time, turn the private address off for this network only:",
  randomMacAllowed:
    "It may change, and then this page comes back. Tick the box to be remembered while it stays the same, or turn the private address off for this network only:",
  randomMacHowTo:
    "iPhone and iPad: Settings › Wi-Fi › (i) next to this network › Private Wi-Fi Address: Off\nAndroid: Settings › Wi-Fi › this network › Privacy: Use device MAC\nWindows: Settings › Wi-Fi › this network › Random hardware addresses: Off\nMac: System Settings › Wi-Fi › Details › Private Wi-Fi address: Off",
  myDevicesTitle: "My devices",
  myDevicesIntro: "Devices you add here get online by their address, without signing in.",
  myDevicesSignIn: "Sign in to manage your devices",
  myDevicesCount: "{count} of {limit} devices",
  myDevicesNone: "You have no devices yet.",
  addDeviceHeading: "Add a device",
  macLabel: "Wi-Fi (MAC) address",
  macHint: "As the device shows it, e.g. AA:BB:CC:DD:EE:FF (in its network or about settings).",
  deviceNameLabel: "Name",
  addDeviceButton: "Add",
  renameButton: "Rename",
  removeButton: "Remove",
  signOutButton: "Sign out",
  lastSeen: "Last online",
  never: "never",
  deviceLimit: "You have as many devices as you may add. Remove one first.",
  badMac: "That is not a device address. It looks like AA:BB:CC:DD:EE:FF.",
  macTaken: "That device is already registered.",
  badDeviceName: "The name is too long or has characters that cannot be used.",
  signInAgain: "Please sign in again.",
};

const es: Messages = {
  languageName: "Español",
  signIn: "Conéctate al Wi-Fi",
  voucherHeading: "Tengo un código",
  voucherLabel: "Código de acceso",
  voucherHint: "El código de tu ticket o recibo.",
  voucherButton: "Conectar",
  passwordHeading: "Tengo una cuenta",
  usernameLabel: "Usuario",
  passwordLabel: "Contraseña",
  passwordButton: "Entrar",
  termsHeading: "Condiciones de uso",
  termsNote: "Al conectarte aceptas las condiciones de uso.",
  languageSwitch: "Idioma",
  invalidCode: "Ese código no es válido. Revísalo y vuelve a intentarlo.",
  codeExpired: "Ese código ha caducado.",
  codeUsedUp: "Ese código ya se usa en todos los dispositivos que permite.",
  wrongCredentials: "El usuario o la contraseña no son correctos, o esta cuenta no puede entrar ahora.",
  alreadyOnline: "Esta cuenta ya está conectada en todos los dispositivos que permite.",
  gatewayRefused: "La red no aceptó el acceso. Vuelve a intentarlo.",
  noGateway: "Esta página debe abrirla la propia red Wi-Fi. Conéctate a la red y abre cualquier página web.",
  tooMany: "Demasiados intentos. Espera un minuto y vuelve a intentarlo.",
  staleForm: "La página estaba desactualizada. Vuelve a intentarlo.",
  handoffTitle: "Conectando…",
  handoffText: "Tu acceso está comprobado. Pulsa el botón para terminar de conectarte.",
  handoffButton: "Terminar de conectar",
  onlineTitle: "Ya estás conectado",
  onlineText: "Tu dispositivo está conectado. Disfruta del Wi-Fi.",
  continueLink: "Continuar",
  notFoundTitle: "Página no encontrada",
  notFoundText:
    "No hay ninguna página de acceso en esta dirección. Conéctate al Wi-Fi y abre cualquier página web.",
  clickHeading: "Solo navegar",
  clickButton: "Aceptar y conectar",
  registerHeading: "Regístrese para el Wi-Fi",
  nameLabel: "Nombre",
  emailLabel: "Correo electrónico",
  phoneLabel: "Teléfono",
  optional: "(opcional)",
  registerButton: "Registrarse y conectar",
  acceptTerms: "Acepto las condiciones de uso",
  termsRequired: "Acepte las condiciones de uso para conectarse.",
  badName: "Escriba su nombre (hasta 100 caracteres).",
  badEmail: "Escriba una dirección de correo válida.",
  badPhone: "Escriba un teléfono válido o déjelo vacío.",
  guestRefused: "No hemos podido conectarle. Pida ayuda al personal.",
  rememberDevice:
    "Recordar este dispositivo durante {days} días (la próxima vez se conectará sin esta página)",
  rememberAlways:
    "Este dispositivo se recordará durante {days} días: la próxima vez se conectará sin esta página.",
  randomMacTitle: "Su dispositivo usa una dirección Wi-Fi privada",
  randomMacRefused:
    "Cambia, así que esta red no puede recordar su dispositivo. Para no ver esta página la próxima vez, desactive la dirección privada solo para esta red:",
  randomMacAllowed:
    "Puede cambiar, y entonces esta página vuelve. Marque la casilla para que le recordemos mientras no cambie, o desactive la dirección privada solo para esta red:",
  randomMacHowTo:
    "iPhone y iPad: Ajustes › Wi-Fi › (i) junto a esta red › Dirección Wi-Fi privada: desactivada\nAndroid: Ajustes › Wi-Fi › esta red › Privacidad: Usar MAC del dispositivo\nWindows: Configuración › Wi-Fi › esta red › Direcciones de hardware aleatorias: desactivado\nMac: Ajustes del Sistema › Wi-Fi › Detalles › Dirección Wi-Fi privada: desactivada",
  myDevicesTitle: "Mis dispositivos",
  myDevicesIntro: "Los dispositivos que añada aquí se conectan por su dirección, sin iniciar sesión.",
  myDevicesSignIn: "Inicie sesión para gestionar sus dispositivos",
  myDevicesCount: "{count} de {limit} dispositivos",
  myDevicesNone: "Todavía no tiene dispositivos.",
  addDeviceHeading: "Añadir un dispositivo",
  macLabel: "Dirección Wi-Fi (MAC)",
  macHint: "Como la muestra el dispositivo, p. ej. AA:BB:CC:DD:EE:FF (en sus ajustes de red o información).",
  deviceNameLabel: "Nombre",
  addDeviceButton: "Añadir",
  renameButton: "Renombrar",
  removeButton: "Quitar",
  signOutButton: "Cerrar sesión",
  lastSeen: "Última conexión",
  never: "nunca",
  deviceLimit: "Ya tiene todos los dispositivos que puede añadir. Quite uno antes.",
  badMac: "Esa no es la dirección de un dispositivo. Tiene el aspecto AA:BB:CC:DD:EE:FF.",
  macTaken: "Ese dispositivo ya está registrado.",
  badDeviceName: "El nombre es demasiado largo o tiene caracteres no permitidos.",
  signInAgain: "Inicie sesión de nuevo.",
};

const fr: Messages = {
  languageName: "Français",
  signIn: "Connexion au Wi-Fi",
  voucherHeading: "J’ai un code",
  voucherLabel: "Code d’accès",
  voucherHint: "Le code de votre ticket ou reçu.",
  voucherButton: "Se connecter",
  passwordHeading: "J’ai un compte",
  usernameLabel: "Identifiant",
  passwordLabel: "Mot de passe",
  passwordButton: "Connexion",
  termsHeading: "Conditions d’utilisation",
  termsNote: "En vous connectant, vous acceptez les conditions d’utilisation.",
  languageSwitch: "Langue",
  invalidCode: "Ce code n’est pas valide. Vérifiez-le et réessayez.",
  codeExpired: "Ce code a expiré.",
  codeUsedUp: "Ce code est déjà utilisé sur autant d’appareils qu’il le permet.",
  wrongCredentials:
    "L’identifiant ou le mot de passe est incorrect, ou ce compte ne peut pas se connecter maintenant.",
  alreadyOnline: "Ce compte est déjà connecté sur autant d’appareils qu’il le permet.",
  gatewayRefused: "Le réseau n’a pas accepté la connexion. Veuillez réessayer.",
  noGateway:
    "Cette page doit être ouverte par le réseau Wi-Fi lui-même. Connectez-vous au réseau et ouvrez une page web.",
  tooMany: "Trop de tentatives. Attendez une minute, puis réessayez.",
  staleForm: "Cette page n’était plus à jour. Veuillez réessayer.",
  handoffTitle: "Connexion…",
  handoffText: "Votre accès est vérifié. Appuyez sur le bouton pour terminer la connexion.",
  handoffButton: "Terminer la connexion",
  onlineTitle: "Vous êtes connecté",
  onlineText: "Votre appareil est connecté. Bonne navigation.",
  continueLink: "Continuer",
  notFoundTitle: "Page introuvable",
  notFoundText:
    "Il n’y a pas de page de connexion à cette adresse. Connectez-vous au Wi-Fi et ouvrez une page web.",
  clickHeading: "Naviguer simplement",
  clickButton: "Accepter et se connecter",
  registerHeading: "S’inscrire au Wi-Fi",
  nameLabel: "Nom",
  emailLabel: "E-mail",
  phoneLabel: "Téléphone",
  optional: "(facultatif)",
  registerButton: "S’inscrire et se connecter",
  acceptTerms: "J’accepte les conditions d’utilisation",
  termsRequired: "Veuillez accepter les conditions d’utilisation pour vous connecter.",
  badName: "Veuillez saisir votre nom (100 caractères au plus).",
  badEmail: "Veuillez saisir une adresse e-mail valide.",
  badPhone: "Veuillez saisir un numéro de téléphone valide, ou laisser le champ vide.",
  guestRefused: "Nous n’avons pas pu vous connecter. Demandez de l’aide au personnel.",
  rememberDevice:
    "Se souvenir de cet appareil pendant {days} jours (la prochaine fois, connexion sans cette page)",
  rememberAlways:
    "Cet appareil sera reconnu pendant {days} jours : la prochaine fois, vous serez connecté sans cette page.",
  randomMacTitle: "Votre appareil utilise une adresse Wi-Fi privée",
  randomMacRefused:
    "Elle change, donc ce réseau ne peut pas reconnaître votre appareil. Pour ne plus voir cette page, désactivez l’adresse privée pour ce réseau seulement :",
  randomMacAllowed:
    "Elle peut changer, et cette page revient alors. Cochez la case pour être reconnu tant qu’elle ne change pas, ou désactivez l’adresse privée pour ce réseau seulement :",
  randomMacHowTo:
    "iPhone et iPad : Réglages › Wi-Fi › (i) à côté de ce réseau › Adresse Wi-Fi privée : désactivée\nAndroid : Paramètres › Wi-Fi › ce réseau › Confidentialité : Utiliser l’adresse MAC de l’appareil\nWindows : Paramètres › Wi-Fi › ce réseau › Adresses matérielles aléatoires : désactivé\nMac : Réglages Système › Wi-Fi › Détails › Adresse Wi-Fi privée : désactivée",
  myDevicesTitle: "Mes appareils",
  myDevicesIntro: "Les appareils ajoutés ici se connectent par leur adresse, sans identification.",
  myDevicesSignIn: "Connectez-vous pour gérer vos appareils",
  myDevicesCount: "{count} appareils sur {limit}",
  myDevicesNone: "Vous n’avez encore aucun appareil.",
  addDeviceHeading: "Ajouter un appareil",
  macLabel: "Adresse Wi-Fi (MAC)",
  macHint: "Telle que l’appareil l’affiche, par ex. AA:BB:CC:DD:EE:FF (réglages réseau ou informations).",
  deviceNameLabel: "Nom",
  addDeviceButton: "Ajouter",
  renameButton: "Renommer",
  removeButton: "Retirer",
  signOutButton: "Se déconnecter",
  lastSeen: "Dernière connexion",
  never: "jamais",
  deviceLimit: "Vous avez déjà autant d’appareils que permis. Retirez-en un d’abord.",
  badMac: "Ce n’est pas une adresse d’appareil. Elle ressemble à AA:BB:CC:DD:EE:FF.",
  macTaken: "Cet appareil est déjà enregistré.",
  badDeviceName: "Le nom est trop long ou contient des caractères interdits.",
  signInAgain: "Veuillez vous reconnecter.",
};

export const CATALOGUE: Record<PortalLanguage, Messages> = { en, es, fr };

function isLanguage(code: string): code is PortalLanguage {
  return (PORTAL_LANGUAGES as readonly string[]).includes(code);
}

/** The first language of an Accept-Language header (by q, then order) that has a catalogue. */
export function fromAcceptLanguage(header: string | undefined): PortalLanguage | null {
  if (!header) return null;
  const ranked = header
    .slice(0, 500)
    .split(",")
    .map((part, index) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([01](?:\.\d{1,3})?)\s*$/.exec(p)?.[1]).find(Boolean);
      return {
        code: tag.trim().toLowerCase().split("-")[0] ?? "",
        q: q === undefined ? 1 : Number(q),
        index,
      };
    })
    .filter((l) => l.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  return ranked.map((l) => l.code).find(isLanguage) ?? null;
}

/** ?lang= when it names a catalogue, else the portal's fixed language, else Accept-Language, else English. */
export function chooseLanguage(
  asked: unknown,
  portalLanguage: string,
  acceptLanguage: string | undefined,
): PortalLanguage {
  if (typeof asked === "string" && isLanguage(asked)) return asked;
  if (isLanguage(portalLanguage)) return portalLanguage;
  return fromAcceptLanguage(acceptLanguage) ?? "en";
}
