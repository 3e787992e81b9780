import { UnitOfWork } from '../../src/ports';
import { WebhookOutboundBudget } from '../../src/webhook/webhook.ports';

export interface WebhookOutboundBudgetContractSubject {
  /** The budget at 2 deliveries a minute (one every 30 s, a burst of a minute's worth). */
  budget: WebhookOutboundBudget;
  /** The budget with no limit (WEBHOOK_DELIVERIES_PER_MINUTE=0). */
  unlimited: WebhookOutboundBudget;
  uow: UnitOfWork;
}

/**
 * What the fan-out relies on from the outbound budget (issue 48, item 8), run against the in-memory fake and the
 * PostgreSQL adapter. `makeSubject` gives a fresh, empty store each test. The budget runs on the store's clock (the
 * database's), which moves between two statements: a wait is expected within a second of the exact one.
 */
export function describeWebhookOutboundBudgetContract(
  name: string,
  makeSubject: () => Promise<WebhookOutboundBudgetContractSubject>,
): void {
  describe(`Webhook outbound budget contract: ${name}`, () => {
    let subject: WebhookOutboundBudgetContractSubject;
    const reserve = async (ownerId: number, count: number, budget = subject.budget) =>
      (await subject.uow.run(() => budget.reserve(new Map([[ownerId, count]])))).get(ownerId);
    /** A wait of `ms`, less what the clock moved since the arrival time was stored (under a second). */
    const expectAbout = (waited: number | undefined, ms: number) => {
      expect(waited).toBeGreaterThan(ms - 1000);
      expect(waited).toBeLessThanOrEqual(ms);
    };

    beforeEach(async () => {
      subject = await makeSubject();
    });

    it("lets a minute's worth (and one) through at once, then spreads the rest at the budget's rate", async () => {
      expect([await reserve(1, 1), await reserve(1, 1), await reserve(1, 1)]).toEqual([0, 0, 0]);
      expectAbout(await reserve(1, 1), 30_000);
      expectAbout(await reserve(1, 2), 60_000);
    });

    it("counts each account apart: one account's spent budget defers none of another's", async () => {
      expect(await reserve(1, 10)).toBe(0);
      expectAbout(await reserve(1, 1), 240_000);
      expect(await reserve(2, 1)).toBe(0);
    });

    it('spends nothing in a unit of work that rolls back', async () => {
      await expect(
        subject.uow.run(async () => {
          await subject.budget.reserve(new Map([[1, 50]]));
          throw new Error('the fan-out broke');
        }),
      ).rejects.toThrow('the fan-out broke');
      expect(await reserve(1, 1)).toBe(0);
    });

    it('takes several accounts at once, each from its own budget (a fan-out to many accounts)', async () => {
      await reserve(1, 4); // account 1 is 30 s behind
      const waits = await subject.uow.run(() =>
        subject.budget.reserve(
          new Map([
            [3, 1],
            [1, 1],
            [2, 0],
          ]),
        ),
      );
      expect(waits.get(3)).toBe(0);
      expect(waits.get(2)).toBe(0);
      expectAbout(waits.get(1) ?? 0, 60_000);
    });

    it('with no budget, every delivery starts at once', async () => {
      for (let i = 0; i < 5; i++) expect(await reserve(1, 100, subject.unlimited)).toBe(0);
    });
  });
}
