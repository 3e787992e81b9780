import { Metrics } from './metrics';

describe('Metrics.gauge', () => {
  it('keeps the last value of a gauge whose reading fails; the scrape answers with every other metric', async () => {
    const metrics = new Metrics();
    let reading: () => Promise<number> = async () => 7;
    metrics.gauge('test_queue_depth', 'A gauge read from a dependency.', () => reading());
    metrics.gauge('test_dependency_up', 'A gauge that always answers.', () => 1);
    expect(await metrics.text()).toMatch(/^test_queue_depth 7$/m);

    reading = () => Promise.reject(new Error('The database cannot be reached'));
    const text = await metrics.text();
    expect(text).toMatch(/^test_queue_depth 7$/m);
    expect(text).toMatch(/^test_dependency_up 1$/m);
    expect(text).toMatch(/^build_info\{/m);
  });
});
