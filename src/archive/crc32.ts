import * as zlib from 'node:zlib';

let table: Uint32Array | undefined;

/** CRC-32 (IEEE 802.3, as used by zip and gzip), table-driven; incremental via `value`. */
export function portableCrc32(data: Uint8Array, value = 0): number {
  if (table === undefined) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = (value ^ 0xffffffff) >>> 0;
  for (const byte of data) crc = (table[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** `zlib.crc32` (Node >= 20.15, native) when available, otherwise the portable version. */
export const crc32: (data: Uint8Array, value?: number) => number =
  typeof (zlib as { crc32?: unknown }).crc32 === 'function'
    ? (data, value) => zlib.crc32(data, value)
    : portableCrc32;
