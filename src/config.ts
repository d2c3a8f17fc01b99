/**
 * The one module that reads `process.env`. Everything else receives settings as parameters, so the
 * core stays pure and testable. Each function reads the variables it documents, at call time.
 */
import type { HclParserSettings } from './scan/types';

export type ColorMode = 'always' | 'never' | 'auto';

/** `NO_COLOR` (https://no-color.org) disables colour, `FORCE_COLOR` forces it; otherwise colour is
 * used only on a TTY. */
export function colorMode(): ColorMode {
  const env = process.env;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 'never';
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '' && env.FORCE_COLOR !== '0') return 'always';
  return 'auto';
}

function positiveInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) {
    throw new Error(`environment variable ${name} must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** Parser tuning: `TFGUARD_PARSER_WORKERS`, `TFGUARD_PARSER_TIMEOUT_MS`. */
export function parserSettings(): HclParserSettings {
  const env = process.env;
  return {
    workers: positiveInt('TFGUARD_PARSER_WORKERS', env.TFGUARD_PARSER_WORKERS),
    timeoutMs: positiveInt('TFGUARD_PARSER_TIMEOUT_MS', env.TFGUARD_PARSER_TIMEOUT_MS),
  };
}

/** A snapshot of the environment for settings loaders that take it as a parameter. */
export function environment(): Readonly<Record<string, string | undefined>> {
  return { ...process.env };
}
