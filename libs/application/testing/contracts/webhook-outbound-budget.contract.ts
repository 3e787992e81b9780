import { UnitOfWork } from '../../src/ports';
import { WebhookOutboundBudget } from '../../src/webhook/webhook.ports';

export interface WebhookOutboundBudgetContractSubject {
  /** The budget at 2 deliveries a minute (one every 30 s, a burst of a minute's worth). */
  budget: WebhookOutboundBudget;
  /** The budget with no limit (WEBHOOK_DELIVERIES_PER_MINUTE=0). */
  unlimited: WebhookOutboundBudget;
  uow: UnitOfWork;
}

const NOW = new Date('2026-01-15T10:00:00.000Z');
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

/**
 * What the fan-out relies on from the outbound budget (issue 48, item 8), run against the in-memory fake and the
 * PostgreSQL adapter. `makeSubject` gives a fresh, empty store each test.
 */
export function describeWebhookOutboundBudgetContract(
  name: string,
  makeSubject: () => Promise<WebhookOutboundBudgetContractSubject>,
): void {
  describe(`Webhook outbound budget contract: ${name}`, () => {
    let subject: WebhookOutboundBudgetContractSubject;
    const reserve = (ownerId: number, count: number, now = NOW, budget = subject.budget) =>
      subject.uow.run(() => budget.reserve(ownerId, count, now));

    beforeEach(async () => {
      subject = await makeSubject();
    });

    it("lets a minute's worth (and one) through at once, then spreads the rest at the budget's rate", async () => {
      expect(await reserve(1, 1)).toEqual(NOW);
      expect(await reserve(1, 1)).toEqual(NOW);
      expect(await reserve(1, 1)).toEqual(NOW);
      expect(await reserve(1, 1)).toEqual(at(30));
      expect(await reserve(1, 2)).toEqual(at(60));
    });

    it("counts each account apart: one account's spent budget defers none of another's", async () => {
      await reserve(1, 10);
      expect(await reserve(1, 1)).toEqual(at(240));
      expect(await reserve(2, 1)).toEqual(NOW);
    });

    it('refills with time: an account idle for its deferral starts at once again', async () => {
      await reserve(1, 4);
      expect(await reserve(1, 1, at(60))).toEqual(at(60));
    });

    it('spends nothing in a unit of work that rolls back', async () => {
      await expect(
        subject.uow.run(async () => {
          await subject.budget.reserve(1, 50, NOW);
          throw new Error('the fan-out broke');
        }),
      ).rejects.toThrow('the fan-out broke');
      expect(await reserve(1, 1)).toEqual(NOW);
    });

    it('with no budget, every delivery starts at once', async () => {
      for (let i = 0; i < 5; i++) expect(await reserve(1, 100, NOW, subject.unlimited)).toEqual(NOW);
    });
  });
}
