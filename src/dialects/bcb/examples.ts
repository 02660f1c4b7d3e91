import type { OperationExamples } from '../../http/openapi-examples.ts';
import { COB_EXAMPLES } from './cob/examples.ts';
import { LOC_EXAMPLES } from './loc/examples.ts';
import { LOCREC_EXAMPLES } from './locrec/examples.ts';
import { REC_EXAMPLES } from './rec/examples.ts';
import { PAYLOAD_EXAMPLES } from './payloads/examples.ts';
import { PIX_EXAMPLES } from './pix/examples.ts';
import { WEBHOOK_EXAMPLES } from './webhook/examples.ts';
import { COBV_EXAMPLES } from './cobv/examples.ts';
import { COBR_EXAMPLES } from './cobr/examples.ts';
import { SOLICREC_EXAMPLES } from './solicrec/examples.ts';
import { WEBHOOKREC_EXAMPLES } from './webhookrec/examples.ts';

/**
 * The examples of BCB's operations (/v2 and the public payload routes), by operationId, one
 * record per group of operations, merged into the OpenAPI document as the root dialect's are.
 */
export const BCB_EXAMPLES: Record<string, OperationExamples> = {
  ...COB_EXAMPLES,
  ...COBV_EXAMPLES,
  ...LOC_EXAMPLES,
  ...LOCREC_EXAMPLES,
  ...REC_EXAMPLES,
  ...PAYLOAD_EXAMPLES,
  ...PIX_EXAMPLES,
  ...WEBHOOK_EXAMPLES,
  ...SOLICREC_EXAMPLES,
  ...COBR_EXAMPLES,
  ...WEBHOOKREC_EXAMPLES,
};
