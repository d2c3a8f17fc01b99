/**
 * Provider package checksums, computed the way Terraform computes them
 * (hashicorp/terraform internal/getproviders/hash.go, which delegates to golang.org/x/mod
 * sumdb/dirhash `Hash1`, `HashDir` and `HashZip`):
 *
 * - `h1:` ("hash scheme 1"): for every file, sorted by path (byte order), the line
 *   `<lowercase hex sha256>  <path>\n`; the SHA-256 of all lines, base64 (standard, padded).
 *   `HashDir` lists regular files only; `HashZip` lists every zip entry, directory entries included
 *   (as empty files). Terraform records the h1 of the *unpacked* directory, but checks a packed zip
 *   from a filesystem mirror with `HashZip` — so a zip with directory entries never matches the h1
 *   Terraform itself recorded (checked with `terraform init -lockfile=readonly`, 1.11).
 * - `zh:`: lowercase hex SHA-256 of the zip file itself.
 *
 * Zips are read entry by entry with yauzl and each entry is streamed through SHA-256, so memory
 * stays constant per entry whatever the package size.
 */
import { createHash } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Readable } from 'node:stream';
import { compareUtf8 } from '../archive';
import yauzl from 'yauzl';

/** A package could not be hashed: a corrupt zip, a rejected entry name, an unreadable directory. */
export class PackageHashError extends Error {
  override readonly name = 'PackageHashError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
  }
}

/** The h1 of a package with no files. */
export const EMPTY_H1 = 'h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Byte-wise (UTF-8) order, the order Go's `sort.Strings` gives. */
export { compareUtf8 };

/**
 * `h1:` from per-file SHA-256 values (dirhash `Hash1`). Paths use `/`; a path containing a newline
 * is an error, as in Go.
 */
export function hashEntries(files: readonly { path: string; sha256: string }[]): string {
  const sorted = [...files].sort((a, b) => compareUtf8(a.path, b.path));
  const summary = createHash('sha256');
  for (const f of sorted) {
    if (f.path.includes('\n')) {
      throw new PackageHashError(
        `file name ${JSON.stringify(f.path)} contains a newline, which h1 cannot hash`,
      );
    }
    if (!SHA256_HEX.test(f.sha256)) {
      throw new PackageHashError(
        `file ${JSON.stringify(f.path)} has no valid sha256 (${JSON.stringify(f.sha256)})`,
      );
    }
    summary.update(`${f.sha256}  ${f.path}\n`, 'utf8');
  }
  return `h1:${summary.digest('base64')}`;
}

/** Lowercase hex SHA-256 of a stream's bytes; rejects once more than `limit` bytes have passed. */
function sha256OfStream(
  stream: Readable,
  limit: number,
  what: string,
): Promise<{ hex: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    let bytes = 0;
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) {
        stream.destroy();
        reject(new PackageHashError(`${what} is larger than the limit of ${limit} bytes`));
        return;
      }
      h.update(chunk);
    });
    stream.on('error', (err) =>
      reject(new PackageHashError(`cannot read ${what}: ${err.message}`, { cause: err })),
    );
    stream.on('end', () => resolve({ hex: h.digest('hex'), bytes }));
  });
}

export interface ZipHashOptions {
  /** Most entries a package zip may have (default 100,000). */
  maxEntries?: number;
  /** Most uncompressed bytes in total (default 4 GiB). */
  maxUncompressedBytes?: number;
}

export interface ZipEntryHash {
  /** Entry name exactly as stored. */
  name: string;
  directory: boolean;
  sha256: string;
  size: number;
}

export interface ZipHashes {
  /** h1 of the package once unpacked: regular files only (what `terraform init` records). */
  h1: string;
  /** dirhash `HashZip`: every entry, directories included (what Terraform checks a packed zip
   * against). Equal to `h1` when the zip has no directory entries. */
  h1Packed: string;
  /** `zh:` + sha256 of the zip bytes. */
  zh: string;
  entries: ZipEntryHash[];
}

const DEFAULT_MAX_ENTRIES = 100_000;
const DEFAULT_MAX_BYTES = 4 * 1024 * 1024 * 1024;

function openZip(zip: Buffer | string): Promise<yauzl.ZipFile> {
  const options: yauzl.Options = {
    lazyEntries: true,
    autoClose: true,
    decodeStrings: false,
    validateEntrySizes: true,
  };
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, zf?: yauzl.ZipFile): void => {
      if (err || !zf)
        reject(
          new PackageHashError(`not a readable zip: ${err?.message ?? 'unknown error'}`, { cause: err }),
        );
      else resolve(zf);
    };
    if (typeof zip === 'string') yauzl.open(zip, options, done);
    else yauzl.fromBuffer(zip, options, done);
  });
}

/**
 * Rejects entry names an unpacker would place outside its target or that cannot be hashed:
 * absolute paths, drive letters, `..` components, backslashes, NUL, newlines, invalid UTF-8.
 */
function entryName(raw: Buffer): string {
  const name = raw.toString('utf8');
  if (!Buffer.from(name, 'utf8').equals(raw)) {
    throw new PackageHashError(`zip entry name ${JSON.stringify(name)} is not valid UTF-8`);
  }
  if (name === '') throw new PackageHashError('zip entry with an empty name');
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) {
    throw new PackageHashError(`zip entry ${JSON.stringify(name)} has an absolute path`);
  }
  if (name.includes('\\'))
    throw new PackageHashError(`zip entry ${JSON.stringify(name)} contains a backslash`);
  if (name.includes('\0'))
    throw new PackageHashError(`zip entry ${JSON.stringify(name)} contains a NUL byte`);
  if (name.includes('\n')) throw new PackageHashError(`zip entry ${JSON.stringify(name)} contains a newline`);
  if (name.split('/').includes('..')) {
    throw new PackageHashError(`zip entry ${JSON.stringify(name)} escapes the package directory ("..")`);
  }
  return name;
}

/** Where an entry lands when the zip is unpacked (`./a//b` → `a/b`, directories without `/`). */
function unpackedName(name: string): string {
  return name
    .split('/')
    .filter((p) => p !== '' && p !== '.')
    .join('/');
}

/**
 * Hashes a provider package zip (a path or its bytes): `h1` (as unpacked), `h1Packed` (HashZip) and
 * `zh`. Rejects entries with `..`, absolute paths, backslashes or duplicate names.
 */
export async function hashZip(zip: Buffer | string, options: ZipHashOptions = {}): Promise<ZipHashes> {
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const maxBytes = options.maxUncompressedBytes ?? DEFAULT_MAX_BYTES;
  const zhPromise =
    typeof zip === 'string'
      ? sha256OfStream(createReadStream(zip), Number.MAX_SAFE_INTEGER, zip).then((r) => r.hex)
      : Promise.resolve(createHash('sha256').update(zip).digest('hex'));
  const zf = await openZip(zip);
  if (zf.entryCount > maxEntries) {
    zf.close();
    throw new PackageHashError(`zip has ${zf.entryCount} entries, more than the limit of ${maxEntries}`);
  }
  const entries: ZipEntryHash[] = [];
  const seen = new Set<string>();
  let total = 0;
  await new Promise<void>((resolve, reject) => {
    let failed = false;
    const fail = (err: unknown): void => {
      if (failed) return;
      failed = true;
      zf.close();
      reject(
        err instanceof PackageHashError
          ? err
          : new PackageHashError(`corrupt zip: ${String(err)}`, { cause: err }),
      );
    };
    zf.on('error', (err: Error) => fail(new PackageHashError(`corrupt zip: ${err.message}`, { cause: err })));
    zf.on('end', () => {
      if (!failed) resolve();
    });
    zf.on('entry', (entry: yauzl.Entry) => {
      let name: string;
      try {
        name = entryName(entry.fileNameRaw ?? Buffer.from(entry.fileName));
      } catch (err) {
        fail(err);
        return;
      }
      if (seen.has(name)) {
        fail(new PackageHashError(`zip has two entries named ${JSON.stringify(name)}`));
        return;
      }
      seen.add(name);
      if (entry.isEncrypted()) {
        fail(new PackageHashError(`zip entry ${JSON.stringify(name)} is encrypted`));
        return;
      }
      zf.openReadStream(entry, (err, stream) => {
        if (err || !stream) {
          fail(
            new PackageHashError(`cannot read zip entry ${JSON.stringify(name)}: ${err?.message}`, {
              cause: err,
            }),
          );
          return;
        }
        sha256OfStream(stream, maxBytes - total, `zip entry ${JSON.stringify(name)}`).then(
          ({ hex, bytes }) => {
            total += bytes;
            entries.push({ name, directory: name.endsWith('/'), sha256: hex, size: bytes });
            zf.readEntry();
          },
          (e: unknown) =>
            fail(
              e instanceof PackageHashError && /larger than the limit/.test(e.message)
                ? new PackageHashError(`zip content is larger than the limit of ${maxBytes} bytes`, {
                    cause: e,
                  })
                : e,
            ),
        );
      });
    });
    zf.readEntry();
  });

  const h1Packed = hashEntries(entries.map((e) => ({ path: e.name, sha256: e.sha256 })));
  const unpacked = new Map<string, string>();
  const dirs = new Set<string>();
  for (const e of entries) {
    const target = unpackedName(e.name);
    const parts = target.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
    if (e.directory || target === '') {
      if (target !== '') dirs.add(target);
      continue;
    }
    if (unpacked.has(target)) {
      throw new PackageHashError(
        `zip entries ${JSON.stringify(e.name)} and another one unpack to the same file`,
      );
    }
    unpacked.set(target, e.sha256);
  }
  for (const file of unpacked.keys()) {
    if (dirs.has(file))
      throw new PackageHashError(`zip entry ${JSON.stringify(file)} is both a file and a directory`);
  }
  const h1 = hashEntries([...unpacked].map(([p, sha256]) => ({ path: p, sha256 })));
  return { h1, h1Packed, zh: `zh:${await zhPromise}`, entries };
}

/**
 * h1 of an unpacked package directory on disk (dirhash `HashDir(dir, "", Hash1)`): every regular
 * file below it, paths relative to it. Symbolic links to files count as the file they point to
 * (Go opens them); a link to a directory or any other special file is an error.
 */
export async function hashDirectory(dir: string): Promise<string> {
  let root: string;
  try {
    root = await fsp.realpath(dir);
    const st = await fsp.stat(root);
    if (!st.isDirectory()) throw new PackageHashError(`${dir} is not a directory`);
  } catch (err) {
    if (err instanceof PackageHashError) throw err;
    throw new PackageHashError(`cannot read package directory ${dir}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const files: { path: string; sha256: string }[] = [];
  const walk = async (abs: string, rel: string): Promise<void> => {
    const names = (await fsp.readdir(abs)).sort(compareUtf8);
    for (const name of names) {
      const childAbs = path.join(abs, name);
      const childRel = rel === '' ? name : `${rel}/${name}`;
      const lst = await fsp.lstat(childAbs);
      if (lst.isDirectory()) {
        await walk(childAbs, childRel);
        continue;
      }
      const st = lst.isSymbolicLink() ? await fsp.stat(childAbs) : lst;
      if (!st.isFile()) {
        throw new PackageHashError(`${childRel} in ${dir} is not a regular file`);
      }
      const { hex } = await sha256OfStream(createReadStream(childAbs), Number.MAX_SAFE_INTEGER, childRel);
      files.push({ path: childRel, sha256: hex });
    }
  };
  try {
    await walk(root, '');
  } catch (err) {
    if (err instanceof PackageHashError) throw err;
    throw new PackageHashError(`cannot read package directory ${dir}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return hashEntries(files);
}

/**
 * The checksums `terraform init` would record for a package: for a directory its `h1:`; for a zip
 * the `h1:` of its unpacked content and its `zh:` (plus `h1Packed` when directory entries make the
 * packed form differ). This is `tfguard hash <zip|dir>`.
 */
export async function hashPackage(
  target: string,
  options: ZipHashOptions = {},
): Promise<{ h1: string; zh?: string; h1Packed?: string }> {
  let st;
  try {
    st = await fsp.stat(target);
  } catch (err) {
    throw new PackageHashError(`cannot read ${target}: ${(err as Error).message}`, { cause: err });
  }
  if (st.isDirectory()) return { h1: await hashDirectory(target) };
  const z = await hashZip(target, options);
  return z.h1Packed === z.h1 ? { h1: z.h1, zh: z.zh } : { h1: z.h1, zh: z.zh, h1Packed: z.h1Packed };
}

/** `h1:` + standard base64 (padded) of exactly 32 bytes. */
export function isWellFormedH1(hash: string): boolean {
  if (!/^h1:[A-Za-z0-9+/]{43}=$/.test(hash)) return false;
  const b64 = hash.slice(3);
  return Buffer.from(b64, 'base64').toString('base64') === b64;
}

/** `zh:` + 64 lowercase hex digits. */
export function isWellFormedZh(hash: string): boolean {
  return /^zh:[0-9a-f]{64}$/.test(hash);
}
