import { Module } from '@nestjs/common';
import {
  CreateWebhookEndpoint,
  DeleteWebhookEndpoint,
  PingWebhookEndpoint,
  WebhookEndpointQueries,
} from '@petstore/application';
import { WebhooksController } from './webhooks.controller';

/** `/webhooks/endpoints`; the ports come from the global WebhookCoreModule. */
@Module({
  controllers: [WebhooksController],
  providers: [CreateWebhookEndpoint, DeleteWebhookEndpoint, PingWebhookEndpoint, WebhookEndpointQueries],
})
export class WebhooksModule {}
