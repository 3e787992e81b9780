import { describeMessageRepositoryContract, inMemoryPetstore } from '../../testing';

describeMessageRepositoryContract('in-memory fake', async () => {
  let accounts = 0;
  // The fake keeps no owner check for messages: any id will do.
  return { ...inMemoryPetstore(), newAccountId: async () => ++accounts };
});
