import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { LIMITS, Message, MESSAGE_STATUSES, MessageStatus } from '@petstore/domain';
import { IsIn, IsOptional, IsString, Length } from 'class-validator';
import { PageQueryDto } from '../common/pagination/page.query.dto';
import { defaultOf } from '../config/app-config';
import { versionProperty } from './version.property';

@ApiSchema({ name: 'NewMessage', description: 'Input of the quickstart operation `POST /messages`.' })
export class NewMessageDto {
  @ApiProperty({
    description:
      'The text to deliver, kept exactly as sent (not trimmed). Its length is counted in UTF-16 code units, so a ' +
      'character outside the Basic Multilingual Plane (most emoji) counts as two.',
    minLength: LIMITS.messageText.min,
    maxLength: LIMITS.messageText.max,
    example: 'Hello from the quickstart!',
  })
  @IsString()
  @Length(LIMITS.messageText.min, LIMITS.messageText.max)
  message: string;
}

@ApiSchema({
  name: 'Message',
  description:
    'A message posted to `POST /messages`. A background worker moves it from `queued` to `delivered`, or to ' +
    '`failed` once every attempt allowed has failed.',
})
export class MessageDto {
  @ApiProperty({
    description: 'Unique identifier (a UUID) assigned on creation.',
    format: 'uuid',
    example: '3f2b8c1e-9d4a-4b7e-8c2d-1a2b3c4d5e6f',
  })
  id: string;

  @ApiProperty({ description: 'The text, as sent.', example: 'Hello from the quickstart!' })
  message: string;

  @ApiProperty({
    enum: MESSAGE_STATUSES,
    enumName: 'MessageStatus',
    description:
      '`queued`: accepted, not delivered yet (attempts are retried with back-off); `delivered`: delivered by the ' +
      'worker; `failed`: given up after `MESSAGE_MAX_ATTEMPTS` failed attempts ' +
      `(${defaultOf('messaging', 'maxAttempts')} by default), never tried again.`,
    example: 'queued',
  })
  status: MessageStatus;

  @ApiProperty({
    description: 'When it was queued (ISO 8601, UTC).',
    format: 'date-time',
    example: '2026-11-21T10:00:00.000Z',
  })
  createdAt: string;

  @ApiPropertyOptional({
    description: 'When it was delivered (ISO 8601, UTC); present once `status` is `delivered`.',
    format: 'date-time',
    example: '2026-11-21T10:00:00.250Z',
  })
  deliveredAt?: string;

  @ApiPropertyOptional(versionProperty('message', 'its status'))
  version?: number;

  static from(message: Message): MessageDto {
    const dto = new MessageDto();
    dto.id = message.id;
    dto.message = message.text;
    dto.status = message.status;
    dto.createdAt = message.createdAt.toISOString();
    const { deliveredAt } = message;
    if (deliveredAt) dto.deliveredAt = deliveredAt.toISOString();
    dto.version = message.version;
    return dto;
  }
}

export class MessageListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    enum: MESSAGE_STATUSES,
    enumName: 'MessageStatus',
    description: 'Only messages in this status.',
  })
  @IsOptional()
  @IsIn(MESSAGE_STATUSES)
  status?: MessageStatus;
}
