import { Injectable } from '@nestjs/common';
import { MessageTransport } from '@petstore/application';
import { Message } from '@petstore/domain';

/**
 * The default transport: messages are delivered to the store's own inbox (`GET /messages`),
 * where marking them delivered is the whole delivery. Bind another MessageTransport (e-mail,
 * a webhook, a broker) to send them elsewhere.
 */
@Injectable()
export class InboxMessageTransport extends MessageTransport {
  async deliver(_message: Message): Promise<void> {
    // Nothing leaves the service: the worker's state change is the delivery.
  }
}
