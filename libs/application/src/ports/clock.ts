/** The time, as a port, so that use cases and tests agree on "now". */
export abstract class Clock {
  abstract now(): Date;
}
