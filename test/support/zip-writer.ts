/**
 * A minimal zip writer for tests (APPNOTE.TXT 6.3.x): local file headers, file data, central
 * directory and end-of-central-directory record, with full control over the fields the reader
 * has to distrust (declared sizes, CRC, flags, external attributes, names as raw bytes).
 */
import { crc32, deflateRawSync } from 'node:zlib';

export const S_IFREG = 0o100000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;
export const S_IFIFO = 0o010000;
export const S_IFCHR = 0o020000;
export const S_IFBLK = 0o060000;

export interface ZipEntrySpec {
  /** Entry name; a Buffer is written as-is (for non-UTF-8 names). */
  name: string | Buffer;
  data?: Buffer | string;
  /** Compression: stored (default) or deflated. */
  method?: 'store' | 'deflate';
  /** Written as the method number instead of 0/8 (the data is still stored). */
  methodNumber?: number;
  /** Full Unix st_mode (type and permission bits) for the external attributes; host becomes Unix. */
  unixMode?: number;
  /** MS-DOS attribute byte (0x10 = directory) for the external attributes. */
  dosAttributes?: number;
  /** Set general-purpose bit 11 (names are UTF-8). Default: true when the name is a string. */
  utf8Flag?: boolean;
  /** Set general-purpose bit 0 (traditional encryption); the data is written unencrypted. */
  encrypted?: boolean;
  /** Lie in the central directory (and local header) about the uncompressed size. */
  declaredSize?: number;
  /** Lie about the CRC-32. */
  declaredCrc?: number;
  extraFields?: { id: number; data: Buffer }[];
}

function encodeExtra(fields: { id: number; data: Buffer }[] | undefined): Buffer {
  if (!fields || fields.length === 0) return Buffer.alloc(0);
  return Buffer.concat(
    fields.map((field) => {
      const header = Buffer.alloc(4);
      header.writeUInt16LE(field.id, 0);
      header.writeUInt16LE(field.data.length, 2);
      return Buffer.concat([header, field.data]);
    }),
  );
}

/** Build a zip archive. `trailingComment` lets a test append an EOCD comment. */
export function writeZip(entries: ZipEntrySpec[], options: { comment?: string } = {}): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  // 2024-01-01 00:00:00 in MS-DOS format.
  const dosTime = 0;
  const dosDate = ((2024 - 1980) << 9) | (1 << 5) | 1;

  for (const spec of entries) {
    const name = typeof spec.name === 'string' ? Buffer.from(spec.name, 'utf8') : spec.name;
    const raw = spec.data === undefined ? Buffer.alloc(0) : Buffer.from(spec.data);
    const deflate = spec.method === 'deflate';
    const stored = deflate ? deflateRawSync(raw) : raw;
    const method = spec.methodNumber ?? (deflate ? 8 : 0);
    const crc = spec.declaredCrc ?? crc32(raw);
    const size = spec.declaredSize ?? raw.length;
    const compressedSize = stored.length;
    let flags = 0;
    if (spec.utf8Flag ?? typeof spec.name === 'string') flags |= 0x0800;
    if (spec.encrypted) flags |= 0x0001;
    const extra = encodeExtra(spec.extraFields);

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(dosTime, 10);
    local.writeUInt16LE(dosDate, 12);
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(compressedSize, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(extra.length, 28);
    const localRecord = Buffer.concat([local, name, extra, stored]);

    const unix = spec.unixMode !== undefined;
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(((unix ? 3 : 0) << 8) | 63, 4); // made by: Unix or MS-DOS, spec 6.3
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt16LE(dosTime, 12);
    central.writeUInt16LE(dosDate, 14);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(compressedSize, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt16LE(extra.length, 30);
    central.writeUInt16LE(0, 32); // comment length
    central.writeUInt16LE(0, 34); // disk number
    central.writeUInt16LE(0, 36); // internal attributes
    const external = (((spec.unixMode ?? 0) & 0xffff) << 16) | (spec.dosAttributes ?? 0);
    central.writeUInt32LE(external >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    centrals.push(Buffer.concat([central, name, extra]));

    locals.push(localRecord);
    offset += localRecord.length;
  }

  const centralDirectory = Buffer.concat(centrals);
  const comment = Buffer.from(options.comment ?? '', 'utf8');
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(0, 4);
  eocd.writeUInt16LE(0, 6);
  eocd.writeUInt16LE(entries.length, 8);
  eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(centralDirectory.length, 12);
  eocd.writeUInt32LE(offset, 16);
  eocd.writeUInt16LE(comment.length, 20);
  return Buffer.concat([...locals, centralDirectory, eocd, comment]);
}

/** The Info-ZIP Unicode Path extra field (0x7075) for a header name. */
export function unicodePathField(headerName: Buffer, utf8Name: string): { id: number; data: Buffer } {
  const header = Buffer.alloc(5);
  header[0] = 1;
  header.writeUInt32LE(crc32(headerName) >>> 0, 1);
  return { id: 0x7075, data: Buffer.concat([header, Buffer.from(utf8Name, 'utf8')]) };
}
