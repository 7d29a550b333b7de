// What a portal logo may be: a PNG, JPEG or WebP of at most MAX_LOGO_BYTES whose header parses.
// The type is read from the bytes (magic numbers and the image header), never from a file name or
// a Content-Type the client sent. No pixels are decoded: the header is enough to refuse other files
// and truncated images, and the browser decodes the rest with the page's own Content-Type.

export const MAX_LOGO_BYTES = 512 * 1024;
/** Larger canvases are refused: a small file may claim a huge one (a decompression bomb for phones). */
export const MAX_LOGO_SIDE = 4096;
export const LOGO_TYPES = ["image/png", "image/jpeg", "image/webp"] as const;
export type LogoType = (typeof LOGO_TYPES)[number];

export interface LogoImage {
  type: LogoType;
  width: number;
  height: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * PNG (W3C PNG Specification, 3rd ed., §5.2 signature, §5.3 chunk layout, §11.2.1 IHDR, §11.2.4
 * IEND; also RFC 2083): the signature, IHDR as the first chunk (13 bytes: width, height, bit depth,
 * colour type, ...), then chunks (length, type, data, CRC) that must reach IEND inside the file.
 */
function png(data: Buffer): LogoImage | null {
  if (data.length < 8 + 25 + 12 || !data.subarray(0, 8).equals(PNG_SIGNATURE)) return null;
  if (data.readUInt32BE(8) !== 13 || data.toString("latin1", 12, 16) !== "IHDR") return null;
  const width = data.readUInt32BE(16);
  const height = data.readUInt32BE(20);
  const bitDepth = data[24] ?? 0;
  const colourType = data[25] ?? 0;
  if (![1, 2, 4, 8, 16].includes(bitDepth) || ![0, 2, 3, 4, 6].includes(colourType)) return null;
  let offset = 8;
  while (offset + 12 <= data.length) {
    const length = data.readUInt32BE(offset);
    const type = data.toString("latin1", offset + 4, offset + 8);
    if (length > 0x7fffffff || !/^[A-Za-z]{4}$/.test(type)) return null;
    offset += 12 + length;
    if (offset > data.length) return null;
    if (type === "IEND") return { type: "image/png", width, height };
  }
  return null;
}

/**
 * JPEG (ITU-T T.81 Annex B.1.1.2-B.2.2, JFIF): SOI (FFD8), then marker segments (FFxx and a
 * two-byte length) up to a start-of-frame (SOF0-SOF15 but DHT C4, JPG C8 and DAC CC) carrying
 * height and width; the file must end with EOI (FFD9), or it was cut short.
 */
function jpeg(data: Buffer): LogoImage | null {
  if (data.length < 4 || data[0] !== 0xff || data[1] !== 0xd8 || data[2] !== 0xff) return null;
  const end = data.lastIndexOf(Buffer.from([0xff, 0xd9]));
  if (end < 0 || data.subarray(end + 2).some((byte) => byte !== 0)) return null;
  let offset = 2;
  while (offset + 4 <= end) {
    if (data[offset] !== 0xff) return null;
    const marker = data[offset + 1] ?? 0;
    if (marker === 0xff) {
      offset += 1; // fill bytes (B.1.1.2)
      continue;
    }
    if (marker === 0xd8 || marker === 0xd9 || marker === 0xda) return null; // no frame header first
    const length = data.readUInt16BE(offset + 2);
    if (length < 2 || offset + 2 + length > end) return null;
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
      if (length < 8) return null;
      const height = data.readUInt16BE(offset + 5);
      const width = data.readUInt16BE(offset + 7);
      return { type: "image/jpeg", width, height };
    }
    offset += 2 + length;
  }
  return null;
}

/**
 * WebP (RFC 9649, WebP Image Format, §2.4-2.7): a RIFF file of form WEBP whose declared size fits
 * the bytes; the first chunk is VP8 (lossy: frame tag, start code 9D 01 2A, 14-bit width and
 * height, RFC 6386 §9.1), VP8L (lossless: signature 0x2F, 14-bit width-1 and height-1) or VP8X
 * (extended: 24-bit canvas width-1 and height-1).
 */
function webp(data: Buffer): LogoImage | null {
  if (
    data.length < 30 ||
    data.toString("latin1", 0, 4) !== "RIFF" ||
    data.toString("latin1", 8, 12) !== "WEBP"
  )
    return null;
  const riffSize = data.readUInt32LE(4);
  if (riffSize + 8 > data.length || riffSize < 22) return null;
  const chunk = data.toString("latin1", 12, 16);
  const chunkSize = data.readUInt32LE(16);
  if (20 + chunkSize > riffSize + 8) return null;
  const body = data.subarray(20, 20 + chunkSize);
  if (chunk === "VP8 ") {
    if (body.length < 10 || body[3] !== 0x9d || body[4] !== 0x01 || body[5] !== 0x2a) return null;
    return {
      type: "image/webp",
      width: body.readUInt16LE(6) & 0x3fff,
      height: body.readUInt16LE(8) & 0x3fff,
    };
  }
  if (chunk === "VP8L") {
    if (body.length < 5 || body[0] !== 0x2f) return null;
    const bits = body.readUInt32LE(1);
    return { type: "image/webp", width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8X") {
    if (body.length < 10) return null;
    return { type: "image/webp", width: body.readUIntLE(4, 3) + 1, height: body.readUIntLE(7, 3) + 1 };
  }
  return null;
}

/** The image the bytes hold, or why they are refused (a field error's text). */
export function checkLogo(data: Buffer): LogoImage | string {
  if (data.length === 0) return "must be a file (none was chosen)";
  if (data.length > MAX_LOGO_BYTES) return `must be at most ${MAX_LOGO_BYTES / 1024} KB`;
  const image = png(data) ?? jpeg(data) ?? webp(data);
  if (!image) return "must be a complete PNG, JPEG or WebP image";
  if (image.width < 1 || image.height < 1 || image.width > MAX_LOGO_SIDE || image.height > MAX_LOGO_SIDE) {
    return `must be between 1 and ${MAX_LOGO_SIDE} pixels wide and high`;
  }
  return image;
}
