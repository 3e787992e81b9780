/**
 * What the change signals do in this process, decided by the assembly from its roles and handed to them through
 * the global ConfigModule (ChangeSignalsModule.settings): the module is static, so every module that reads the
 * signals imports it and Nest makes one instance of it (one LISTEN connection), which reads these.
 */
export abstract class ChangeSignalsSettings {
  /** A direct session's URL (not through a pooler): where the LISTEN connection goes. */
  abstract readonly databaseUrl: string;
  /** Whether this process listens and caches (the `http` role); else changes are announced, nothing is received. */
  abstract readonly listen: boolean;
}
