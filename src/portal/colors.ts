// Operator colours made readable: text on a colour is white or black, whichever contrasts more
// (WCAG 2.1 relative luminance and contrast ratio; one of the two always reaches 4.5:1).

function channel(hex: string, offset: number): number {
  const value = Number.parseInt(hex.slice(offset, offset + 2), 16) / 255;
  return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
}

/** WCAG relative luminance of #rrggbb. */
export function luminance(hex: string): number {
  return 0.2126 * channel(hex, 1) + 0.7152 * channel(hex, 3) + 0.0722 * channel(hex, 5);
}

export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** White text when it reaches 4.5:1 on `background`, else black (which then does). */
export function textOn(background: string): string {
  return contrast(background, "#ffffff") >= 4.5 ? "#ffffff" : "#000000";
}
