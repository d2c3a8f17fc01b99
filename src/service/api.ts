/**
 * Entry point 2, the pipeline API (HTTP API with IAM auth; the handlers only adapt the event):
 *
 *   POST /scans          archive in the body → the report, stored, with a pass/fail verdict (with
 *                          `fix=true` also the patch of every safe fix, stored beside the reports)
 *   POST /uploads        → a presigned POST (size, type and metadata bound) and, for older clients, a
 *                          presigned PUT URL, with an id, for archives too large for a request body
 *   GET  /scans/{id}     → the report (by scan id or upload id), 202 while an upload is pending
 *
 * Output format: `?format=json|sarif|markdown`, else the `Accept` header, else JSON. The JSON form
 * wraps the report: `{ scanId, status, verdict, failOn, repository, summary, reportInline,
 * reportKeys, reportUrls, reportUrlsExpireAt, report }` (and `patch` with `fix=true`); SARIF and
 * Markdown are the bare documents.
 * Every report response carries `x-tfguard-scan-id` and `x-tfguard-verdict` headers.
 *
 * Responses always fit Lambda's 6 MB response limit: the report is inlined only when the whole
 * Lambda response payload stays under `MAX_INLINE_RESPONSE_BYTES`; otherwise the JSON form says
 * `reportInline: false` with `report: null` (the verdict, the summary and short-lived presigned
 * links to the stored renderings are always there), and a SARIF or Markdown document that does not
 * fit is a `303 See Other` to its presigned link.
 *
 * Client mistakes get a specific 4xx with `{ error, message }`; anything else a generic 500 that
 * names only the request id (logged with the error).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { renderReport, verdict as verdictOf, CONTENT_TYPES } from '../report';
import type { FailOn, Report } from '../report/types';
import type { DownloadUrlSigner, UploadUrlSigner } from '../storage/ports';
import type { ObjectStore } from '../storage/types';
import { mayRead, mayWrite, type Caller } from './access';
import {
  SCAN_ID_PATTERN,
  UPLOAD_ID_PATTERN,
  apiScanId,
  normalizeRepository,
  type ReportKeys,
  type ReportLayout,
  type StoredFormat,
} from './keys';
import { isScanTimeout } from './deadline';
import { errorAttributes, type ServiceLogger, type ServiceMetrics } from './observability';
import {
  PENDING_GRACE_MS,
  UPLOAD_CONTENT_TYPES,
  UPLOAD_FORMATS,
  type UploadFormat,
  type UploadRequestRecord,
} from './requests';
import {
  loadScan,
  scanAndStore,
  storedMarkdownOptions,
  type RejectedRecord,
  type ScanContext,
} from './scans';
import { SettingsError, parseFailOn, type ServiceSettings } from './settings';

export interface ApiRequest {
  method: string;
  /** Header names in lower case. */
  headers: Record<string, string | undefined>;
  query: Record<string, string | undefined>;
  pathParameters: Record<string, string | undefined>;
  body: Buffer | null;
  requestId: string | undefined;
  /** The caller's IAM ARN, from API Gateway's IAM authorizer; undefined without one. */
  caller?: string | undefined;
  /** The caller's principal id, `AWS:` + the IAM authorizer's `userId` (`AWS:AROA…:<session>`);
   * what an S3 event names a direct writer by. Undefined without an IAM authorizer. */
  callerPrincipalId?: string | undefined;
}

export interface ApiResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export interface ApiDeps {
  settings: Pick<
    ServiceSettings,
    | 'uploads'
    | 'failOn'
    | 'scanRegistry'
    | 'apiMaxBodyBytes'
    | 'uploadUrlTtlSeconds'
    | 'reportUrlTtlSeconds'
    | 'maxArchiveBytes'
  > &
    Partial<Pick<ServiceSettings, 'accessPolicy'>>;
  reports: ObjectStore;
  layout: ReportLayout;
  scanOptions: ScanContext['scanOptions'];
  logger: ServiceLogger;
  metrics: ServiceMetrics;
  /** The invocation's deadline (`POST /scans` stops its scan when it fires: 504, nothing stored). */
  signal?: AbortSignal | undefined;
  /** Presigns upload URLs (the uploads bucket); needed by `createUpload` only. */
  signer?: UploadUrlSigner;
  /** Presigns report links (the reports bucket); needed by `createScan` and `getScan`. */
  reportSigner?: DownloadUrlSigner;
  now?: () => Date;
  newId?: () => string;
  /** The organisation's policy (`TFGUARD_POLICY_OBJECT`), asked for before each scan. */
  policy?: ScanContext['policy'];
}

/** A client error: becomes a 4xx response with this code and message. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Adapts an HTTP API (payload v2) event. */
export function apiRequestFromEvent(event: APIGatewayProxyEventV2): ApiRequest {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
  let body: Buffer | null = null;
  if (event.body !== undefined && event.body !== null) {
    body = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  }
  return {
    method: event.requestContext?.http?.method ?? 'GET',
    headers,
    query: { ...(event.queryStringParameters ?? {}) },
    pathParameters: { ...(event.pathParameters ?? {}) },
    body,
    requestId: event.requestContext?.requestId,
    caller: iamField(event, 'userArn'),
    callerPrincipalId: ((id) => (id === undefined ? undefined : `AWS:${id}`))(iamField(event, 'userId')),
  };
}

/**
 * A field of `requestContext.authorizer.iam`, which API Gateway's IAM authorizer sets (SigV4 auth):
 * `userArn`, `userId`. (Session tags and an OIDC token's claims, such as GitHub's `sub`, are not
 * among them: API Gateway does not pass them on.)
 */
function iamField(event: APIGatewayProxyEventV2, name: 'userArn' | 'userId'): string | undefined {
  const iam = (event.requestContext as { authorizer?: { iam?: Record<string, unknown> } } | undefined)
    ?.authorizer?.iam;
  const value = iam?.[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The caller of a request, as the access policy knows callers. */
export function requestCaller(request: ApiRequest): Caller {
  return { arn: request.caller ?? null, principalId: request.callerPrincipalId ?? null };
}

/**
 * Refuses a scan or upload of `repository` by a caller the access policy does not allow on it
 * (403 `repository-not-allowed`), before anything is read or stored. A multi-tenant install also
 * needs a repository: a scan that names none would belong to nobody.
 */
function assertMayWrite(deps: ApiDeps, request: ApiRequest, repository: string | null): void {
  const policy = deps.settings.accessPolicy;
  if (policy === null || policy === undefined) return;
  if (repository === null) {
    throw new ApiError(
      400,
      'missing-repository',
      'a repository name is required: this service assigns repositories to callers (name it with ' +
        'the repository query parameter or the x-tfguard-repository header)',
    );
  }
  if (!mayWrite(policy, requestCaller(request), repository)) {
    throw new ApiError(
      403,
      'repository-not-allowed',
      `caller ${JSON.stringify(request.caller ?? request.callerPrincipalId ?? null)} may not scan or ` +
        `upload archives of repository ${JSON.stringify(repository)}; the operator's access policy ` +
        '(TFGUARD_ACCESS_POLICY) names the repositories of each caller',
    );
  }
}

/** The answer to a read of something the caller may not see: exactly that of an unknown id. */
function notFound(message: string): ApiError {
  return new ApiError(404, 'not-found', message);
}

export function toHttpResult(response: ApiResponse): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: response.statusCode,
    headers: response.headers,
    body: response.body,
    isBase64Encoded: false,
  };
}

const JSON_TYPE = 'application/json';

function json(statusCode: number, value: unknown, headers: Record<string, string> = {}): ApiResponse {
  return {
    statusCode,
    headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store', ...headers },
    body: JSON.stringify(value, null, 2) + '\n',
  };
}

/** The 500 of the API: names only the request id, under which the error is logged. */
export function internalError(requestId: string | undefined): ApiResponse {
  return json(500, {
    error: 'internal',
    message: 'internal error',
    ...(requestId ? { requestId } : {}),
  });
}

/**
 * Runs an API operation: `ApiError` → its 4xx; anything else → a 500 that leaks nothing. Every log
 * line of the request carries its API Gateway `requestId` (the id a 500 returns), the error line of
 * a 500 included.
 */
export async function handleApi(
  deps: Pick<ApiDeps, 'logger'>,
  request: ApiRequest,
  operation: (request: ApiRequest) => Promise<ApiResponse>,
): Promise<ApiResponse> {
  const requestId = request.requestId;
  if (requestId) deps.logger.appendKeys?.({ requestId });
  try {
    return await operation(request);
  } catch (err) {
    if (err instanceof ApiError) {
      deps.logger.info('request refused', {
        statusCode: err.statusCode,
        code: err.code,
        reason: err.message,
      });
      return json(err.statusCode, { error: err.code, message: err.message });
    }
    deps.logger.error('request failed', { requestId, ...errorAttributes(err) });
    return internalError(requestId);
  } finally {
    if (requestId) deps.logger.removeKeys?.(['requestId']);
  }
}

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

const ACCEPT_TYPES: Record<string, StoredFormat> = {
  'application/json': 'json',
  'application/sarif+json': 'sarif',
  'text/markdown': 'markdown',
};
const FORMATS: readonly StoredFormat[] = ['json', 'sarif', 'markdown'];

function chooseFormat(request: ApiRequest): StoredFormat {
  const asked = request.query.format;
  if (asked !== undefined) {
    const format = asked.trim().toLowerCase();
    if ((FORMATS as readonly string[]).includes(format)) return format as StoredFormat;
    throw new ApiError(
      400,
      'bad-format',
      `format must be one of ${FORMATS.join(', ')}, got ${JSON.stringify(asked)}`,
    );
  }
  const accept = request.headers.accept;
  if (accept === undefined || accept.trim() === '') return 'json';
  const ranges = accept
    .split(',')
    .map((part) => {
      const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
      const q = params.find((p) => p.startsWith('q='));
      return { type, q: q === undefined ? 1 : Number(q.slice(2)) };
    })
    .filter((r) => r.type !== '' && r.q > 0)
    .sort((a, b) => b.q - a.q);
  for (const range of ranges) {
    if (range.type in ACCEPT_TYPES) return ACCEPT_TYPES[range.type]!;
    if (range.type === '*/*' || range.type === 'application/*') return 'json';
    if (range.type === 'text/*') return 'markdown';
  }
  throw new ApiError(
    406,
    'not-acceptable',
    `cannot produce ${JSON.stringify(accept)}; available: ${Object.keys(ACCEPT_TYPES).join(', ')}`,
  );
}

function chooseFailOn(request: ApiRequest, fallback: FailOn): FailOn {
  const raw = request.query.failOn ?? request.query.fail_on ?? request.headers['x-tfguard-fail-on'];
  if (raw === undefined) return fallback;
  try {
    return parseFailOn(raw, 'failOn');
  } catch (err) {
    if (err instanceof SettingsError) throw new ApiError(400, 'bad-fail-on', err.message);
    throw err;
  }
}

/** `fix=true` (query) or `x-tfguard-fix: true`: also return and store the patch of every safe fix. */
function chooseFix(request: ApiRequest): boolean {
  const raw = request.query.fix ?? request.headers['x-tfguard-fix'];
  if (raw === undefined) return false;
  const value = raw.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0' || value === '') return false;
  throw new ApiError(400, 'bad-fix', `fix must be true or false, got ${JSON.stringify(raw)}`);
}

function chooseRepository(raw: string | undefined, required: boolean): string | null {
  if (raw === undefined || raw.trim() === '') {
    if (required) throw new ApiError(400, 'missing-repository', 'a repository name is required');
    return null;
  }
  const repository = normalizeRepository(raw);
  if (repository === null) {
    throw new ApiError(
      400,
      'bad-repository',
      `unusable repository name ${JSON.stringify(raw)}: use up to 256 bytes of "/"-separated names, ` +
        'without "." or ".." segments, control characters or backslashes',
    );
  }
  return repository;
}

const ARCHIVE_TYPES: Record<string, string> = {
  'application/gzip': '.tar.gz',
  'application/x-gzip': '.tar.gz',
  'application/x-compressed-tar': '.tar.gz',
  'application/x-tar': '.tar',
  'application/x-gtar': '.tar',
  'application/zip': '.zip',
  'application/x-zip-compressed': '.zip',
  'application/octet-stream': '',
};

function mediaType(request: ApiRequest): string | undefined {
  return request.headers['content-type']?.split(';')[0]?.trim().toLowerCase() || undefined;
}

// eslint-disable-next-line no-control-regex
const BAD_NAME = /[\u0000-\u001f\u007f/\\]/;

function archiveName(request: ApiRequest, extension: string): string {
  const raw = request.query.name ?? request.headers['x-tfguard-archive-name'];
  if (raw === undefined || raw.trim() === '') return `archive${extension}`;
  const name = raw.trim();
  if (BAD_NAME.test(name) || Buffer.byteLength(name) > 255) {
    throw new ApiError(400, 'bad-name', `unusable archive name ${JSON.stringify(raw)}`);
  }
  return name;
}

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

/**
 * Lambda refuses a synchronous response payload over 6 MB (6,291,556 bytes): API Gateway then
 * answers 502 and the caller gets nothing.
 */
export const LAMBDA_RESPONSE_LIMIT_BYTES = 6_291_556;

/**
 * The largest Lambda response payload that inlines a report, measured the way Lambda measures it:
 * the serialized HTTP API result object (status, headers and the body string, whose quotes and
 * newlines JSON-escaping lengthens once more; UTF-8 bytes). 4,000,000 bytes leaves a third of
 * Lambda's limit spare, so even a body API Gateway had to carry base64-encoded (4/3 larger:
 * 5,333,334 bytes) would still fit.
 */
export const MAX_INLINE_RESPONSE_BYTES = 4_000_000;

/** Bytes of the payload Lambda returns for `response` (see `MAX_INLINE_RESPONSE_BYTES`). */
export function lambdaPayloadBytes(response: ApiResponse): number {
  return Buffer.byteLength(JSON.stringify(toHttpResult(response)), 'utf8');
}

/** A complete scan, as a report response needs it. */
interface CompleteScan {
  scanId: string;
  repository: string | null;
  report: Report;
  keys: ReportKeys;
  /** Size of the stored JSON report when known (a report larger than the limit is not inlined). */
  bytes?: number;
  /** The fixes as a unified diff, when the request asked for them (`fix=true`). */
  patch?: string;
}

interface ReportLinks {
  urls: Record<StoredFormat, string> & { patch?: string };
  expiresAt: string;
}

async function reportLinks(deps: ApiDeps, keys: ReportKeys): Promise<ReportLinks> {
  const signer = deps.reportSigner;
  if (signer === undefined) throw new Error('report responses need a report URL signer');
  const ttl = deps.settings.reportUrlTtlSeconds;
  const now = (deps.now ?? (() => new Date()))();
  const [json, sarif, markdown, patch] = await Promise.all(
    [keys.json, keys.sarif, keys.markdown, ...(keys.patch !== undefined ? [keys.patch] : [])].map((key) =>
      signer.presignGet(key, { expiresInSeconds: ttl }),
    ),
  );
  return {
    urls: { json: json!, sarif: sarif!, markdown: markdown!, ...(patch !== undefined ? { patch } : {}) },
    expiresAt: new Date(now.getTime() + ttl * 1000).toISOString(),
  };
}

async function reportResponse(
  deps: ApiDeps,
  scan: CompleteScan,
  format: StoredFormat,
  failOn: FailOn,
  extra: Record<string, unknown> = {},
): Promise<ApiResponse> {
  const { report, scanId, repository } = scan;
  const verdict = verdictOf(report, failOn);
  const headers = {
    'cache-control': 'no-store',
    'x-tfguard-scan-id': scanId,
    'x-tfguard-verdict': verdict,
    'x-tfguard-fail-on': failOn,
  };
  const links = await reportLinks(deps, scan.keys);
  const envelope = {
    ...extra,
    scanId,
    status: 'complete',
    verdict,
    failOn,
    repository,
    summary: report.summary,
    reportKeys: scan.keys,
    reportUrls: links.urls,
    reportUrlsExpireAt: links.expiresAt,
  };
  if (format === 'json') {
    // The patch is inlined before the report: it is what a fix request is for. Either that does not
    // fit is left out (null) and one download away (reportUrls).
    const attempts: Record<string, unknown>[] =
      scan.patch === undefined ? [{}] : [{ patch: scan.patch }, { patch: null }];
    let linked: ApiResponse | undefined;
    for (const patch of attempts) {
      // A stored JSON report already larger than the limit is not even serialized again.
      if (scan.bytes === undefined || scan.bytes <= MAX_INLINE_RESPONSE_BYTES) {
        const inline = json(200, { ...envelope, ...patch, reportInline: true, report }, headers);
        if (lambdaPayloadBytes(inline) <= MAX_INLINE_RESPONSE_BYTES) return inline;
      }
      linked = json(200, { ...envelope, ...patch, reportInline: false, report: null }, headers);
      if (lambdaPayloadBytes(linked) <= MAX_INLINE_RESPONSE_BYTES) return linked;
    }
    return linked as ApiResponse;
  }
  const document: ApiResponse = {
    statusCode: 200,
    headers: { 'content-type': CONTENT_TYPES[format], ...headers },
    body: renderReport(report, format, storedMarkdownOptions(scan.keys, repository)),
  };
  if (lambdaPayloadBytes(document) <= MAX_INLINE_RESPONSE_BYTES) return document;
  // The bare document cannot be the body: send the caller to the stored copy.
  return json(
    303,
    {
      ...envelope,
      reportInline: false,
      report: null,
      message:
        `the ${format} report is larger than the ${MAX_INLINE_RESPONSE_BYTES} bytes a response can carry; ` +
        'download it from reportUrls (the location header) before reportUrlsExpireAt',
    },
    { ...headers, location: links.urls[format] },
  );
}

function rejectedResponse(record: RejectedRecord, extra: Record<string, unknown> = {}): ApiResponse {
  return json(
    422,
    {
      ...extra,
      ...(record.source.kind !== 'local' ? { uploadedBy: record.source.uploadedBy ?? null } : {}),
      scanId: record.scanId,
      status: 'rejected',
      error: 'input-rejected',
      message: record.error.message,
      code: record.error.code,
      entry: record.error.entry,
    },
    { 'x-tfguard-scan-id': record.scanId },
  );
}

// ---------------------------------------------------------------------------------------------
// Operations
// ---------------------------------------------------------------------------------------------

/** `POST /scans`: scan the archive in the body synchronously. */
export async function createScan(deps: ApiDeps, request: ApiRequest): Promise<ApiResponse> {
  const type = mediaType(request);
  if (type === undefined || !(type in ARCHIVE_TYPES)) {
    throw new ApiError(
      415,
      'unsupported-media-type',
      `send the archive with Content-Type ${Object.keys(ARCHIVE_TYPES).join(', ')}` +
        (type === undefined ? '' : `, not ${type}`),
    );
  }
  const body = request.body;
  if (body === null || body.length === 0)
    throw new ApiError(400, 'empty-body', 'the request body (the archive) is empty');
  if (body.length > deps.settings.apiMaxBodyBytes) {
    throw new ApiError(
      413,
      'body-too-large',
      `the archive is ${body.length} bytes; at most ${deps.settings.apiMaxBodyBytes} bytes can be posted, ` +
        'use POST /uploads for larger archives',
    );
  }
  const format = chooseFormat(request);
  const failOn = chooseFailOn(request, deps.settings.failOn);
  const repository = chooseRepository(
    request.query.repository ?? request.headers['x-tfguard-repository'],
    false,
  );
  assertMayWrite(deps, request, repository);
  const name = archiveName(request, ARCHIVE_TYPES[type]!);
  const fix = chooseFix(request);
  const sha256 = createHash('sha256').update(body).digest('hex');
  const scanId = apiScanId(repository, sha256);
  deps.logger.appendKeys?.({ scanId, ...(repository !== null ? { repository } : {}) });
  let outcome;
  try {
    outcome = await scanAndStore(deps, {
      scanId,
      name,
      bytes: body,
      repository,
      registry: deps.settings.scanRegistry,
      source: { kind: 'api', name, sha256, size: body.length, uploadedBy: request.caller ?? null },
      ...(fix ? { fix } : {}),
    });
  } catch (err) {
    // Not the client's fault and not a property of the archive: nothing was stored, no report.
    if (isScanTimeout(err)) {
      return json(
        504,
        {
          scanId,
          status: 'timed-out',
          error: 'scan-timeout',
          message:
            `${err.message}. Nothing was stored; retry, or use POST /uploads, ` +
            'whose scans have more time.',
        },
        { 'x-tfguard-scan-id': scanId },
      );
    }
    throw err;
  }
  if (outcome.status === 'rejected') return rejectedResponse(outcome.record);
  return reportResponse(
    deps,
    {
      scanId,
      repository,
      report: outcome.report,
      keys: outcome.keys,
      ...(outcome.patch !== undefined ? { patch: outcome.patch } : {}),
    },
    format,
    failOn,
    { uploadedBy: request.caller ?? null },
  );
}

interface UploadRequestBody {
  repository?: unknown;
  format?: unknown;
  failOn?: unknown;
}

function uploadParameters(request: ApiRequest): { repository?: string; format?: string; failOn?: string } {
  const fromQuery = {
    repository: request.query.repository,
    format: request.query.format,
    failOn: request.query.failOn,
  };
  const body = request.body;
  if (body === null || body.length === 0) return fromQuery;
  if (mediaType(request) !== JSON_TYPE) {
    throw new ApiError(415, 'unsupported-media-type', 'the POST /uploads body must be application/json');
  }
  let parsed: UploadRequestBody;
  try {
    parsed = JSON.parse(body.toString('utf8')) as UploadRequestBody;
  } catch {
    throw new ApiError(400, 'bad-json', 'the request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ApiError(400, 'bad-json', 'the request body must be a JSON object');
  }
  const field = (name: keyof UploadRequestBody): string | undefined => {
    const value = parsed[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') throw new ApiError(400, 'bad-json', `"${name}" must be a string`);
    return value;
  };
  return {
    repository: field('repository') ?? fromQuery.repository,
    format: field('format') ?? fromQuery.format,
    failOn: field('failOn') ?? fromQuery.failOn,
  };
}

/**
 * `POST /uploads`: an upload of `<uploads prefix><repository>/<id>.<format>`, bound to the
 * repository and the caller's IAM principal (recorded in the request record, which the upload scan
 * checks the object against). Two ways to send it: `post`, a presigned POST the store itself
 * refuses unless the size is within `TFGUARD_MAX_ARCHIVE_BYTES`, the `Content-Type` is the format's
 * and the metadata is the bound repository and caller; and `upload`, the presigned PUT of earlier
 * versions, which S3 does not constrain (the upload scan refuses an oversize or mismatched object
 * before reading it).
 */
export async function createUpload(deps: ApiDeps, request: ApiRequest): Promise<ApiResponse> {
  if (deps.signer === undefined) throw new Error('createUpload needs an upload URL signer');
  const params = uploadParameters(request);
  const repository = chooseRepository(params.repository, true)!;
  assertMayWrite(deps, request, repository);
  const format = (params.format ?? 'tar.gz').trim().toLowerCase().replace(/^\./, '');
  if (!(UPLOAD_FORMATS as readonly string[]).includes(format)) {
    throw new ApiError(
      400,
      'bad-format',
      `format must be one of ${UPLOAD_FORMATS.join(', ')}, got ${JSON.stringify(params.format)}`,
    );
  }
  const failOn = chooseFailOn({ ...request, query: { failOn: params.failOn } }, deps.settings.failOn);
  const id = (deps.newId ?? randomUUID)();
  const key = `${deps.settings.uploads.prefix}${repository}/${id}.${format as UploadFormat}`;
  const now = (deps.now ?? (() => new Date()))();
  const ttl = deps.settings.uploadUrlTtlSeconds;
  const expiresAt = new Date(now.getTime() + ttl * 1000).toISOString();
  const uploadedBy = request.caller ?? null;
  const uploaderPrincipalId = request.callerPrincipalId ?? null;
  const maxBytes = deps.settings.maxArchiveBytes;
  const contentType = UPLOAD_CONTENT_TYPES[format as UploadFormat];
  const url = await deps.signer.presignPut(key, { expiresInSeconds: ttl });
  const post = await deps.signer.presignPost(key, {
    expiresInSeconds: ttl,
    maxBytes,
    contentType,
    metadata: { repository, ...(uploadedBy !== null ? { 'uploaded-by': uploadedBy } : {}) },
  });
  const record: UploadRequestRecord = {
    schemaVersion: 1,
    id,
    status: 'pending',
    repository,
    bucket: deps.settings.uploads.bucket,
    key,
    failOn,
    createdAt: now.toISOString(),
    expiresAt,
    uploadedBy,
    ...(uploaderPrincipalId !== null ? { uploaderPrincipalId } : {}),
    maxBytes,
    contentType,
  };
  await deps.reports.put(deps.layout.uploadRequest(id), JSON.stringify(record, null, 2) + '\n', {
    contentType: JSON_TYPE,
    metadata: { repository, ...(uploadedBy !== null ? { 'uploaded-by': uploadedBy } : {}) },
  });
  deps.logger.info('upload URL issued', { uploadId: id, repository, key, uploadedBy });
  return json(
    201,
    {
      id,
      status: 'pending',
      repository,
      key,
      uploadedBy,
      upload: { method: 'PUT', url, expiresAt },
      post: { method: 'POST', url: post.url, fields: post.fields, expiresAt, maxBytes, contentType },
      report: `/scans/${id}`,
    },
    { location: `/scans/${id}` },
  );
}

/** `GET /scans/{id}`: a stored report by scan id, or by upload id once that upload was scanned. */
export async function getScan(deps: ApiDeps, request: ApiRequest): Promise<ApiResponse> {
  const id = (request.pathParameters.id ?? '').trim().toLowerCase();
  const format = chooseFormat(request);
  if (SCAN_ID_PATTERN.test(id)) {
    const stored = await loadScan(deps, id);
    const owner =
      stored === null ? null : stored.status === 'rejected' ? stored.record.repository : stored.repository;
    // Knowing a scan id (they are computable) grants nothing: a scan of a repository the caller may
    // not read is answered exactly as one that does not exist.
    if (stored === null || !mayRead(deps.settings.accessPolicy, requestCaller(request), owner)) {
      throw notFound(`no scan ${id}`);
    }
    if (stored.status === 'rejected') return rejectedResponse(stored.record);
    const failOn = chooseFailOn(request, deps.settings.failOn);
    return reportResponse(deps, stored, format, failOn, { uploadedBy: stored.uploadedBy });
  }
  if (!UPLOAD_ID_PATTERN.test(id)) {
    throw new ApiError(400, 'bad-id', 'the id must be a scan id (32 hex digits) or an upload id (a UUID)');
  }
  const raw = await deps.reports.get(deps.layout.uploadRequest(id));
  if (raw === null) throw notFound(`no upload ${id}`);
  const record = JSON.parse(raw.body.toString('utf8')) as UploadRequestRecord;
  if (!mayRead(deps.settings.accessPolicy, requestCaller(request), record.repository)) {
    throw notFound(`no upload ${id}`);
  }
  if (record.status === 'pending' || record.scanId === undefined) {
    const now = (deps.now ?? (() => new Date()))();
    if (now.getTime() > Date.parse(record.expiresAt) + PENDING_GRACE_MS) {
      throw new ApiError(
        404,
        'upload-expired',
        `upload ${id} was never received and its URL expired at ${record.expiresAt}`,
      );
    }
    return json(
      202,
      {
        id,
        status: 'pending',
        repository: record.repository,
        uploadedBy: record.uploadedBy ?? null,
        expiresAt: record.expiresAt,
      },
      { 'retry-after': '5' },
    );
  }
  const stored = await loadScan(deps, record.scanId);
  if (stored === null) {
    // The request names a scan whose report is gone (deleted by a lifecycle rule).
    throw new ApiError(404, 'not-found', `the report of upload ${id} no longer exists`);
  }
  if (stored.status === 'rejected') return rejectedResponse(stored.record, { id });
  const failOn = chooseFailOn(request, record.failOn);
  return reportResponse(deps, { ...stored, repository: record.repository }, format, failOn, {
    id,
    uploadedBy: stored.uploadedBy ?? record.uploadedBy ?? null,
  });
}
