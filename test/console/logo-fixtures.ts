// Logo fixtures for the console and guest-page logo tests: real images (24 x 16 pixels, drawn on
// a canvas by Chromium and exported with toDataURL), a PNG encoder, and files that must be refused.
import { crc32, deflateSync } from "node:zlib";

export const JPEG = Buffer.from(
  "/9j/4AAQSkZJRgABAQAAAQABAAD/4gHYSUNDX1BST0ZJTEUAAQEAAAHIAAAAAAQwAABtbnRyUkdCIFhZWiAH4AABAAEAAAAAAABhY3NwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQAA9tYAAQAAAADTLQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAlkZXNjAAAA8AAAACRyWFlaAAABFAAAABRnWFlaAAABKAAAABRiWFlaAAABPAAAABR3dHB0AAABUAAAABRyVFJDAAABZAAAAChnVFJDAAABZAAAAChiVFJDAAABZAAAAChjcHJ0AAABjAAAADxtbHVjAAAAAAAAAAEAAAAMZW5VUwAAAAgAAAAcAHMAUgBHAEJYWVogAAAAAAAAb6IAADj1AAADkFhZWiAAAAAAAABimQAAt4UAABjaWFlaIAAAAAAAACSgAAAPhAAAts9YWVogAAAAAAAA9tYAAQAAAADTLXBhcmEAAAAAAAQAAAACZmYAAPKnAAANWQAAE9AAAApbAAAAAAAAAABtbHVjAAAAAAAAAAEAAAAMZW5VUwAAACAAAAAcAEcAbwBvAGcAbABlACAASQBuAGMALgAgADIAMAAxADb/2wBDAAoHBwgHBgoICAgLCgoLDhgQDg0NDh0VFhEYIx8lJCIfIiEmKzcvJik0KSEiMEExNDk7Pj4+JS5ESUM8SDc9Pjv/2wBDAQoLCw4NDhwQEBw7KCIoOzs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozs7Ozv/wAARCAAQABgDASIAAhEBAxEB/8QAFgABAQEAAAAAAAAAAAAAAAAAAAQF/8QAHhAAAQQBBQAAAAAAAAAAAAAAEgAGERQBFiQxQ2H/xAAWAQEBAQAAAAAAAAAAAAAAAAAEAwb/xAAeEQABAQkAAAAAAAAAAAAAAAAAEhQiJDFRYWKBkf/aAAwDAQACEQMRAD8AsbDY1HZ3lauHUZFPuI4RztjTlbeWbB9QCMe5nlGw59OWdnZsB2gIz5meUc7n1HW2daufaZFHmI4QXEXMzDs+e68kYKIikCP/2Q==",
  "base64",
);
/** Extended WebP (VP8X, ICC profile, then a lossy VP8 chunk). */
export const WEBP = Buffer.from(
  "UklGRkwCAABXRUJQVlA4WAoAAAAgAAAAFwAADwAASUNDUMgBAAAAAAHIAAAAAAQwAABtbnRyUkdCIFhZWiAH4AABAAEAAAAAAABhY3NwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQAA9tYAAQAAAADTLQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAlkZXNjAAAA8AAAACRyWFlaAAABFAAAABRnWFlaAAABKAAAABRiWFlaAAABPAAAABR3dHB0AAABUAAAABRyVFJDAAABZAAAAChnVFJDAAABZAAAAChiVFJDAAABZAAAAChjcHJ0AAABjAAAADxtbHVjAAAAAAAAAAEAAAAMZW5VUwAAAAgAAAAcAHMAUgBHAEJYWVogAAAAAAAAb6IAADj1AAADkFhZWiAAAAAAAABimQAAt4UAABjaWFlaIAAAAAAAACSgAAAPhAAAts9YWVogAAAAAAAA9tYAAQAAAADTLXBhcmEAAAAAAAQAAAACZmYAAPKnAAANWQAAE9AAAApbAAAAAAAAAABtbHVjAAAAAAAAAAEAAAAMZW5VUwAAACAAAAAcAEcAbwBvAGcAbABlACAASQBuAGMALgAgADIAMAAxADZWUDggXgAAAHADAJ0BKhgAEAA+nT6ZSCWjIqEwCACwE4loALD7f/yUAEIoAAD+zvX/vOp/95dr//vCRdXFVLweTNq+DRR7/7y7c1gh9/reAv1MPj/jq+/nKpnjnVM6XQyB+PtAAAA=",
  "base64",
);
/** Extended WebP with a lossless VP8L chunk. */
export const WEBP_LOSSLESS = Buffer.from(
  "UklGRhICAABXRUJQVlA4WAoAAAAgAAAAFwAADwAASUNDUMgBAAAAAAHIAAAAAAQwAABtbnRyUkdCIFhZWiAH4AABAAEAAAAAAABhY3NwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAQAA9tYAAQAAAADTLQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAlkZXNjAAAA8AAAACRyWFlaAAABFAAAABRnWFlaAAABKAAAABRiWFlaAAABPAAAABR3dHB0AAABUAAAABRyVFJDAAABZAAAAChnVFJDAAABZAAAAChiVFJDAAABZAAAAChjcHJ0AAABjAAAADxtbHVjAAAAAAAAAAEAAAAMZW5VUwAAAAgAAAAcAHMAUgBHAEJYWVogAAAAAAAAb6IAADj1AAADkFhZWiAAAAAAAABimQAAt4UAABjaWFlaIAAAAAAAACSgAAAPhAAAts9YWVogAAAAAAAA9tYAAQAAAADTLXBhcmEAAAAAAAQAAAACZmYAAPKnAAANWQAAE9AAAApbAAAAAAAAAABtbHVjAAAAAAAAAAEAAAAMZW5VUwAAACAAAAAcAEcAbwBvAGcAbABlACAASQBuAGMALgAgADIAMAAxADZWUDhMJAAAAC8XwAMAD/Av0EO8H+h3/iMNBNk2Nbi/5SmeI0T0fxwAoHnNGw==",
  "base64",
);

/** The chunk `name` of a RIFF WebP, wrapped as a simple (non-extended) WebP file of its own. */
export function simpleWebp(extended: Buffer, name: "VP8 " | "VP8L"): Buffer {
  let offset = 12;
  while (offset + 8 <= extended.length) {
    const size = extended.readUInt32LE(offset + 4);
    if (extended.toString("latin1", offset, offset + 4) === name) {
      const chunk = extended.subarray(offset, offset + 8 + size + (size % 2));
      const header = Buffer.alloc(12);
      header.write("RIFF", 0, "latin1");
      header.writeUInt32LE(4 + chunk.length, 4);
      header.write("WEBP", 8, "latin1");
      return Buffer.concat([header, chunk]);
    }
    offset += 8 + size + (size % 2);
  }
  throw new Error(`no ${name} chunk`);
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A solid-colour RGB PNG (W3C PNG §5, §11.2): signature, IHDR, one IDAT, IEND. */
export function png(width: number, height: number, rgb: [number, number, number], extra = 0): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr)];
  // An ancillary text chunk to make a file as large as asked (for the size limit).
  if (extra > 0)
    parts.push(chunk("tEXt", Buffer.concat([Buffer.from("Comment\0"), Buffer.alloc(extra, 0x61)])));
  parts.push(chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0)));
  return Buffer.concat(parts);
}

/** A 1 x 1 GIF89a (GIF is not an accepted type). */
export const GIF = Buffer.from("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==", "base64");
export const HTML_AS_PNG = Buffer.from("<!doctype html><script>alert(document.domain)</script>");
