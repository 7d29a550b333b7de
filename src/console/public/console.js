// Progressive enhancement only: every page works without this file.
// - "Copy" buttons next to secrets shown once (the value stays selectable text without JS).
// - "Print" buttons on the voucher sheet.
// - Portal form: the gateway fields of the chosen vendor only, and colour pickers beside the
//   colour text fields (the text field stays the one submitted), and the preview kept up to date
//   while typing (the Preview button's own post into the preview frame; nothing is saved).
// - "Online now": the counts and the list refresh in place every 10 s (without it: Refresh link).
// - A secret shown once is not shown again from the back/forward cache (which may keep even
//   no-store pages): leaving the page blanks it, and a page restored from that cache is reloaded,
//   which asks the server, which no longer has the secret.

function selectText(element) {
  const range = document.createRange();
  range.selectNodeContents(element);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}

async function copyText(text, element) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return true;
  }
  selectText(element);
  return document.execCommand("copy");
}

document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("button[data-copy]")) {
    const target = document.getElementById(button.dataset.copy);
    if (!target) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      let copied = false;
      try {
        copied = await copyText(target.textContent.trim(), target);
      } catch {
        copied = false;
      }
      if (!copied) selectText(target);
      button.textContent = copied ? "Copied" : "Press Ctrl+C to copy";
      setTimeout(() => {
        button.textContent = "Copy";
      }, 2500);
    });
  }
  for (const button of document.querySelectorAll("button[data-print]")) {
    button.hidden = false;
    button.addEventListener("click", () => window.print());
  }
  const vendor = document.querySelector("select[data-vendor-select]");
  if (vendor) {
    const showVendor = () => {
      for (const part of document.querySelectorAll("[data-vendors]")) {
        part.hidden = !part.dataset.vendors.split(" ").includes(vendor.value);
      }
    };
    vendor.addEventListener("change", showVendor);
    showVendor();
  }
  // The identity provider form: the fields of the chosen protocol only.
  const kind = document.querySelector("select#f-kind");
  if (kind) {
    const showKind = () => {
      for (const part of document.querySelectorAll("[data-kind]"))
        part.hidden = part.dataset.kind !== kind.value;
    };
    kind.addEventListener("change", showKind);
    showKind();
  }
  const previewButton = document.querySelector("button[data-preview-button]");
  const portalForm = previewButton?.form;
  if (portalForm) {
    let timer;
    const refresh = () => {
      clearTimeout(timer);
      timer = setTimeout(() => portalForm.requestSubmit(previewButton), 300);
    };
    portalForm.addEventListener("input", refresh);
    portalForm.addEventListener("change", refresh);
  }
  for (const text of document.querySelectorAll("input[data-color]")) {
    const picker = document.createElement("input");
    picker.type = "color";
    picker.className = "color-picker";
    picker.setAttribute("aria-label", `${text.labels[0]?.textContent ?? "Colour"} picker`);
    if (/^#[0-9a-fA-F]{6}$/.test(text.value)) picker.value = text.value.toLowerCase();
    picker.addEventListener("input", () => {
      text.value = picker.value;
      text.dispatchEvent(new Event("input", { bubbles: true }));
    });
    text.addEventListener("input", () => {
      if (/^#[0-9a-fA-F]{6}$/.test(text.value)) picker.value = text.value.toLowerCase();
    });
    text.after(picker);
  }
});

document.addEventListener("DOMContentLoaded", () => {
  const live = document.querySelector("[data-live]");
  if (!live) return;
  setInterval(async () => {
    if (document.hidden) return;
    try {
      const response = await fetch(live.dataset.live, { credentials: "same-origin" });
      if (response.ok && response.headers.get("content-type")?.startsWith("text/html")) {
        live.innerHTML = await response.text();
      }
    } catch {
      // Offline for a moment: the next round tries again.
    }
  }, 10_000);
});

window.addEventListener("pagehide", () => {
  for (const element of document.querySelectorAll("[data-secret]")) element.textContent = "";
});

window.addEventListener("pageshow", (event) => {
  if (event.persisted && document.querySelector("[data-secret]")) window.location.reload();
});
