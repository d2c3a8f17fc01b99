/**
 * The in-memory fast path of the tar reader. Uploads are small (a few MB) and already in memory, so
 * a streaming parser buys nothing for the archives tfguard sees every day while its per-entry
 * stream machinery dominates reading time. This reader inflates the whole gzip stream in one call
 * (under the same caps the streaming reader meters) and walks the headers in place; file contents
 * are views into the inflated buffer, hashed in one shot.
 *
 * It accepts only the plain, well-formed subset real tools write: valid checksums, POSIX `ustar` or
 * GNU magic, regular files and directories, PAX (local and global) and GNU long-name headers, a
 * clean end-of-archive. Anything else (links, devices, bad checksums, unknown formats, truncation,
 * data after the end, a cap reached, any input error) returns `false` and the caller re-reads the
 * archive with the streaming reader (tar.ts), which owns every rejection and its exact message. Both
 * paths feed entries through the same `beginTarEntry`, and a differential test
 * (test/archive/tar-fast.test.ts) checks they agree on every corpus archive and on generated edge
 * cases.
 */
import { gunzipSync } from 'node:zlib';
import type { ArchiveBuilder } from './builder';
import { maxContainerBytes, RATIO_GRACE_BYTES } from './limits';
import { beginTarEntry, type TarHeader } from './tar';

const BLOCK = 512;
/** tar-stream's cap on one PAX / GNU long-name header; larger ones go to the streaming reader. */
const MAX_EXTENDED_HEADER = 4 * 1024 * 1024;

/**
 * The largest inflated tar the fast path holds in memory at once. File contents are views into it,
 * so it lives as long as the scan; the streaming reader keeps only the loaded files. Above this
 * (archives carrying large binaries, say) the streaming reader is the leaner choice.
 */
export const FAST_PATH_MAX_TAR_BYTES = 96 * 1024 * 1024;

/** Thrown (and caught below) when the archive is outside the fast path's subset. */
class Defer {}
const DEFER = new Defer();

/** Header type flags (tar-stream's numbering: the byte minus `'0'`, NUL = 0). */
const FLAG_FILE = 0;
const FLAG_DIRECTORY = 5;
const FLAG_CONTIGUOUS = 7;
const FLAG_PAX = 72; // 'x'
const FLAG_PAX_GLOBAL = 55; // 'g'
const FLAG_GNU_LONG_PATH = 28; // 'L'

function roundUp(n: number): number {
  return Math.ceil(n / BLOCK) * BLOCK;
}

function isZero(buf: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (buf[i] !== 0) return false;
  return true;
}

/** A NUL-terminated latin1 field (as tar-stream decodes names: one char per byte). */
function field(buf: Buffer, offset: number, length: number): string {
  let end = offset;
  const limit = offset + length;
  while (end < limit && buf[end] !== 0) end++;
  return buf.toString('latin1', offset, end);
}

/** An octal number field: optional leading spaces / NULs, octal digits, then a space or NUL. Base-256
 * and anything unusual defer to the streaming reader. */
function octal(buf: Buffer, offset: number, length: number): number {
  let i = offset;
  const end = offset + length;
  if ((buf[i] as number) & 0x80) throw DEFER;
  while (i < end && (buf[i] === 0x20 || buf[i] === 0)) i++;
  let value = 0;
  let digits = 0;
  for (; i < end; i++) {
    const c = buf[i] as number;
    if (c < 0x30 || c > 0x37) break;
    value = value * 8 + (c - 0x30);
    digits++;
  }
  for (; i < end; i++) if (buf[i] !== 0x20 && buf[i] !== 0) throw DEFER;
  if (digits > 11) throw DEFER;
  return value;
}

function checksumOk(buf: Buffer, at: number): boolean {
  let sum = 8 * 32;
  for (let i = at; i < at + 148; i++) sum += buf[i] as number;
  for (let i = at + 156; i < at + BLOCK; i++) sum += buf[i] as number;
  return sum === octal(buf, at + 148, 8);
}

/** The magic and version fields (bytes 257-264 of a header): POSIX `"ustar\0" + "00"`, GNU
 * `"ustar " + " \0"`. */
const USTAR_MAGIC = Buffer.from('ustar\u000000', 'latin1');
const GNU_MAGIC = Buffer.from('ustar  \u0000', 'latin1');

/** Whether the header at `at` carries `magic`, compared byte by byte in place: no string per
 * header, and no Buffer.compare, whose offset checks cost more than the eight bytes. */
function hasMagic(buf: Buffer, at: number, magic: Buffer): boolean {
  for (let i = 0; i < 8; i++) if (buf[at + 257 + i] !== magic[i]) return false;
  return true;
}

/** PAX records (`"<len> <key>=<value>\n"`), decoded as tar-stream does; anything malformed defers. */
function paxRecords(data: Buffer): Record<string, string> {
  const result: Record<string, string> = {};
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space === -1) throw DEFER;
    const len = Number(data.toString('latin1', at, space));
    if (!Number.isInteger(len) || len <= space - at + 1 || at + len > data.length) throw DEFER;
    if (data[at + len - 1] !== 0x0a) throw DEFER;
    const record = data.toString('utf8', space + 1, at + len - 1);
    const eq = record.indexOf('=');
    if (eq <= 0) throw DEFER;
    result[record.slice(0, eq)] = record.slice(eq + 1);
    at += len;
  }
  return result;
}

/** Walk an uncompressed tar held in `tar`, feeding the builder. Throws `DEFER` outside the subset. */
function walk(tar: Buffer, builder: ArchiveBuilder): void {
  let at = 0;
  let entries = 0;
  let paxGlobal: Record<string, string> | null = null;
  let pax: Record<string, string> | null = null;
  let longPath: string | null = null;
  for (;;) {
    if (at + BLOCK > tar.length) throw DEFER; // no end-of-archive block: truncated
    if (isZero(tar, at, at + BLOCK)) {
      // The end-of-archive marker: everything after it must be zero padding, and nothing may be
      // pending. An empty archive is the streaming reader's to report.
      if (entries === 0 || pax !== null || longPath !== null) throw DEFER;
      if ((tar.length - at) % BLOCK !== 0 || !isZero(tar, at + BLOCK, tar.length)) throw DEFER;
      return;
    }
    if (!checksumOk(tar, at)) throw DEFER;
    const ustar = hasMagic(tar, at, USTAR_MAGIC);
    if (!ustar && !hasMagic(tar, at, GNU_MAGIC)) throw DEFER;
    const byte = tar[at + 156] as number;
    const flag = byte === 0 ? 0 : byte - 0x30;
    let size = octal(tar, at + 124, 12);
    const dataStart = at + BLOCK;

    if (flag === FLAG_PAX || flag === FLAG_PAX_GLOBAL || flag === FLAG_GNU_LONG_PATH) {
      if (size > MAX_EXTENDED_HEADER || dataStart + size > tar.length) throw DEFER;
      const data = tar.subarray(dataStart, dataStart + size);
      if (flag === FLAG_GNU_LONG_PATH) {
        if (longPath !== null) throw DEFER;
        longPath = field(data, 0, data.length);
      } else if (flag === FLAG_PAX_GLOBAL) {
        paxGlobal = paxRecords(data);
      } else {
        if (pax !== null) throw DEFER;
        pax = paxGlobal === null ? paxRecords(data) : { ...paxGlobal, ...paxRecords(data) };
      }
      at = dataStart + roundUp(size);
      continue;
    }

    let type: string;
    if (flag === FLAG_FILE) type = 'file';
    else if (flag === FLAG_DIRECTORY) type = 'directory';
    else if (flag === FLAG_CONTIGUOUS) type = 'contiguous-file';
    else throw DEFER; // links, devices, FIFOs, sparse files, ...: the streaming reader decides

    let name = field(tar, at, 100);
    if (ustar && tar[at + 345] !== 0) name = `${field(tar, at + 345, 155)}/${name}`;
    if (longPath !== null) name = longPath;
    if (pax !== null) {
      if (pax.path) name = pax.path;
      if (pax.size) {
        const paxSize = Number(pax.size);
        if (!/^[0-9]+$/.test(pax.size) || !Number.isSafeInteger(paxSize)) throw DEFER;
        size = paxSize;
      }
    }
    const header: TarHeader = { name, size, mode: octal(tar, at + 100, 8), type, pax };
    pax = null;
    longPath = null;
    if (dataStart + size > tar.length) throw DEFER; // truncated inside the entry
    entries++;
    const sink = beginTarEntry(header, builder, { zeroBlockAt: null });
    if (sink !== null) {
      if (size > 0) sink.write(tar.subarray(dataStart, dataStart + size));
      sink.finish();
    }
    at = dataStart + roundUp(size);
  }
}

/**
 * Read a tar or tar.gz held in memory into `builder`. Returns `true` when the archive was read
 * completely; `false` when it is outside the fast path's subset or anything failed, in which case
 * the builder is in an unspecified state and the caller must use a fresh one with the streaming
 * reader.
 */
export function readTarFast(bytes: Buffer, gzip: boolean, builder: ArchiveBuilder): boolean {
  const limits = builder.limits;
  let tar: Buffer;
  if (gzip) {
    // The caps the streaming reader meters while inflating (the container size, and the ratio once
    // past the grace allowance) and the fast path's own memory bound. Reaching any defers (the
    // streaming reader says which limit, and where).
    // The gzip trailer's ISIZE (the uncompressed size mod 2^32) is only a hint, but an honest large
    // one skips a wasted inflation; a lying one just runs into the cap.
    if (bytes.length >= 18 && bytes.readUInt32LE(bytes.length - 4) > FAST_PATH_MAX_TAR_BYTES) return false;
    const cap = Math.min(
      FAST_PATH_MAX_TAR_BYTES,
      maxContainerBytes(limits),
      Math.max(RATIO_GRACE_BYTES, Math.floor(limits.maxCompressionRatio * Math.max(bytes.length, 1))),
    );
    try {
      // 256 KiB output chunks: half the time of zlib's default 16 KiB on a 6 MB tar (fewer chunks
      // to collect and concatenate), and no gain beyond.
      tar = gunzipSync(bytes, { maxOutputLength: Math.max(cap, 1), chunkSize: 256 * 1024 });
    } catch {
      return false;
    }
  } else {
    tar = bytes;
  }
  try {
    walk(tar, builder);
    return true;
  } catch {
    return false;
  }
}
