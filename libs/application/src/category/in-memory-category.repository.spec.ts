import { describeCategoryRepositoryContract, inMemoryPetstore } from '../../testing';

describeCategoryRepositoryContract('in-memory fake', async () => inMemoryPetstore());
