import type { ArchiveLimits } from '../model';

const MiB = 1024 * 1024;

/** Limits applied to every input unless the caller overrides them. */
export const DEFAULT_LIMITS: Readonly<ArchiveLimits> = Object.freeze({
  maxEntries: 20_000,
  maxTotalBytes: 200 * MiB,
  maxFileBytes: 10 * MiB,
  // Source code and lock files deflate to roughly 1:4..1:15; 200 leaves a wide margin for
  // repetitive generated files while a classic bomb (zeros, repeated blocks) is far beyond 1000.
  maxCompressionRatio: 200,
  maxPathLength: 4096,
  maxPathDepth: 64,
});

/**
 * The compression-ratio limit only applies once this many uncompressed bytes have been produced:
 * tiny inputs compress arbitrarily well (a 100 KiB file of spaces) without being a threat.
 */
export const RATIO_GRACE_BYTES = 1 * MiB;

/** Bytes a container may spend on headers, padding and metadata per allowed entry. */
const CONTAINER_OVERHEAD_PER_ENTRY = 4096;

export function resolveLimits(overrides: Partial<ArchiveLimits> | undefined): ArchiveLimits {
  const limits: ArchiveLimits = { ...DEFAULT_LIMITS };
  if (overrides) {
    for (const key of Object.keys(DEFAULT_LIMITS) as (keyof ArchiveLimits)[]) {
      const value = overrides[key];
      if (value === undefined) continue;
      if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
        throw new RangeError(`archive limit ${key} must be a non-negative number, got ${String(value)}`);
      }
      limits[key] = value;
    }
  }
  return limits;
}

/**
 * Upper bound for the raw container stream (the tar stream inside a gzip, the archive file itself):
 * the allowed content plus a bounded allowance for headers. Keeps a stream of empty tar blocks or
 * metadata-only entries from running forever even when the ratio limit is disabled.
 */
export function maxContainerBytes(limits: ArchiveLimits): number {
  return limits.maxTotalBytes + limits.maxEntries * CONTAINER_OVERHEAD_PER_ENTRY + MiB;
}

/** True when `outputBytes` produced from `inputBytes` compressed bytes exceeds the ratio limit. */
export function ratioExceeded(limits: ArchiveLimits, outputBytes: number, inputBytes: number): boolean {
  if (outputBytes <= RATIO_GRACE_BYTES) return false;
  return outputBytes > limits.maxCompressionRatio * Math.max(inputBytes, 1);
}
