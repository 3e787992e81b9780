/**
 * Secrets the service keeps for itself in its database (not settings): the same on every instance, made once, and
 * carried by a backup and its restore. Each has a name; its bytes never leave the service.
 */
export abstract class ServiceSecrets {
  /** The secret's bytes: made (32 random bytes) the first time any instance asks for that name. */
  abstract get(name: string): Promise<Buffer>;
}
