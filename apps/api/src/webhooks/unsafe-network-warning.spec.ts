import { Logger } from '@nestjs/common';
import { WebhookNetworkSettings } from '@petstore/infrastructure';
import { UnsafeWebhookNetworkWarning } from './webhooks.module';

describe('the start-up warning for WEBHOOKS_ALLOW_PRIVATE', () => {
  afterEach(() => jest.restoreAllMocks());

  it('warns once when private addresses are allowed, and says nothing otherwise', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    new UnsafeWebhookNetworkWarning(new WebhookNetworkSettings(false)).onApplicationBootstrap();
    expect(warn).not.toHaveBeenCalled();
    new UnsafeWebhookNetworkWarning(new WebhookNetworkSettings(true)).onApplicationBootstrap();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(/^WEBHOOKS_ALLOW_PRIVATE=true: .*[Uu]nsafe/);
  });
});
