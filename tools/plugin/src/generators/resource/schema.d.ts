export interface ResourceGeneratorSchema {
  /** Singular, kebab-case or camelCase. */
  name: string;
  /** The plural, when the default (English rules for -s, -es, -ies) is wrong. */
  plural?: string;
  /** The migration's timestamp in milliseconds (default: now). */
  timestamp?: number;
}
