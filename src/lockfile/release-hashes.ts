/**
 * What `terraform providers lock -platform=...` records for one provider release, gathered from the
 * registry so that tfguard can write the same lock entry (`tfguard fix`):
 *
 * - the version: for a provider not yet locked, the newest release the constraints allow
 *   (pre-releases only when pinned exactly), as `terraform init` selects it;
 * - `zh:` hashes: one per line of the release's `SHA256SUMS`, once its signature is verified
 *   (`RegistryClient.checkRelease`, the same authentication as the lock check): Terraform trusts every
 *   checksum of a signed sums file (`signatureAuthentication.AcceptableHashes`), not only the zips';
 * - `h1:` hashes, one per requested platform: from the OpenTofu registry's `packages` hashes when the
 *   download response offers them (and their `zh:` agrees with the signed sums), otherwise by
 *   downloading the platform's zip, checking its SHA-256 against the signed sums and hashing its
 *   content (`hashZip`). Downloads are streamed to a temporary file through SHA-256, stopped past a
 *   size limit, and their `h1:` is cached by the zip's SHA-256 (in memory, and in an `ObjectStore`
 *   when one is given), so one package is downloaded once however many roots lock it.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { maxSatisfying } from '../constraints';
import type { Engine } from '../model';
import type { ObjectStore } from '../storage/types';
import { hashZip, isWellFormedH1 } from './hash';
import { describeError } from './registry';
import type { RegistryClient } from './registry';

export interface ReleaseHashesOptions {
  client: RegistryClient;
  /** Where downloaded packages' `h1:` are kept, keyed by the zip's SHA-256. */
  cache?: ObjectStore;
  /** Key prefix in the cache (default `package-h1/v1/`). */
  cachePrefix?: string;
  /** Largest package zip downloaded, in bytes (default 1 GiB). */
  maxPackageBytes?: number;
  /** Time limit of one download, in ms (default 10 minutes). */
  downloadTimeoutMs?: number;
  /** Where downloads are staged (default the OS temporary directory). */
  tmpDir?: string;
  fetch?: typeof fetch;
}

export type Resolved<T> = ({ ok: true } & T) | { ok: false; reason: string };

export interface ReleaseHashes {
  /** Every hash to record: the `zh:` of each sums line and the `h1:` of each requested platform
   * the release has, unsorted. */
  hashes: string[];
  /** Requested platforms the release has no package for (no hash recorded for them). */
  unpublished: string[];
  /** Platforms whose `h1:` came from downloading the package (not from `packages` or the cache). */
  downloaded: string[];
}

/** Terraform's name of the platform this process runs on (`linux_amd64`, `darwin_arm64`, ...): the
 * one `terraform providers lock` records when given no `-platform`. */
export function currentPlatform(): string {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const arch = ({ x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm' } as Record<string, string>)[
    process.arch
  ];
  return `${os}_${arch ?? process.arch}`;
}

export const DEFAULT_MAX_PACKAGE_BYTES = 1024 * 1024 * 1024;
const DEFAULT_DOWNLOAD_TIMEOUT_MS = 10 * 60 * 1000;

export class ReleaseHashResolver {
  private readonly client: RegistryClient;
  private readonly cache: ObjectStore | undefined;
  private readonly cachePrefix: string;
  private readonly maxBytes: number;
  private readonly timeoutMs: number;
  private readonly tmpDir: string;
  private readonly fetchImpl: typeof fetch;
  private readonly h1ByZip = new Map<string, Promise<string>>();
  /** Version lists per provider, asked once per run however many roots need them. */
  private readonly versions = new Map<string, ReturnType<RegistryClient['availableVersions']>>();
  /** Packages downloaded (for tests of the cache and diagnostics). */
  downloads = 0;

  constructor(options: ReleaseHashesOptions) {
    this.client = options.client;
    this.cache = options.cache;
    this.cachePrefix = options.cachePrefix ?? 'package-h1/v1/';
    this.maxBytes = options.maxPackageBytes ?? DEFAULT_MAX_PACKAGE_BYTES;
    this.timeoutMs = options.downloadTimeoutMs ?? DEFAULT_DOWNLOAD_TIMEOUT_MS;
    this.tmpDir = options.tmpDir ?? os.tmpdir();
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** The version `terraform init` would lock for a provider not locked yet. Never throws. */
  async selectVersion(source: string, constraints: string): Promise<Resolved<{ version: string }>> {
    let pending = this.versions.get(source);
    if (pending === undefined) {
      pending = this.client.availableVersions(source);
      this.versions.set(source, pending);
    }
    const listed = await pending;
    if (listed.status !== 'ok') return { ok: false, reason: listed.reason };
    let version: string | null;
    try {
      version = maxSatisfying(
        listed.versions.map((v) => v.version),
        constraints === '' ? [] : constraints,
      );
    } catch (err) {
      return { ok: false, reason: `the registry lists an invalid version: ${describeError(err)}` };
    }
    if (version === null) {
      return {
        ok: false,
        reason: `the registry publishes no version of ${source} that ${constraints === '' ? 'exists' : `matches "${constraints}"`}`,
      };
    }
    return { ok: true, version };
  }

  /**
   * The hashes `terraform providers lock` records for `source` `version` on `platforms`, from a
   * release whose checksums are signed. Never throws.
   */
  async releaseHashes(
    source: string,
    version: string,
    engine: Engine,
    platforms: readonly string[],
  ): Promise<Resolved<ReleaseHashes>> {
    const outcome = await this.client.checkRelease({ source, version, engine, platforms });
    if (outcome.status !== 'verified') return { ok: false, reason: outcome.reason };
    if (outcome.trust === 'unsigned') {
      return {
        ok: false,
        reason: `the registry signs no checksums for ${source} ${version}, so tfguard records none`,
      };
    }
    const hashes = Object.values(outcome.sums).map((hex) => `zh:${hex}`);
    const unpublished: string[] = [];
    const downloaded: string[] = [];
    for (const platform of platforms) {
      const zh = outcome.platforms[platform];
      if (zh === undefined) {
        unpublished.push(platform);
        continue;
      }
      const offered = outcome.packages?.[platform];
      if (offered !== undefined && offered.includes(zh)) {
        const h1s = offered.filter(isWellFormedH1);
        if (h1s.length > 0) {
          hashes.push(...h1s);
          continue;
        }
      }
      const hex = zh.slice('zh:'.length);
      const known = this.h1ByZip.has(hex) || (await this.readCache(hex)) !== null;
      const h1 = await this.packageH1(source, version, platform, hex);
      if (!h1.ok) return h1;
      if (!known) downloaded.push(platform);
      hashes.push(h1.h1);
    }
    return { ok: true, hashes, unpublished, downloaded };
  }

  private cacheKey(hex: string): string {
    return `${this.cachePrefix}${hex}.json`;
  }

  private async readCache(hex: string): Promise<string | null> {
    if (this.cache === undefined) return null;
    try {
      const stored = await this.cache.get(this.cacheKey(hex));
      if (stored === null) return null;
      const rec = JSON.parse(stored.body.toString('utf8')) as { sha256?: unknown; h1?: unknown };
      return rec.sha256 === hex && typeof rec.h1 === 'string' && isWellFormedH1(rec.h1) ? rec.h1 : null;
    } catch {
      return null; // a broken cache entry means downloading again
    }
  }

  /** The `h1:` of the package whose zip has SHA-256 `hex`: cached, or downloaded and hashed. */
  private async packageH1(
    source: string,
    version: string,
    platform: string,
    hex: string,
  ): Promise<Resolved<{ h1: string }>> {
    let pending = this.h1ByZip.get(hex);
    if (pending === undefined) {
      pending = this.loadH1(source, version, platform, hex);
      this.h1ByZip.set(hex, pending);
      pending.catch(() => this.h1ByZip.delete(hex));
    }
    try {
      return { ok: true, h1: await pending };
    } catch (err) {
      return { ok: false, reason: describeError(err) };
    }
  }

  private async loadH1(source: string, version: string, platform: string, hex: string): Promise<string> {
    const cached = await this.readCache(hex);
    if (cached !== null) return cached;
    const where = await this.client.packageLocation(source, version, platform);
    if (where.status !== 'ok') throw new Error(where.reason);
    if (where.shasum !== hex) {
      throw new Error(
        `the registry's shasum for ${where.filename} (${where.shasum}) differs from the signed SHA256SUMS (${hex})`,
      );
    }
    const dir = await fsp.mkdtemp(path.join(this.tmpDir, 'tfguard-package-'));
    try {
      const file = path.join(dir, 'package.zip');
      const got = await this.download(where.url, file, `${source} ${version} ${platform}`);
      if (got !== hex) {
        throw new Error(
          `the package downloaded from ${where.url.href} has SHA-256 ${got}, not ${hex} as the signed SHA256SUMS says`,
        );
      }
      const { h1 } = await hashZip(file);
      if (this.cache !== undefined) {
        const rec = { schema: 1, sha256: hex, h1, source, version, platform };
        await this.cache
          .put(this.cacheKey(hex), JSON.stringify(rec), { contentType: 'application/json' })
          .catch(() => undefined); // best effort: the next run downloads again
      }
      return h1;
    } finally {
      await fsp.rm(dir, { recursive: true, force: true });
    }
  }

  /** Streams `url` into `file` through SHA-256, at most `maxBytes`; returns the lowercase hex. */
  private async download(url: URL, file: string, what: string): Promise<string> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    this.downloads++;
    try {
      let res: Response;
      try {
        res = await this.fetchImpl(url, { signal: controller.signal, redirect: 'follow' });
      } catch (err) {
        throw new Error(`cannot download ${what} from ${url.href}: ${describeError(err)}`, { cause: err });
      }
      if (!res.ok || res.body === null) {
        await res.body?.cancel().catch(() => undefined);
        throw new Error(`cannot download ${what}: ${url.href} answered ${res.status}`);
      }
      const declared = Number(res.headers.get('content-length') ?? '0');
      if (declared > this.maxBytes) {
        await res.body.cancel().catch(() => undefined);
        throw new Error(`the package of ${what} is larger than the limit of ${this.maxBytes} bytes`);
      }
      const hash = createHash('sha256');
      let size = 0;
      const limit = this.maxBytes;
      const meter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          size += chunk.length;
          if (size > limit) {
            done(new Error(`the package of ${what} is larger than the limit of ${limit} bytes`));
            return;
          }
          hash.update(chunk);
          done(null, chunk);
        },
      });
      try {
        await pipeline(
          Readable.fromWeb(res.body as unknown as WebReadableStream),
          meter,
          createWriteStream(file, { mode: 0o600 }),
        );
      } catch (err) {
        if (controller.signal.aborted) {
          throw new Error(`downloading ${what} took longer than ${this.timeoutMs} ms`, { cause: err });
        }
        throw err instanceof Error && err.message.includes('larger than the limit')
          ? err
          : new Error(`cannot download ${what} from ${url.href}: ${describeError(err)}`, { cause: err });
      }
      return hash.digest('hex');
    } finally {
      clearTimeout(timer);
    }
  }
}
