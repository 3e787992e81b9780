import {
  EventConsumers,
  OrderCommand,
  OutboxEventRecorder,
  StockCommand,
  StockReservations,
} from '@petstore/application';
import { FixedClock, SummaryEventPayloads } from '@petstore/application/testing';
import { TransactionHost } from '../../src/database/transaction-host';
import { PgEventOutbox } from '../../src/persistence/events/pg-event-outbox.repository';
import { pgRepositories } from './real-database';

/*
 * The medium tier's wiring (libs/infrastructure/test/medium): the use cases' collaborators on the PostgreSQL
 * repositories, as `inMemoryPetstore()` wires them on the fakes and the composition root on the real ones, without
 * Nest or HTTP. The events are recorded in the real outbox, with the fakes' summary payloads: what a payload holds
 * is the events' own tests'.
 */
export function pgPetstore(host: TransactionHost, clock = new FixedClock()) {
  const repositories = pgRepositories(host);
  const { uow, pets, stocks, openOrders, orders } = repositories;
  const eventOutbox = new PgEventOutbox(host);
  const events = new OutboxEventRecorder(eventOutbox, new SummaryEventPayloads(), clock, new EventConsumers());
  const stockCommand = new StockCommand(uow, pets, stocks, openOrders, events);
  const stockReservations = new StockReservations(stockCommand);
  return {
    ...repositories,
    clock,
    eventOutbox,
    events,
    stockCommand,
    stockReservations,
    orderCommand: new OrderCommand(orders, stockReservations, events),
  };
}

export type PgPetstore = ReturnType<typeof pgPetstore>;
