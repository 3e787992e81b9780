import { Module } from '@nestjs/common';
import { Drain } from './drain.service';

/**
 * The process's one shutdown drain: imported by the assembly (readiness, the Fastify hook, main.ts) and by the job
 * queue (its closer gives the jobs in progress what is left of SHUTDOWN_TIMEOUT_MS after the drain). A process that
 * serves no HTTP never starts it, so its jobs get all of it.
 */
@Module({ providers: [Drain], exports: [Drain] })
export class DrainModule {}
