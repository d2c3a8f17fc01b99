/**
 * The service core: pure functions over `ObjectStore` and the storage ports; the Lambda handlers in
 * `handlers/` only adapt events to these and wire the AWS adapters in.
 */
export { loadServiceSettings, SettingsError, type ServiceSettings, type BucketLocation } from './settings';
export {
  parseAccessPolicy,
  mayRead,
  mayWrite,
  AccessPolicyError,
  type AccessPolicy,
  type Caller,
} from './access';
export {
  ReportLayout,
  AuditRunLayout,
  uploadScanId,
  apiScanId,
  normalizeRepository,
  repositoryKey,
  repositoryFromKey,
  auditRunId,
  SCAN_ID_PATTERN,
  UPLOAD_ID_PATTERN,
  type UploadRef,
  type ReportKeys,
} from './keys';
export {
  parseS3Event,
  decodeS3EventKey,
  encodeS3EventKey,
  repositoryForUpload,
  ARCHIVE_SUFFIXES,
} from './uploads';
export {
  scanAndStore,
  loadScan,
  readLatest,
  type LatestPointer,
  type RejectedRecord,
  type StoredScan,
} from './scans';
export {
  processUploadEvent,
  processUploadRecord,
  UploadBatchError,
  type UploadOutcome,
  type UploadScanDeps,
} from './upload-scan';
export {
  apiRequestFromEvent,
  toHttpResult,
  handleApi,
  createScan,
  createUpload,
  getScan,
  ApiError,
  type ApiDeps,
  type ApiRequest,
  type ApiResponse,
} from './api';
export {
  startAudit,
  processAuditMessage,
  parseAuditMessage,
  auditRepository,
  listRepositories,
  AuditMessageError,
  type AuditDeps,
  type AuditMessage,
  type AuditManifest,
  type AuditLatestPointer,
} from './audit';
export {
  runLocalAudit,
  type LocalArchive,
  type LocalAuditOptions,
  type LocalAuditResult,
} from './local-audit';
export {
  buildSummary,
  renderSummaryMarkdown,
  type AuditSummary,
  type RepositoryEntry,
  type RepositoryResult,
  type ProviderSkew,
  type FindingRef,
} from './summary';
export { invocationDeadline, deadlineMargin, isScanTimeout, MAX_MARGIN_SHARE } from './deadline';
export { silentLogger, noMetrics, type ServiceLogger, type ServiceMetrics } from './observability';
export {
  buildFleet,
  parseFleetData,
  behind,
  type FleetData,
  type FleetRepository,
  type FleetProvider,
  type Behind,
} from './fleet';
export { renderFleetHtml, FLEET_CSP } from './fleet-html';
