import { ApplicationError } from './application-error';

/**
 * What a client expects a resource to be before it changes it (HTTP `If-Match`): the use case asks it once the
 * resource is locked, before changing anything, so that no concurrent change can slip in between the check and
 * the write (two administrators editing one pet cannot lose an update). The application layer does not know how
 * a client names a state (an entity tag of the representation); the caller gives the test.
 */
export interface Precondition<T> {
  /** True when `current`, as it stands under the lock, is the state the client expects. */
  holds(current: T): boolean;
  /**
   * When it does not hold for a reason reading again would not fix (a weak tag in `If-Match` never matches): what
   * the client should do instead, the 412's message. Undefined: the usual message.
   */
  failure?(current: T): string | undefined;
}

/** The resource is not in the state the client expected: it changed since the client read it. */
export class PreconditionFailedError extends ApplicationError {
  readonly kind = 'precondition_failed' as const;

  constructor(
    message = 'The resource is not as the request expects (If-Match, If-None-Match): it changed since you read it, ' +
      'or, for If-None-Match: *, it exists. Read it again, then decide.',
  ) {
    super(message);
  }
}

/** Refuses the change when a precondition is given and does not hold; no precondition: as before. */
export function assertPrecondition<T>(precondition: Precondition<T> | undefined, current: T): void {
  if (precondition && !precondition.holds(current)) throw new PreconditionFailedError(precondition.failure?.(current));
}
