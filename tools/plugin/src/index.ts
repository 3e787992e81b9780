export { resourceGenerator } from './generators/resource/generator';
export type { ResourceGeneratorSchema } from './generators/resource/schema';
