import { RequestMethod, Type, UseInterceptors } from '@nestjs/common';
import { INTERCEPTORS_METADATA, METHOD_METADATA, MODULE_METADATA } from '@nestjs/common/constants';
import { NOT_IDEMPOTENT } from './idempotency.decorators';
import { IdempotencyInterceptor } from './idempotency.interceptor';

/**
 * The rule, applied at start-up: every POST handler of these modules' controllers (and of the modules they import)
 * gets IdempotencyInterceptor, unless it is `@NotIdempotent(reason)`; an operation added later has it without
 * asking. Not a global interceptor: Nest then builds an interceptor chain for every route (rxjs, an
 * ExecutionContext, AsyncResource.bind), which reads must not pay (request-pipeline.e2e). Runs before Nest scans
 * the modules (the assembly calls it while composing them), so Nest sees the interceptor as if it were written on
 * the handler. Repeatable: a handler that has it already is left as it is.
 */
export function applyIdempotencyToPosts(modules: Type[]): void {
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
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
    const handler = descriptor?.value as object | undefined;
    if (name === 'constructor' || typeof handler !== 'function') continue;
    if (Reflect.getMetadata(METHOD_METADATA, handler) !== RequestMethod.POST) continue;
    if (Reflect.getMetadata(NOT_IDEMPOTENT, handler) !== undefined) continue;
    const interceptors: unknown[] = Reflect.getMetadata(INTERCEPTORS_METADATA, handler) ?? [];
    if (interceptors.includes(IdempotencyInterceptor)) continue;
    UseInterceptors(IdempotencyInterceptor)(prototype, name, descriptor as TypedPropertyDescriptor<unknown>);
  }
}
