import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'ErrorDetail', description: 'One invalid field of a validation error.' })
export class ErrorDetailDto {
  @ApiProperty({ example: 'name' })
  field: string;

  @ApiProperty({ example: 'name must be 1 to 100 characters long' })
  message: string;
}

@ApiSchema({ name: 'Error', description: 'Every error response has this shape; `status` equals the HTTP status.' })
export class ErrorResponseDto {
  @ApiProperty({ description: 'Machine-readable error code.', example: 'validation_failed' })
  code: string;

  @ApiProperty({
    description: 'Human-readable description.',
    example: 'The request is invalid: name must be a string.',
  })
  message: string;

  @ApiProperty({ description: 'The HTTP status code.', type: 'integer', example: 400 })
  status: number;

  @ApiPropertyOptional({ description: 'Per-field problems (validation errors only).', type: [ErrorDetailDto] })
  details?: ErrorDetailDto[];

  @ApiPropertyOptional({
    description:
      "The code's entry in the list of error codes this service serves (a path of the service: resolve it against " +
      'the URL of the request).',
    format: 'uri-reference',
    example: '/docs/errors#validation_failed',
  })
  documentationUrl?: string;
}
