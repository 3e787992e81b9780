import { newId } from '../common/identity';
import { LIMITS } from '../common/limits';
import { displayName } from '../common/text';

export const ROLES = ['admin', 'customer'] as const;
export type Role = (typeof ROLES)[number];

export interface AccountProps {
  id: number;
  name: string;
  role: Role;
  createdAt: Date;
}

/** Who calls the API. Sign-up makes customers; administrators come from ADMIN_API_KEY. */
export class Account {
  private constructor(private readonly props: AccountProps) {}

  /** A new customer, with the id `AccountRepository.nextId()` gave. */
  static signUp(input: { id: number; name: string; now: Date }): Account {
    return new Account({
      id: newId(input.id),
      name: Account.checkName(input.name),
      role: 'customer',
      createdAt: input.now,
    });
  }

  /** A new administrator, with the id `AccountRepository.nextId()` gave. */
  static administrator(input: { id: number; name: string; now: Date }): Account {
    return new Account({
      id: newId(input.id),
      name: Account.checkName(input.name),
      role: 'admin',
      createdAt: input.now,
    });
  }

  static restore(props: AccountProps): Account {
    return new Account({ ...props });
  }

  get id(): number {
    return this.props.id;
  }
  get name(): string {
    return this.props.name;
  }
  get role(): Role {
    return this.props.role;
  }
  get createdAt(): Date {
    return this.props.createdAt;
  }
  get isAdmin(): boolean {
    return this.props.role === 'admin';
  }

  /** Whether this account may act on something owned by `ownerId` (its own, or any as admin). */
  mayActFor(ownerId: number): boolean {
    return this.isAdmin || this.props.id === ownerId;
  }

  toSnapshot(): AccountProps {
    return { ...this.props };
  }

  private static checkName(name: string): string {
    return displayName('name', name, LIMITS.accountName.min, LIMITS.accountName.max);
  }
}
