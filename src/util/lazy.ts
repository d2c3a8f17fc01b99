/**
 * The one module that loads code on first use (a dynamic `import()`): everything else imports
 * statically, and lint fails a dynamic import or `require()` anywhere else (`tfguard/layers` in
 * scripts/eslint-architecture.mjs, docs/architecture.md). Each loader says why it is deferred.
 */
import type * as openpgp from 'openpgp';

/** Memoises an asynchronous loader: the first call starts it, later calls share its promise. */
export function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => (loaded ??= load());
}

/** openpgp.js: only a registry cross-check of signed `SHA256SUMS` needs it (src/lockfile/signature.ts),
 * and evaluating it costs tens of milliseconds of every cold start (CLI runs, Lambda initialisation). */
export const loadOpenpgp: () => Promise<typeof openpgp> = onFirstUse(() => import('openpgp'));

/** node:child_process: only a policy scan of a directory runs `git` (the CLI's repository name from
 * the remote), and loading it costs about 4 ms of every cold start. */
export const loadChildProcess: () => Promise<typeof import('node:child_process')> = onFirstUse(
  () => import('node:child_process'),
);
