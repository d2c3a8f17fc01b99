import { loadServiceSettings, SettingsError } from '../../src/service/settings';

describe('loadServiceSettings', () => {
  test('defaults', () => {
    const s = loadServiceSettings({ TFGUARD_UPLOADS_BUCKET: 'tfguard-uploads', AWS_REGION: 'eu-west-1' });
    expect(s).toEqual({
      region: 'eu-west-1',
      uploads: { bucket: 'tfguard-uploads', prefix: 'uploads/' },
      reports: { bucket: 'tfguard-uploads', prefix: 'reports/' },
      s3: { endpoint: undefined, forcePathStyle: false },
      sqs: { endpoint: undefined },
      auditQueueUrl: undefined,
      failOn: 'error',
      scanRegistry: true,
      auditRegistry: true,
      registryHosts: {},
      remoteModules: true,
      moduleHosts: {},
      maxArchiveBytes: 50 * 1024 * 1024,
      apiMaxBodyBytes: 4_500_000,
      uploadUrlTtlSeconds: 900,
      reportUrlTtlSeconds: 900,
      auditMaxReceiveCount: 3,
      auditShardSize: undefined,
      deadlineMarginMs: 10_000,
      // No TFGUARD_ACCESS_POLICY: a single-tenant install.
      accessPolicy: null,
    });
  });

  test('every variable is read', () => {
    const s = loadServiceSettings({
      TFGUARD_UPLOADS_BUCKET: 'up-bucket',
      TFGUARD_UPLOADS_PREFIX: 'incoming',
      TFGUARD_REPORTS_BUCKET: 'rep-bucket',
      TFGUARD_REPORTS_PREFIX: '',
      TFGUARD_S3_ENDPOINT: 'http://127.0.0.1:4568',
      TFGUARD_SQS_ENDPOINT: 'http://127.0.0.1:9324',
      TFGUARD_AUDIT_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123/q',
      TFGUARD_FAIL_ON: 'Warning',
      TFGUARD_SCAN_REGISTRY: 'yes',
      TFGUARD_AUDIT_REGISTRY: 'off',
      TFGUARD_MAX_ARCHIVE_BYTES: '1000',
      TFGUARD_API_MAX_BODY_BYTES: '2000',
      TFGUARD_UPLOAD_URL_TTL_SECONDS: '60',
      TFGUARD_REPORT_URL_TTL_SECONDS: '120',
      TFGUARD_AUDIT_MAX_RECEIVE_COUNT: '5',
      TFGUARD_AUDIT_SHARD_SIZE: '25',
      TFGUARD_DEADLINE_MARGIN_MS: '2500',
      TFGUARD_REGISTRY_HOSTS: '{"Registry.Example.com": "https://mirror.example.com/tf/"}',
      TFGUARD_REMOTE_MODULES: 'off',
      TFGUARD_MODULE_HOSTS: '{"GitHub.com": "", "git.example.com": "https://git-mirror.example.com/"}',
    });
    expect(s.remoteModules).toBe(false);
    expect(s.moduleHosts).toEqual({ 'github.com': '', 'git.example.com': 'https://git-mirror.example.com' });
    expect(s.registryHosts).toEqual({ 'registry.example.com': 'https://mirror.example.com/tf' });
    expect(s.uploads).toEqual({ bucket: 'up-bucket', prefix: 'incoming/' });
    expect(s.reports).toEqual({ bucket: 'rep-bucket', prefix: '' });
    expect(s.s3).toEqual({ endpoint: 'http://127.0.0.1:4568', forcePathStyle: true });
    expect(s.sqs.endpoint).toBe('http://127.0.0.1:9324');
    expect(s.auditQueueUrl).toBe('https://sqs.eu-west-1.amazonaws.com/123/q');
    expect(s.failOn).toBe('warning');
    expect([s.scanRegistry, s.auditRegistry]).toEqual([true, false]);
    expect([
      s.maxArchiveBytes,
      s.apiMaxBodyBytes,
      s.uploadUrlTtlSeconds,
      s.reportUrlTtlSeconds,
      s.auditMaxReceiveCount,
      s.auditShardSize,
      s.deadlineMarginMs,
    ]).toEqual([1000, 2000, 60, 120, 5, 25, 2500]);
  });

  test.each([
    [{}, /TFGUARD_UPLOADS_BUCKET is required/],
    [{ TFGUARD_UPLOADS_BUCKET: 'Bad_Bucket' }, /not a valid bucket name/],
    // Reports under the uploads prefix would re-trigger scans.
    [
      { TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_UPLOADS_PREFIX: '', TFGUARD_REPORTS_PREFIX: 'reports/' },
      /overlap/,
    ],
    [{ TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_REPORTS_PREFIX: 'uploads/reports/' }, /overlap/],
    [{ TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_UPLOADS_PREFIX: '/abs' }, /must not start with/],
    [{ TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_UPLOADS_PREFIX: 'a/../b' }, /segment/],
    [{ TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_FAIL_ON: 'critical' }, /TFGUARD_FAIL_ON must be one of/],
    [{ TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_SCAN_REGISTRY: 'maybe' }, /true or false/],
    [
      { TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_REGISTRY_HOSTS: '["x"]' },
      /TFGUARD_REGISTRY_HOSTS must be a JSON object \(a map of hostname to base URL\)/,
    ],
    [
      { TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_REGISTRY_HOSTS: '{"a.b": "file:///etc"}' },
      /must be an http\(s\) URL/,
    ],
    [{ TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_MAX_ARCHIVE_BYTES: '10MB' }, /must be an integer/],
    [
      { TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_REMOTE_MODULES: 'sometimes' },
      /TFGUARD_REMOTE_MODULES must be true or false/,
    ],
    [
      { TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_MODULE_HOSTS: '{"github.com": "ssh://git@github.com"}' },
      /TFGUARD_MODULE_HOSTS\["github.com"\] must be an http\(s\) URL, or "" for https:\/\/github.com/,
    ],
    [
      { TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_REGISTRY_HOSTS: '{"a.b": ""}' },
      /TFGUARD_REGISTRY_HOSTS\["a.b"\] must be an http\(s\) URL$/,
    ],
    [{ TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_UPLOAD_URL_TTL_SECONDS: '0' }, /between 1 and 604800/],
    [
      { TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_REPORT_URL_TTL_SECONDS: '604801' },
      /TFGUARD_REPORT_URL_TTL_SECONDS must be between 1 and 604800/,
    ],
    [{ TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_S3_ENDPOINT: 'localhost:4568' }, /TFGUARD_S3_ENDPOINT/],
    [{ TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_AUDIT_SHARD_SIZE: '5000' }, /between 1 and 1000/],
    [
      { TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_DEADLINE_MARGIN_MS: '10s' },
      /TFGUARD_DEADLINE_MARGIN_MS must be an integer/,
    ],
    [
      { TFGUARD_UPLOADS_BUCKET: 'bkt', TFGUARD_DEADLINE_MARGIN_MS: '1000000' },
      /TFGUARD_DEADLINE_MARGIN_MS must be between 0 and 900000/,
    ],
  ])('rejects %j', (env, message) => {
    expect(() => loadServiceSettings(env)).toThrow(SettingsError);
    expect(() => loadServiceSettings(env)).toThrow(message);
  });

  test('separate buckets may use any prefixes', () => {
    const s = loadServiceSettings({
      TFGUARD_UPLOADS_BUCKET: 'up-bucket',
      TFGUARD_REPORTS_BUCKET: 'rep-bucket',
      TFGUARD_REPORTS_PREFIX: 'uploads/',
    });
    expect(s.reports).toEqual({ bucket: 'rep-bucket', prefix: 'uploads/' });
  });
});
