/**
 * Entry point 2: the pipeline API, one function per route so each gets only its own permissions
 * (src/service/api.ts holds the logic).
 */
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
import { instrumented, runtime, type Runtime } from './runtime';

type Operation = (deps: ApiDeps, request: ApiRequest) => Promise<ApiResponse>;

function route(operation: Operation, signers: { upload: boolean; report: boolean }) {
  return async (
    event: APIGatewayProxyEventV2,
    context?: Context,
  ): Promise<APIGatewayProxyStructuredResultV2> => {
    const rt: Runtime = runtime();
    return instrumented(rt, context, async (signal) => {
      const deps: ApiDeps = {
        settings: rt.settings,
        reports: rt.reports,
        layout: rt.layout,
        scanOptions: rt.scanOptions,
        logger: rt.logger,
        metrics: rt.metrics,
        signal,
        ...(signers.upload ? { signer: rt.uploads } : {}),
        ...(signers.report ? { reportSigner: rt.reports } : {}),
      };
      const request = apiRequestFromEvent(event);
      const response = await handleApi(deps, request, (r) => operation(deps, r));
      rt.logger.removeKeys(['scanId', 'repository']);
      return toHttpResult(response);
    });
  };
}

/** `POST /scans` */
export const createScan = route(createScanCore, { upload: false, report: true });
/** `POST /uploads` */
export const createUpload = route(createUploadCore, { upload: true, report: false });
/** `GET /scans/{id}` */
export const getScan = route(getScanCore, { upload: false, report: true });
