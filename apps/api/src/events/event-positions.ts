import { createCipheriv, createDecipheriv, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { FeedPosition, FeedPositionTokens, ServiceSecrets } from '@petstore/application';
import { ApiError } from '../common/errors/api-error';

/** The "transaction" of a newest-first list's cursor: no event's (an xid8 never comes near 2^64 - 1). */
const LIST_CURSOR = 2n ** 64n - 1n;
/** The bytes of a token: one AES block (transaction, seq), then 8 bytes of its HMAC. */
const BLOCK = 16;
const TAG = 8;
const TOKEN_LENGTH = Math.ceil(((BLOCK + TAG) * 4) / 3);

/**
 * The event log's positions and cursors as tokens that reveal nothing: a feed position is (writing transaction,
 * global seq), and either number in clear let a customer count the events of other accounts it cannot see from the
 * gaps between its own (another's order placed between two of the catalogue's events: issue 49, security pass). A
 * token is the two numbers as one 16-byte block encrypted with AES-256 (one block, so a single block-cipher call: the
 * same position always gives the same token, and nothing of the numbers shows), followed by 8 bytes of an
 * HMAC-SHA256 of that block, so that a token the service did not issue is refused (400) instead of read as some other
 * position. The keys are
 * derived (HKDF) from the database's `event-positions` secret (ServiceSecrets), the same on every instance and kept by
 * a restore, so a saved position stays valid. Hand-written on node:crypto: no maintained package encrypts a fixed
 * 16-byte value deterministically with authentication (AES-SIV is not in Node's OpenSSL ciphers list).
 */
@Injectable()
export class EventPositions extends FeedPositionTokens implements OnModuleInit {
  private cipherKey?: Buffer;
  private macKey?: Buffer;

  constructor(private readonly secrets: ServiceSecrets) {
    super();
  }

  async onModuleInit(): Promise<void> {
    const secret = await this.secrets.get('event-positions');
    this.cipherKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'petstore event positions: aes', 32));
    this.macKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'petstore event positions: hmac', 32));
  }

  /** A feed position as the `position`, `startingAfter` and `endingBefore` a client sees. */
  feedToken(position: FeedPosition): string {
    return this.seal(BigInt(position.xact), BigInt(position.seq));
  }

  /** FeedPositionTokens: the position webhook deliveries and the event stream's messages carry (EventBodies). */
  token(position: FeedPosition): string {
    return this.feedToken(position);
  }

  /** The feed position a token holds; anything else is `400 validation_failed` naming `field`. */
  feedPosition(token: string, field: string): FeedPosition {
    const opened = this.open(token);
    if (opened && opened.xact !== LIST_CURSOR && opened.seq > 0n && opened.seq <= BigInt(Number.MAX_SAFE_INTEGER)) {
      return { xact: opened.xact.toString(), seq: Number(opened.seq) };
    }
    throw ApiError.validation(`${field} is not an event position this service issued.`, [
      { field, message: `${field} is not an event position this service issued` },
    ]);
  }

  /** The newest-first list's `cursor` after the event of this seq. */
  listCursor(seq: number): string {
    return this.seal(LIST_CURSOR, BigInt(seq));
  }

  /** The seq a newest-first `cursor` continues below; anything else is `400 validation_failed`. */
  listAfter(token: string): number {
    const opened = this.open(token);
    if (opened && opened.xact === LIST_CURSOR && opened.seq > 0n && opened.seq <= BigInt(Number.MAX_SAFE_INTEGER)) {
      return Number(opened.seq);
    }
    throw ApiError.validation('cursor is not a cursor this service issued.', [
      { field: 'cursor', message: 'cursor is not a cursor this service issued' },
    ]);
  }

  private seal(xact: bigint, seq: bigint): string {
    const block = Buffer.alloc(BLOCK);
    block.writeBigUInt64BE(xact, 0);
    block.writeBigUInt64BE(seq, 8);
    const cipher = createCipheriv('aes-256-ecb', this.key('cipher'), null).setAutoPadding(false);
    const sealed = Buffer.concat([cipher.update(block), cipher.final()]);
    return Buffer.concat([sealed, this.tagOf(sealed)]).toString('base64url');
  }

  private open(token: string): { xact: bigint; seq: bigint } | null {
    if (typeof token !== 'string' || token.length !== TOKEN_LENGTH) return null;
    const bytes = Buffer.from(token, 'base64url');
    if (bytes.length !== BLOCK + TAG || bytes.toString('base64url') !== token) return null;
    const sealed = bytes.subarray(0, BLOCK);
    if (!timingSafeEqual(bytes.subarray(BLOCK), this.tagOf(sealed))) return null;
    const decipher = createDecipheriv('aes-256-ecb', this.key('cipher'), null).setAutoPadding(false);
    const block = Buffer.concat([decipher.update(sealed), decipher.final()]);
    return { xact: block.readBigUInt64BE(0), seq: block.readBigUInt64BE(8) };
  }

  private tagOf(sealed: Buffer): Buffer {
    return createHmac('sha256', this.key('mac')).update(sealed).digest().subarray(0, TAG);
  }

  private key(which: 'cipher' | 'mac'): Buffer {
    const key = which === 'cipher' ? this.cipherKey : this.macKey;
    if (!key) throw new Error('EventPositions is used before its module was initialised (no key read yet).');
    return key;
  }
}
