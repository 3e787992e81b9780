import { describeStockContract, inMemoryPetstore } from '../../testing';

describeStockContract('in-memory fakes', async () => inMemoryPetstore());
