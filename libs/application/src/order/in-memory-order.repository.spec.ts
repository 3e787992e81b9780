import { anAccount, describeOrderRepositoryContract, inMemoryPetstore } from '../../testing';

describeOrderRepositoryContract('in-memory fake', async () => {
  const store = inMemoryPetstore();
  return { ...store, newAccountId: async () => (await anAccount().saveIn(store)).id };
});
