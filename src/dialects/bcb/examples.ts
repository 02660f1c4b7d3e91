import type { OperationExamples } from '../../http/openapi-examples.ts';
import { COBV_EXAMPLES } from './cobv/examples.ts';

/**
 * The examples of BCB's operations (/v2 and the public payload routes), by operationId, one
 * record per group of operations, merged into the OpenAPI document as the root dialect's are.
 */
export const BCB_EXAMPLES: Record<string, OperationExamples> = { ...COBV_EXAMPLES };
