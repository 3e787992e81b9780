import { Module } from '@nestjs/common';
import { MessageQueries, MessageRepository, QueueMessage } from '@petstore/application';
import { TypeOrmMessageRepository } from '@petstore/infrastructure';
import { MessageWorkerModule } from './message-worker.module';
import { MessagesController } from './messages.controller';

@Module({
  imports: [MessageWorkerModule],
  controllers: [MessagesController],
  providers: [{ provide: MessageRepository, useClass: TypeOrmMessageRepository }, QueueMessage, MessageQueries],
  exports: [MessageRepository],
})
export class MessagesModule {}
