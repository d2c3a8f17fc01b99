/**
 * Errors of the tfguard core. An `InputError` means the input as a whole is unusable (a rejected
 * archive, an unreadable config file, bad CLI usage): no report is produced, the CLI exits 2 and the
 * service stores an "input rejected" report. Anything that only affects one file becomes a finding.
 *
 * `scan-timeout` is the one code that says nothing permanent about the input: the scan did not
 * finish before its deadline (`ScanOptions.timeoutMs` / `signal`). The CLI exits 2 as for any
 * `InputError`; the service never stores it as a rejection (a retry with more time may succeed).
 */

export type InputErrorCode =
  | 'not-found'
  | 'unsupported-format'
  | 'corrupt-archive'
  | 'truncated-archive'
  | 'empty-archive'
  | 'absolute-path'
  | 'path-traversal'
  | 'invalid-path'
  | 'link-outside'
  | 'unsupported-entry-type'
  | 'duplicate-entry'
  | 'too-many-entries'
  | 'file-too-large'
  | 'total-too-large'
  | 'compression-ratio'
  | 'path-too-long'
  | 'path-too-deep'
  | 'invalid-config'
  /** The organisation's policy file (`--policy FILE`, src/policy) cannot be parsed or has an
   * unknown or invalid setting: no scan runs, a policy is never applied in part. */
  | 'invalid-policy'
  | 'scan-timeout'
  /** Service only: an upload that does not match what `POST /uploads` bound its key to (the
   * repository or the uploader its metadata claims). */
  | 'upload-mismatch'
  /** Service only: an upload by a caller the access policy (`TFGUARD_ACCESS_POLICY`) does not allow
   * on its repository; nothing was read, the repository's `latest` pointer did not move. */
  | 'repository-not-allowed'
  | 'usage';

export class InputError extends Error {
  override readonly name = 'InputError';
  readonly code: InputErrorCode;
  /** The archive entry (or file) the error is about, when there is one. */
  readonly entry: string | undefined;

  constructor(code: InputErrorCode, message: string, options: { entry?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.entry = options.entry;
  }
}

export function isInputError(err: unknown): err is InputError {
  return err instanceof InputError;
}
