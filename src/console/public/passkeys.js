// Passkey buttons (pages with a form[data-webauthn]): runs the WebAuthn ceremony with the options
// the server put in the page (a JSON <script> block, data-options names it) through
// @simplewebauthn/browser (webauthn.js, loaded before this file), puts the browser's answer in the
// form's "credential" field and posts the form. data-autostart runs it as the page opens (the
// passkey login). Without JavaScript the form posts no answer and the server says so.
/* global SimpleWebAuthnBrowser */

document.addEventListener("DOMContentLoaded", () => {
  for (const form of document.querySelectorAll("form[data-webauthn]")) {
    const options = document.getElementById(form.dataset.options);
    const problem = form.querySelector("[data-webauthn-error]");
    if (!options || typeof SimpleWebAuthnBrowser === "undefined") continue;
    const optionsJSON = JSON.parse(options.textContent);
    const run = async () => {
      if (problem) problem.hidden = true;
      try {
        const answer =
          form.dataset.webauthn === "register"
            ? await SimpleWebAuthnBrowser.startRegistration({ optionsJSON })
            : await SimpleWebAuthnBrowser.startAuthentication({ optionsJSON });
        form.elements.credential.value = JSON.stringify(answer);
        form.submit();
      } catch (error) {
        if (!problem) return;
        problem.textContent = `The browser did not use a passkey: ${error.message}`;
        problem.hidden = false;
      }
    };
    form.addEventListener("submit", (event) => {
      if (form.elements.credential.value) return;
      event.preventDefault();
      if (form.reportValidity()) run();
    });
    if ("autostart" in form.dataset) run();
  }
});
