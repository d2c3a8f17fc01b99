/**
 * Entry point 2: the pipeline API, one function per route so each gets only its own permissions
 * (src/service/api.ts holds the logic).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import {
  apiRequestFromEvent,
  createScan as createScanCore,
  createUpload as createUploadCore,
  getScan as getScanCore,
  handleApi,
  toHttpResult,
  type ApiDeps,
  type ApiRequest,
  type ApiResponse,
} from '../src/service/api';
import { errorAttributes } from '../src/service/observability';
import { instrumented, runtime, type Runtime } from './runtime';

type Operation = (deps: ApiDeps, request: ApiRequest) => Promise<ApiResponse>;

let bareLogger: Logger | undefined;

/**
 * Errors inside an operation become the API's 500, whose `requestId` (API Gateway's) is logged
 * with the error (`handleApi`). A failure around it (the function cannot be wired: an unusable
 * setting) is logged under the same request id and thrown: Lambda counts a function error and
 * API Gateway answers its own 500, whose `apigw-requestid` header is that id.
 */
function logFailure(
  rt: Runtime | undefined,
  context: Context | undefined,
  requestId: string | undefined,
  err: unknown,
) {
  let logger = rt?.logger;
  if (logger === undefined) {
    bareLogger ??= new Logger({ serviceName: 'tfguard' });
    logger = bareLogger;
  }
  if (context !== undefined) logger.addContext(context);
  logger.error('request failed', { requestId, ...errorAttributes(err) });
}

function route(operation: Operation, signers: { upload: boolean; report: boolean }) {
  return async (
    event: APIGatewayProxyEventV2,
    context?: Context,
  ): Promise<APIGatewayProxyStructuredResultV2> => {
    const requestId = event.requestContext?.requestId;
    let rt: Runtime | undefined;
    try {
      rt = runtime();
      const wired = rt;
      return await instrumented(wired, context, async (signal) => {
        const deps: ApiDeps = {
          settings: wired.settings,
          reports: wired.reports,
          layout: wired.layout,
          scanOptions: wired.scanOptions,
          policy: wired.policy,
          logger: wired.logger,
          metrics: wired.metrics,
          signal,
          ...(signers.upload ? { signer: wired.uploads } : {}),
          ...(signers.report ? { reportSigner: wired.reports } : {}),
        };
        const request = apiRequestFromEvent(event);
        const response = await handleApi(deps, request, (r) => operation(deps, r));
        wired.logger.removeKeys(['scanId', 'repository']);
        return toHttpResult(response);
      });
    } catch (err) {
      logFailure(rt, context, requestId, err);
      throw err;
    }
  };
}

/** `POST /scans` */
export const createScan = route(createScanCore, { upload: false, report: true });
/** `POST /uploads` */
export const createUpload = route(createUploadCore, { upload: true, report: false });
/** `GET /scans/{id}` */
export const getScan = route(getScanCore, { upload: false, report: true });
