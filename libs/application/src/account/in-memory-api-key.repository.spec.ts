import { describeApiKeyRepositoryContract, inMemoryPetstore } from '../../testing';

describeApiKeyRepositoryContract('in-memory fake', async () => inMemoryPetstore());
