import { describeOrderRepositoryContract, inMemoryPetstore } from '../../testing';

describeOrderRepositoryContract('in-memory fake', async () => {
  let accounts = 0;
  // The fake keeps no accounts (orders do not check their owner): any id will do.
  return { ...inMemoryPetstore(), newAccountId: async () => ++accounts };
});
