import { Module } from '@nestjs/common';
import { DeliverDueMessages, MessageDeliverySettings, MessageQueue, MessageTransport } from '@petstore/application';
import { InboxMessageTransport, TypeOrmMessageQueue } from '@petstore/infrastructure';
import { MessageWorkerHost } from './message-worker.host';

/**
 * The delivery side of messages: the queue, the transport and the worker. Part of the API
 * application (MessagesModule) and, alone, of the worker-only process (`--worker-only`).
 * Needs DatabaseModule and AppConfig, which the root modules provide globally.
 */
@Module({
  providers: [
    { provide: MessageQueue, useClass: TypeOrmMessageQueue },
    { provide: MessageTransport, useClass: InboxMessageTransport },
    { provide: MessageDeliverySettings, useValue: new MessageDeliverySettings() },
    DeliverDueMessages,
    MessageWorkerHost,
  ],
  exports: [MessageWorkerHost],
})
export class MessageWorkerModule {}
