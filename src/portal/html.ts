// HTML built from tagged templates: every interpolated value is escaped unless it is already Html
// (made here). Operator and gateway text can therefore never become markup.

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** One pass over the text (a gateway's query string is escaped into every page). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

type Value = string | number | Html | null | undefined | false | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? "";
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? "");
  });
  return new Html(out);
}

const LINK = /\bhttps?:\/\/[^\s<>"']+/g;

/** A line of plain text with bare http(s) links made links (trailing punctuation left out). */
function linkify(line: string): Html {
  const parts: Value[] = [];
  let last = 0;
  for (const match of line.matchAll(LINK)) {
    let url = match[0];
    const trailing = /[.,;:!?)\]]+$/.exec(url)?.[0] ?? "";
    url = url.slice(0, url.length - trailing.length);
    const start = match.index ?? 0;
    parts.push(line.slice(last, start));
    parts.push(html`<a href="${url}" rel="noopener noreferrer nofollow" target="_blank">${url}</a>`);
    last = start + url.length;
  }
  parts.push(line.slice(last));
  return html`${parts}`;
}

/** Plain text as paragraphs (blank lines), line breaks kept, bare links made links; no HTML. */
export function paragraphs(text: string): Html {
  const blocks = text
    .split(/\n\s*\n/)
    .map((b) => b.trim())
    .filter(Boolean);
  return html`${blocks.map(
    (block) =>
      html`<p>${block.split("\n").map((line, i) => html`${i > 0 ? html`<br>` : ""}${linkify(line)}`)}</p>`,
  )}`;
}
