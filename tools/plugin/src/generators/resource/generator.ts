import { Tree, formatFiles, generateFiles, joinPathFragments, names } from '@nx/devkit';
import * as path from 'node:path';
import type { ResourceGeneratorSchema } from './schema';
import { addExport, addImport, addObjectProperty, addUnionMember, appendToArray } from './wiring';

/** Where the shared files the generator wires a resource into live. */
export const WIRING = {
  domainIndex: 'libs/domain/src/index.ts',
  applicationIndex: 'libs/application/src/index.ts',
  applicationTesting: 'libs/application/testing/index.ts',
  infrastructureIndex: 'libs/infrastructure/src/index.ts',
  migrations: 'libs/infrastructure/src/database/migrations/index.ts',
  assembly: 'apps/api/src/assembly/assembly.ts',
  domainErrorKinds: 'libs/domain/src/common/domain-error.ts',
  errorTable: 'apps/api/src/common/errors/error-response.ts',
  errorCodes: 'apps/api/src/common/errors/error-codes.ts',
} as const;

export interface ResourceNames {
  /** shelter / pet-toy: file and folder names. */
  fileName: string;
  /** Shelter / PetToy */
  className: string;
  /** shelter / petToy */
  propertyName: string;
  /** SHELTER / PET_TOY */
  constantName: string;
  /** shelter / pet_toy: error codes. */
  snakeName: string;
  /** A human word: shelter / pet toy. */
  title: string;
  /** shelters / pet-toys: the URL path, the app's folder. */
  pluralFileName: string;
  /** Shelters / PetToys */
  pluralClassName: string;
  /** shelters / pet_toys: the table. */
  pluralSnakeName: string;
  /** shelters / pet toys */
  pluralTitle: string;
}

/**
 * English plural of a kebab-case name's last word. Hand-written because no pluralisation library is a
 * dependency of the workspace (and none may be added for this); `--plural` overrides it.
 */
export function pluralOf(fileName: string): string {
  if (/[^aeiou]y$/.test(fileName)) return fileName.slice(0, -1) + 'ies';
  if (/(s|x|z|ch|sh)$/.test(fileName)) return fileName + 'es';
  return fileName + 's';
}

export function resourceNames(name: string, plural?: string): ResourceNames {
  const singular = names(name);
  const many = names(plural ?? pluralOf(singular.fileName));
  const snake = (kebab: string) => kebab.replace(/-/g, '_');
  const words = (kebab: string) => kebab.replace(/-/g, ' ');
  return {
    fileName: singular.fileName,
    className: singular.className,
    propertyName: singular.propertyName,
    constantName: singular.constantName,
    snakeName: snake(singular.fileName),
    title: words(singular.fileName),
    pluralFileName: many.fileName,
    pluralClassName: many.className,
    pluralSnakeName: snake(many.fileName),
    pluralTitle: words(many.fileName),
  };
}

/**
 * `nx g @petstore/tools:resource <name>`: a new aggregate through every layer, modelled on categories
 * (docs/development.md, How to add a resource): domain entity and errors, repository port and use cases, the
 * repository (fixed SQL through TransactionHost) and migration, the HTTP slice (controller, DTOs, module, OpenAPI);
 * its tests: a unit test of the entity, an in-memory fake of the repository with the contract suite that it and the
 * PostgreSQL repository both pass, a use-case spec on the fake, and an HTTP test on PostgreSQL; then wires it into
 * the shared indexes (the fake and the contract into `@petstore/application/testing`) and the assembly.
 */
export async function resourceGenerator(tree: Tree, options: ResourceGeneratorSchema): Promise<void> {
  const n = resourceNames(options.name, options.plural);
  const timestamp = options.timestamp ?? Date.now();
  for (const taken of [`libs/domain/src/${n.fileName}`, `apps/api/src/${n.pluralFileName}`]) {
    if (tree.exists(taken)) throw new Error(`${taken} exists already: is there a resource "${n.fileName}"?`);
  }
  for (const file of Object.values(WIRING)) {
    if (!tree.exists(file)) throw new Error(`${file} is missing: the generator wires new resources into it.`);
  }

  generateFiles(tree, path.join(__dirname, 'files'), '.', {
    ...n,
    timestamp,
    servesFrom: previousRelease(tree),
    tmpl: '',
  });
  // Prettier formats the new files; the shared files below get one line each, in their own layout.
  await formatFiles(tree);

  addExport(tree, WIRING.domainIndex, `./${n.fileName}`);
  addExport(tree, WIRING.applicationIndex, `./${n.fileName}`);
  addExport(tree, WIRING.applicationTesting, `./in-memory/in-memory-${n.fileName}.repository`);
  addExport(tree, WIRING.applicationTesting, `./contracts/${n.fileName}-repository.contract`);
  addExport(tree, WIRING.infrastructureIndex, `./persistence/${n.fileName}/pg-${n.fileName}.repository`);

  const migration = `${n.pluralClassName}${timestamp}`;
  addImport(tree, WIRING.migrations, migration, `./${timestamp}-${n.pluralFileName}`);
  appendToArray(tree, WIRING.migrations, { variable: 'MIGRATIONS' }, migration);

  const nestModule = `${n.pluralClassName}Module`;
  addImport(tree, WIRING.assembly, nestModule, `../${n.pluralFileName}/${n.pluralFileName}.module`);
  appendToArray(tree, WIRING.assembly, { variable: 'HTTP_SLICES' }, nestModule);

  // The new refusal's kind, and its row in the API's one table of kinds → status and code.
  const nameTaken = `${n.snakeName}_name_taken`;
  addUnionMember(tree, WIRING.domainErrorKinds, 'DomainErrorKind', nameTaken);
  addObjectProperty(
    tree,
    WIRING.errorTable,
    'ERRORS',
    nameTaken,
    `${nameTaken}: { status: 409, code: '${nameTaken}' }`,
  );
  // The public list of codes (the OpenAPI description's ErrorCode and per-operation lists, the typed client).
  addObjectProperty(tree, WIRING.errorCodes, 'ERROR_CODES', nameTaken, `${nameTaken}: [409]`);
}

export default resourceGenerator;

/**
 * The release before the one being written (`.ci/previous-release`: a commit and its version), else the workspace's
 * version: a new table is an expand step, which that release serves (docs/development.md, "Migrations without
 * downtime"); the migration declares it as its `servesFrom`.
 */
function previousRelease(tree: Tree): string {
  const recorded = tree.read('.ci/previous-release', 'utf-8')?.trim().split(/\s+/)[1];
  if (recorded && /^\d+\.\d+\.\d+/.test(recorded)) return recorded;
  return (JSON.parse(tree.read('package.json', 'utf-8') ?? '{}') as { version?: string }).version ?? '0.0.0';
}

/** The generated files, relative to the workspace root (for tests and for the summary). */
export function generatedFiles(name: string, timestamp: number, plural?: string): string[] {
  const n = resourceNames(name, plural);
  return [
    `libs/domain/src/${n.fileName}/${n.fileName}.ts`,
    `libs/domain/src/${n.fileName}/${n.fileName}.errors.ts`,
    `libs/domain/src/${n.fileName}/${n.fileName}.spec.ts`,
    `libs/domain/src/${n.fileName}/index.ts`,
    `libs/application/src/${n.fileName}/${n.fileName}.repository.ts`,
    `libs/application/src/${n.fileName}/${n.fileName}.use-cases.ts`,
    `libs/application/src/${n.fileName}/index.ts`,
    `libs/application/src/${n.fileName}/${n.fileName}.use-cases.spec.ts`,
    `libs/application/src/${n.fileName}/in-memory-${n.fileName}.repository.spec.ts`,
    `libs/application/testing/in-memory/in-memory-${n.fileName}.repository.ts`,
    `libs/application/testing/contracts/${n.fileName}-repository.contract.ts`,
    `libs/infrastructure/src/persistence/${n.fileName}/pg-${n.fileName}.repository.ts`,
    `libs/infrastructure/src/persistence/${n.fileName}/pg-${n.fileName}.repository.spec.ts`,
    `libs/infrastructure/src/database/migrations/${timestamp}-${n.pluralFileName}.ts`,
    `apps/api/src/${n.pluralFileName}/${n.pluralFileName}.controller.ts`,
    `apps/api/src/${n.pluralFileName}/${n.pluralFileName}.module.ts`,
    `apps/api/src/${n.pluralFileName}/${n.fileName}.dto.ts`,
    `apps/api/test/${n.pluralFileName}.e2e.spec.ts`,
  ].map((file) => joinPathFragments(file));
}
