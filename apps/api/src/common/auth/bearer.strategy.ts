import { Injectable } from '@nestjs/common';
import { Authenticate, type VerifiedKey } from '@petstore/application';
import type { Account } from '@petstore/domain';
import { Strategy } from 'passport-http-bearer';

/** A verified key and its account; or none, saying whether the key was valid once and has expired. */
export type Outcome = { account: Account; key: VerifiedKey } | { account: null; expired: boolean };
/** What the strategy hands passport as its "user": an expired key too, so that the refusal can say so. */
type Verified = VerifiedKey | { expired: true };
type Verify = (token: string, done: (error: unknown, verified?: Verified | false) => void) => void;
type Attempt = Strategy<Verify> & {
  success(verified: Verified): void;
  fail(): void;
  error(error: unknown): void;
};

/**
 * passport-http-bearer, owned by this application instance (not registered in
 * passport's process-wide registry, so two instances in one process cannot swap
 * strategies). The key is read only from the Authorization header, never from the
 * query string or body, where keys end up in logs.
 */
@Injectable()
export class BearerStrategy {
  private readonly strategy: Strategy<Verify>;
  /** Each request's outcome: the rate limit authenticates first, and the guard reuses it. */
  private readonly outcomes = new WeakMap<object, Promise<Outcome>>();

  constructor(authenticateKey: Authenticate) {
    this.strategy = new Strategy<Verify>((token: string, done: Parameters<Verify>[1]) => {
      authenticateKey.execute(token).then(
        (outcome) => done(null, outcome === 'expired' ? { expired: true } : (outcome ?? false)),
        (error: unknown) => done(error),
      );
    });
  }

  /** The request's outcome, computed once however many times it is asked for. */
  authenticateRequest(request: { headers: { authorization?: string } }): Promise<Outcome> {
    let outcome = this.outcomes.get(request);
    if (!outcome) {
      outcome = this.authenticate(request.headers.authorization);
      this.outcomes.set(request, outcome);
    }
    return outcome;
  }

  private authenticate(authorization: string | undefined): Promise<Outcome> {
    return new Promise((resolve, reject) => {
      // Passport's contract: a per-request object inheriting the strategy, given success/fail/error.
      const attempt = Object.create(this.strategy) as Attempt;
      attempt.success = (verified) =>
        resolve(
          'expired' in verified ? { account: null, expired: true } : { account: verified.account, key: verified },
        );
      attempt.fail = () => resolve({ account: null, expired: false });
      attempt.error = reject;
      attempt.authenticate({ headers: { authorization }, query: {}, body: {} } as never);
    });
  }
}
