import { describePetRepositoryContract, inMemoryPetstore } from '../../testing';

describePetRepositoryContract('in-memory fakes', async () => inMemoryPetstore());
