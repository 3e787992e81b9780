import { Account } from '@petstore/domain';
import { AccountRepository } from '../../src/account/account.repository';
import { IdempotencyRecord, IdempotencyStore } from '../../src/idempotency/idempotency.store';
import { ConstraintViolationError, UnitOfWork } from '../../src/ports';

/** What the idempotency store's contract needs: the store, accounts to own keys, a unit of work. */
export interface IdempotencyStoreContractSubject {
  idempotency: IdempotencyStore;
  accounts: AccountRepository;
  uow: UnitOfWork;
}

const NOW = new Date('2026-01-15T10:00:00.000Z');
const DAY = 24 * 3_600_000;
const at = (ms: number) => new Date(NOW.getTime() + ms);
/** A completed command's record; `json` keeps its keys in an order jsonb would change, to show the text is kept. */
const aRecord = (note: string, overrides: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
  fingerprint: note.padEnd(64, '0').slice(0, 64),
  result: { json: `{"z":1,"note":"${note}","a":[2, 1]}`, createdResource: `/things/${note}` },
  sealed: false,
  ...overrides,
});

/**
 * The behaviour of IdempotencyStore that RunIdempotently relies on (a record found by owner and key until it
 * expires, kept as written, replaced under the same key, purged once expired, committed or rolled back with the
 * command), run against the in-memory fake (libs/application) and the PostgreSQL store (libs/infrastructure).
 * `makeStore` gives a fresh, empty store each test. That `tryLock` answers false while another running transaction
 * holds the key is PostgreSQL's alone (the fake's transactions run one at a time): libs/infrastructure tests it.
 */
export function describeIdempotencyStoreContract(
  name: string,
  makeStore: () => Promise<IdempotencyStoreContractSubject>,
): void {
  describe(`IdempotencyStore contract: ${name}`, () => {
    let subject: IdempotencyStoreContractSubject;
    let store: IdempotencyStore;
    let alice: number;

    beforeEach(async () => {
      subject = await makeStore();
      store = subject.idempotency;
      alice = await signUp('Alice');
    });

    const signUp = async (name: string): Promise<number> => {
      const account = Account.signUp({ id: await subject.accounts.nextId(), name, now: NOW });
      await subject.accounts.add(account);
      return account.id;
    };

    it('takes a key only inside a unit of work, and again in the same one', async () => {
      await expect(store.tryLock(alice, 'k')).rejects.toThrow(/transaction/i);
      await subject.uow.run(async () => {
        expect(await store.tryLock(alice, 'k')).toBe(true);
        expect(await store.tryLock(alice, 'k')).toBe(true);
        expect(await store.tryLock(null, 'k')).toBe(true);
      });
    });

    it('finds nothing for a key never saved; a saved record comes back as written, its JSON as text', async () => {
      expect(await store.find(alice, 'order-1', NOW)).toBeNull();
      const record = aRecord('one');
      await subject.uow.run(() => store.save(alice, 'order-1', record, at(DAY)));
      expect(await store.find(alice, 'order-1', NOW)).toEqual(record);
      expect((await store.find(alice, 'order-1', NOW))?.result.json).toBe(record.result.json);
      const sealed = aRecord('two', { sealed: true, result: { json: 'v1.sealed-envelope', createdResource: null } });
      await subject.uow.run(() => store.save(alice, 'order-2', sealed, at(DAY)));
      expect(await store.find(alice, 'order-2', NOW)).toEqual(sealed);
    });

    it('tells keys apart by their exact text: case and spaces count', async () => {
      await store.save(alice, 'Key-1', aRecord('upper'), at(DAY));
      expect(await store.find(alice, 'key-1', NOW)).toBeNull();
      expect(await store.find(alice, 'Key-1 ', NOW)).toBeNull();
      expect((await store.find(alice, 'Key-1', NOW))?.fingerprint).toBe(aRecord('upper').fingerprint);
    });

    it("keeps each owner's keys apart, and the keys without an owner apart from every account's", async () => {
      const bob = await signUp('Bob');
      await store.save(alice, 'same', aRecord('alice'), at(DAY));
      await store.save(null, 'same', aRecord('nobody'), at(DAY));
      expect(await store.find(bob, 'same', NOW)).toBeNull();
      expect((await store.find(alice, 'same', NOW))?.result.createdResource).toBe('/things/alice');
      expect((await store.find(null, 'same', NOW))?.result.createdResource).toBe('/things/nobody');
      await store.save(bob, 'same', aRecord('bob'), at(DAY));
      expect((await store.find(bob, 'same', NOW))?.result.createdResource).toBe('/things/bob');
      expect((await store.find(alice, 'same', NOW))?.result.createdResource).toBe('/things/alice');
    });

    it('refuses a record for an account that does not exist', async () => {
      await expect(store.save(alice + 1000, 'k', aRecord('ghost'), at(DAY))).rejects.toBeInstanceOf(
        ConstraintViolationError,
      );
      expect(await store.find(alice + 1000, 'k', NOW)).toBeNull();
    });

    it('finds a record until it expires, not at its expiry or after', async () => {
      await store.save(alice, 'k', aRecord('expiring'), at(DAY));
      expect(await store.find(alice, 'k', at(DAY - 1))).not.toBeNull();
      expect(await store.find(alice, 'k', at(DAY))).toBeNull();
      expect(await store.find(alice, 'k', at(DAY + 1))).toBeNull();
    });

    it('replaces the record under a key saved again (an expired one is taken over by the next request)', async () => {
      await store.save(alice, 'k', aRecord('first'), at(DAY));
      await store.save(alice, 'k', aRecord('second'), at(3 * DAY));
      expect((await store.find(alice, 'k', at(2 * DAY)))?.result.createdResource).toBe('/things/second');
      expect(await store.purgeExpired(at(2 * DAY))).toBe(0);
    });

    it('purges the records expired at the given time and counts them; the others stay', async () => {
      await store.save(alice, 'old', aRecord('old'), at(DAY));
      await store.save(null, 'old-anonymous', aRecord('old-anonymous'), at(DAY));
      await store.save(alice, 'new', aRecord('new'), at(2 * DAY));
      expect(await store.purgeExpired(at(DAY - 1))).toBe(0);
      expect(await store.purgeExpired(at(DAY))).toBe(2);
      expect(await store.purgeExpired(at(DAY))).toBe(0);
      expect(await store.find(alice, 'new', NOW)).not.toBeNull();
      expect(await store.find(alice, 'old', NOW)).toBeNull();
    });

    it('takes part in the unit of work: a failed run keeps no record; a committed one keeps it', async () => {
      await expect(
        subject.uow.run(async () => {
          expect(await store.tryLock(alice, 'k')).toBe(true);
          await store.save(alice, 'k', aRecord('dropped'), at(DAY));
          expect(await store.find(alice, 'k', NOW)).not.toBeNull();
          throw new Error('the command failed');
        }),
      ).rejects.toThrow('the command failed');
      expect(await store.find(alice, 'k', NOW)).toBeNull();
      await subject.uow.run(async () => {
        expect(await store.tryLock(alice, 'k')).toBe(true);
        await store.save(alice, 'k', aRecord('kept'), at(DAY));
      });
      expect((await store.find(alice, 'k', NOW))?.result.createdResource).toBe('/things/kept');
    });
  });
}
