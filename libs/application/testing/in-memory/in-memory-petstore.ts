import {
  FakeApiKeySecrets,
  InMemoryAccountRepository,
  InMemoryApiKeyRepository,
  InMemoryKeyRevocations,
} from './in-memory-accounts';
import { EventConsumers, OutboxEventRecorder } from '../../src/events/event-recorder';
import { EventBodies } from '../../src/events/event-bodies';
import { StockCommand } from '../../src/stock/stock-command';
import { StockReservations } from '../../src/stock/stock-reservations';
import { OrderCommand } from '../../src/order/order-command';
import {
  InMemoryCategoryRepository,
  InMemoryStockRepository,
  InMemoryPetRepository,
  InMemoryStockLevels,
} from './in-memory-catalogue';
import { FixedClock, InMemoryDatabase, InMemoryUnitOfWork } from './in-memory-database';
import { InMemoryIdempotencyStore } from './in-memory-idempotency';
import { InMemoryMessageQueue, InMemoryMessageRepository, RecordingMessageTransport } from './in-memory-messages';
import { InMemoryOpenOrders, InMemoryOrderRepository } from './in-memory-order.repository';
import {
  InMemoryEventLog,
  InMemoryEventOutbox,
  PlainFeedPositionTokens,
  SummaryEventPayloads,
} from './in-memory-events';

/** Every in-memory port over one fresh store, wired as the composition root wires the real ones. */
export function inMemoryPetstore(clock = new FixedClock()) {
  const db = new InMemoryDatabase(clock);
  const uow = new InMemoryUnitOfWork(db);
  const pets = new InMemoryPetRepository(db);
  const stocks = new InMemoryStockRepository(db);
  const orders = new InMemoryOrderRepository(db);
  const openOrders = new InMemoryOpenOrders(db);
  const eventOutbox = new InMemoryEventOutbox(db);
  const eventConsumers = new EventConsumers();
  // The recorder the use cases get (the real one, over the in-memory outbox): facts land in db.tables.webhookEvents.
  const events = new OutboxEventRecorder(eventOutbox, new SummaryEventPayloads(), clock, eventConsumers);
  const stockCommand = new StockCommand(uow, pets, stocks, openOrders, events);
  const stockReservations = new StockReservations(stockCommand);
  return {
    db,
    clock,
    uow,
    categories: new InMemoryCategoryRepository(db),
    pets,
    stocks,
    orders,
    openOrders,
    stockLevels: new InMemoryStockLevels(db),
    eventOutbox,
    eventLog: new InMemoryEventLog(db),
    eventConsumers,
    events,
    /** The bodies events are sent with (webhooks, the event stream), their positions in clear. */
    eventBodies: new EventBodies(new PlainFeedPositionTokens()),
    stockCommand,
    stockReservations,
    orderCommand: new OrderCommand(orders, stockReservations, events),
    accounts: new InMemoryAccountRepository(db),
    apiKeys: new InMemoryApiKeyRepository(db),
    secrets: new FakeApiKeySecrets(),
    keyRevocations: new InMemoryKeyRevocations(db),
    messages: new InMemoryMessageRepository(db),
    messageQueue: new InMemoryMessageQueue(db),
    transport: new RecordingMessageTransport(),
    idempotency: new InMemoryIdempotencyStore(db),
  };
}

export type InMemoryPetstore = ReturnType<typeof inMemoryPetstore>;
