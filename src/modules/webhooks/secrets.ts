import { randomBytes } from 'node:crypto';

/** After a rotation the previous secret signs too, for this long, so receivers can switch. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3_600_000;

/** A Standard Webhooks secret: whsec_ + base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The secrets that sign now: the current one, plus the previous one within 24 h of a rotation. */
export function signingSecrets(
  account: { webhook_secret: string; webhook_secret_previous: string | null; webhook_secret_rotated_at: Date | null },
  now: Date,
): string[] {
  const previousValid =
    account.webhook_secret_previous !== null &&
    account.webhook_secret_rotated_at !== null &&
    now.getTime() - account.webhook_secret_rotated_at.getTime() < PREVIOUS_SECRET_GRACE_MS;
  return previousValid ? [account.webhook_secret, account.webhook_secret_previous!] : [account.webhook_secret];
}
