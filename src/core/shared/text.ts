/** Control characters (C0, DEL) have no place in names and would break PostgreSQL (NUL) or logs. */
export const NO_CONTROL_CHARACTERS = "^[^\\u0000-\\u001f\\u007f]*$";
const withoutControlCharacters = new RegExp(NO_CONTROL_CHARACTERS);

export function hasControlCharacters(value: string): boolean {
  return !withoutControlCharacters.test(value);
}

/** Escapes a user's text for use inside LIKE '%...%' ESCAPE '\'. */
export function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
