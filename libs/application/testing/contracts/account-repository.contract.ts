import { createHash } from 'node:crypto';
import { Account, ApiKey, ApiKeyRequest } from '@petstore/domain';
import { AccountRepository, ApiKeyRepository } from '../../src/account/account.repository';
import { UnitOfWork } from '../../src/ports';

export interface AccountContractSubject {
  accounts: AccountRepository;
  apiKeys: ApiKeyRepository;
  uow: UnitOfWork;
}

const NOW = new Date('2026-01-15T10:00:00.000Z');
let keys = 0;
/** A key as IssueApiKey stores it: a prefix and a SHA-256 hex hash, different every time. */
type KeyOptions = { bootstrap?: boolean; hash?: string; request?: ApiKeyRequest };
const aKeyFor = (id: number, accountId: number, options: KeyOptions = {}) => {
  const hash = options.hash ?? createHash('sha256').update(`contract key ${++keys}`).digest('hex');
  const prefix = `psk_${hash.slice(0, 8)}`;
  return ApiKey.issue({
    id,
    accountId,
    prefix,
    hash,
    now: NOW,
    bootstrap: options.bootstrap,
    request: options.request,
  });
};

/**
 * The behaviour of AccountRepository the account use cases rely on, with the keys where an account's ids and unit
 * of work reach them, run against the in-memory fakes and the PostgreSQL repositories (a key's own behaviour is
 * describeApiKeyRepositoryContract's). `makeRepo` gives a fresh, empty store each test.
 */
export function describeAccountRepositoryContract(name: string, makeRepo: () => Promise<AccountContractSubject>): void {
  describe(`AccountRepository and ApiKeyRepository contract: ${name}`, () => {
    let subject: AccountContractSubject;
    let accounts: AccountRepository;
    let apiKeys: ApiKeyRepository;
    let alice: Account;

    beforeEach(async () => {
      subject = await makeRepo();
      ({ accounts, apiKeys } = subject);
      alice = await signUp('Alice');
    });

    /** New accounts and keys as the use cases make them: an id from `nextId()`, then `add`. */
    const signUp = async (name: string): Promise<Account> => {
      const account = Account.signUp({ id: await accounts.nextId(), name, now: NOW });
      await accounts.add(account);
      return account;
    };
    const administrator = async (name: string): Promise<Account> => {
      const account = Account.administrator({ id: await accounts.nextId(), name, now: NOW });
      await accounts.add(account);
      return account;
    };
    const addKey = async (accountId: number, options: KeyOptions = {}): Promise<ApiKey> => {
      const key = aKeyFor(await apiKeys.nextId(), accountId, options);
      expect(await apiKeys.add(key)).toBe(true);
      return key;
    };

    it('hands out new ids in ascending order; add refuses an id stored already', async () => {
      const [first, second] = [await accounts.nextId(), await accounts.nextId()];
      expect(first).toBeGreaterThan(alice.id);
      expect(second).toBeGreaterThan(first);
      const taken = Account.signUp({ id: alice.id, name: 'Twin', now: NOW });
      await expect(accounts.add(taken)).rejects.toMatchObject({ constraintKind: 'unique' });
      const key = await addKey(alice.id);
      expect(await apiKeys.nextId()).toBeGreaterThan(key.id);
      await expect(apiKeys.add(aKeyFor(key.id, alice.id))).rejects.toMatchObject({ constraintKind: 'unique' });
      const unknown = aKeyFor(key.id + 1000, alice.id);
      unknown.revoke(NOW);
      await apiKeys.save(unknown);
      expect(await apiKeys.findByHash(unknown.hash)).toBeNull();
    });

    it('inserts accounts with ids from a sequence, reads them back; lock tells whether one exists', async () => {
      const admin = await administrator('Root');
      expect(alice.id).toBeGreaterThan(0);
      expect(admin.id).toBeGreaterThan(alice.id);
      expect((await accounts.findById(admin.id))?.toSnapshot()).toEqual({
        id: admin.id,
        name: 'Root',
        role: 'admin',
        createdAt: NOW,
      });
      expect(await accounts.findById(admin.id + 1000)).toBeNull();
      await subject.uow.run(async () => {
        expect(await accounts.lock(alice.id)).toBe(true);
        expect(await accounts.lock(admin.id + 1000)).toBe(false);
      });
    });

    it('rolls back a failed unit of work: the account and its key are gone', async () => {
      let accountId = 0;
      let hash = '';
      await expect(
        subject.uow.run(async () => {
          accountId = (await signUp('Temp')).id;
          hash = (await addKey(accountId)).hash;
          throw new Error('the command failed');
        }),
      ).rejects.toThrow('the command failed');
      expect(await accounts.findById(accountId)).toBeNull();
      expect(await apiKeys.findByHash(hash)).toBeNull();
    });
  });
}
