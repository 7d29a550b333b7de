// The words of sign-in through an identity provider (issue 26) in each language of the guest pages;
// {x} marks what is filled in (escaped like every value, html.ts).
import type { IdpProblem } from "../core/idp/rules.ts";
import type { PortalLanguage } from "../core/portals/rules.ts";

export interface IdpWords {
  heading: string;
  button: string;
  goingTitle: string;
  goingText: string;
  goingLink: string;
  refusedTitle: string;
  expired: string;
  unreachable: string;
  domain: string;
  refused: string;
  notConfirmed: string;
  off: string;
}

export const IDP_WORDS: Record<PortalLanguage, IdpWords> = {
  en: {
    heading: "Sign in with your account",
    button: "Continue with {name}",
    goingTitle: "Signing in",
    goingText: "Taking you to {name} to sign in…",
    goingLink: "Continue to {name}",
    refusedTitle: "Sign-in did not work",
    expired: "This sign-in has expired or was already used. Please go back and start again.",
    unreachable: "{name} did not answer in time. Please try again in a moment.",
    domain: "Your {name} account may not be used on this network.",
    refused: "Your account may not get online here at the moment.",
    notConfirmed: "{name} could not confirm who you are. Please try again.",
    off: "Signing in with {name} is not available on this network any more.",
  },
  es: {
    heading: "Entrar con tu cuenta",
    button: "Continuar con {name}",
    goingTitle: "Iniciando sesión",
    goingText: "Te llevamos a {name} para iniciar sesión…",
    goingLink: "Continuar a {name}",
    refusedTitle: "No se pudo iniciar sesión",
    expired: "Este inicio de sesión ha caducado o ya se usó. Vuelve atrás y empieza de nuevo.",
    unreachable: "{name} no respondió a tiempo. Inténtalo de nuevo en un momento.",
    domain: "Tu cuenta de {name} no se puede usar en esta red.",
    refused: "Tu cuenta no puede conectarse aquí en este momento.",
    notConfirmed: "{name} no pudo confirmar quién eres. Inténtalo de nuevo.",
    off: "Ya no se puede entrar con {name} en esta red.",
  },
  fr: {
    heading: "Se connecter avec votre compte",
    button: "Continuer avec {name}",
    goingTitle: "Connexion",
    goingText: "Redirection vers {name} pour vous connecter…",
    goingLink: "Continuer vers {name}",
    refusedTitle: "La connexion n’a pas abouti",
    expired: "Cette connexion a expiré ou a déjà été utilisée. Revenez en arrière et recommencez.",
    unreachable: "{name} n’a pas répondu à temps. Réessayez dans un instant.",
    domain: "Votre compte {name} ne peut pas être utilisé sur ce réseau.",
    refused: "Votre compte ne peut pas se connecter ici pour le moment.",
    notConfirmed: "{name} n’a pas pu confirmer votre identité. Réessayez.",
    off: "La connexion avec {name} n’est plus disponible sur ce réseau.",
  },
};

/** Which sentence a refusal gets: the guest learns what to do, the log the exact reason. */
export function idpProblemWords(words: IdpWords, problem: IdpProblem): string {
  switch (problem) {
    case "unknown_state":
    case "browser_mismatch":
      return words.expired;
    case "idp_unreachable":
      return words.unreachable;
    case "domain_not_allowed":
    case "email_not_verified":
      return words.domain;
    case "user_refused":
    case "no_admin":
      return words.refused;
    case "provider_off":
      return words.off;
    default:
      return words.notConfirmed;
  }
}
