import { Injectable } from '@nestjs/common';
import { WebhookPayloads } from '@petstore/application';
import type { Message, Order, Pet } from '@petstore/domain';

interface Shapes {
  order: (order: Order) => unknown;
  pet: (pet: Pet) => unknown;
  message: (message: Message) => unknown;
}

/**
 * An event's `data` is the resource exactly as the API's own responses show it, and each slice owns how it
 * shows its resources: the catalogue defines the pet's shape here, ordering the order's, messaging the
 * message's (in their modules' constructors), so that webhooks import no other slice.
 */
@Injectable()
export class WebhookPayloadShapes extends WebhookPayloads {
  private readonly shapes: Partial<Shapes> = {};

  define<K extends keyof Shapes>(kind: K, shape: Shapes[K]): void {
    this.shapes[kind] = shape;
  }

  order(order: Order): unknown {
    return this.shape('order')(order);
  }
  pet(pet: Pet): unknown {
    return this.shape('pet')(pet);
  }
  message(message: Message): unknown {
    return this.shape('message')(message);
  }

  private shape<K extends keyof Shapes>(kind: K): Shapes[K] {
    const shape = this.shapes[kind];
    if (!shape) throw new Error(`No webhook payload shape for ${kind}: its slice is not part of this process`);
    return shape;
  }
}
