import { anAccount, describeMessageRepositoryContract, inMemoryPetstore } from '../../testing';

describeMessageRepositoryContract('in-memory fake', async () => {
  const store = inMemoryPetstore();
  return { ...store, newAccountId: async () => (await anAccount().saveIn(store)).id };
});
