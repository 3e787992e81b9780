import { describeAccountRepositoryContract, inMemoryPetstore } from '../../testing';

describeAccountRepositoryContract('in-memory fakes', async () => inMemoryPetstore());
