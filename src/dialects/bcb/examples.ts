import type { OperationExamples } from '../../http/openapi-examples.ts';
import { PIX_EXAMPLES } from './pix/examples.ts';
import { WEBHOOK_EXAMPLES } from './webhook/examples.ts';

/**
 * The examples of BCB's operations (/v2 and the public payload routes), by operationId, one
 * record per group of operations, merged into the OpenAPI document as the root dialect's are.
 */
export const BCB_EXAMPLES: Record<string, OperationExamples> = { ...PIX_EXAMPLES, ...WEBHOOK_EXAMPLES };
