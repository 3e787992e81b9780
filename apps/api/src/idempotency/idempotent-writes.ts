import { Inject, Req, RequestMethod, Res, Type } from '@nestjs/common';
import {
  METHOD_METADATA,
  MODULE_METADATA,
  PROPERTY_DEPS_METADATA,
  RESPONSE_PASSTHROUGH_METADATA,
  ROUTE_ARGS_METADATA,
} from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { RunIdempotently } from '@petstore/application';
import { NOT_IDEMPOTENT, SHOWS_SECRET } from './idempotency.decorators';
import { Handler, IDEMPOTENT_ORIGINAL, idempotentHandler, RUN_IDEMPOTENTLY } from './idempotent-handler';

/**
 * The methods whose handlers honour `Idempotency-Key`: those a retry could do twice (the IETF idempotency-key draft's
 * non-idempotent methods, POST and PATCH) and DELETE, whose repeat is not answered as the first was here (a second
 * cancel of an order is a 409): with the key, a client whose connection was cut replays the first answer. Not GET or
 * PUT (a repeat of `PUT /store/inventory/{petId}` sets the same count and answers the same).
 */
export const IDEMPOTENT_METHODS: ReadonlySet<RequestMethod> = new Set([
  RequestMethod.POST,
  RequestMethod.PATCH,
  RequestMethod.DELETE,
]);

/**
 * The rule, applied at start-up: every POST, PATCH and DELETE handler of these modules' controllers (and of the
 * modules they import) honours `Idempotency-Key`, unless it is `@NotIdempotent(reason)`; an operation added later
 * does without asking.
 * The handler method itself is wrapped (idempotentHandler), on the controller's prototype, so Nest calls it after
 * the guard and the pipes, as it calls any handler: no interceptor, which would give every POST an interceptor
 * chain (rxjs, an ExecutionContext, AsyncResource.bind) even without the header (request-pipeline.e2e).
 * The wrapper keeps the handler's name and every metadata of it (route, status code, OpenAPI, the opt-out), gets
 * the request and the reply as two more parameters declared here (`@Req()`, `@Res({ passthrough: true })`: not
 * piped, and Nest still sends what the handler returns), and the application's RunIdempotently as a property Nest
 * injects into the controller. Runs before Nest scans the modules (the assembly calls it while composing them).
 * Repeatable: a handler already wrapped is left as it is.
 */
export function applyIdempotencyToWrites(modules: Type[]): void {
  const seen = new Set<Type>();
  const visit = (module: Type | undefined) => {
    if (!module || seen.has(module)) return;
    seen.add(module);
    const controllers: Type[] = Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, module) ?? [];
    controllers.forEach(applyToController);
    const imports: Array<Type | { module?: Type }> = Reflect.getMetadata(MODULE_METADATA.IMPORTS, module) ?? [];
    for (const imported of imports) visit(typeof imported === 'function' ? imported : imported?.module);
  };
  modules.forEach(visit);
}

function applyToController(controller: Type): void {
  const prototype = controller.prototype as Record<string, unknown>;
  let wrapsAny = false;
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
    const handler = descriptor?.value as Handler | undefined;
    if (name === 'constructor' || !descriptor || typeof handler !== 'function') continue;
    if (!IDEMPOTENT_METHODS.has(Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod)) continue;
    if (Reflect.getMetadata(NOT_IDEMPOTENT, handler) !== undefined) continue;
    if (IDEMPOTENT_ORIGINAL in handler) {
      wrapsAny = true;
      continue;
    }
    wrapHandler(controller, prototype, name, descriptor, handler);
    wrapsAny = true;
  }
  const injected: Array<{ key: unknown }> = Reflect.getMetadata(PROPERTY_DEPS_METADATA, controller) ?? [];
  if (wrapsAny && !injected.some(({ key }) => key === RUN_IDEMPOTENTLY)) {
    Inject(RunIdempotently)(prototype, RUN_IDEMPOTENTLY);
  }
}

function wrapHandler(
  controller: Type,
  prototype: Record<string, unknown>,
  name: string,
  descriptor: PropertyDescriptor,
  handler: Handler,
): void {
  const where = `${controller.name}.${name}`;
  const routeArgs: Record<string, { index: number }> = Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {};
  const paramtypes: unknown[] = Reflect.getMetadata('design:paramtypes', prototype, name) ?? [];
  const declared = Math.max(handler.length, paramtypes.length, ...Object.values(routeArgs).map((a) => a.index + 1));
  const sendsItself = Object.keys(routeArgs).some((key) =>
    [`${RouteParamtypes.RESPONSE}`, `${RouteParamtypes.NEXT}`].includes(key.split(':')[0]),
  );
  if (sendsItself && Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, controller, name) !== true) {
    throw new Error(
      `${where} sends its own response (@Res() or @Next() without passthrough), so its result cannot be kept for ` +
        'Idempotency-Key: use @Res({ passthrough: true }), or mark it @NotIdempotent(reason).',
    );
  }
  const showsSecret =
    (Reflect.getMetadata(SHOWS_SECRET, handler) ?? Reflect.getMetadata(SHOWS_SECRET, controller)) === true;
  const wrapper = idempotentHandler(handler, declared, showsSecret);
  for (const key of Reflect.getOwnMetadataKeys(handler)) {
    Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, handler), wrapper);
  }
  Object.defineProperty(prototype, name, { ...descriptor, value: wrapper });
  Req()(prototype, name, declared);
  Res({ passthrough: true })(prototype, name, declared + 1);
}
