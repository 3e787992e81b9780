import { describeIdempotencyStoreContract, inMemoryPetstore } from '../../testing';

describeIdempotencyStoreContract('in-memory fake', async () => inMemoryPetstore());
