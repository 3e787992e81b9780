import { Module } from '@nestjs/common';
import { MessageQueries, QueueMessage } from '@petstore/application';
import { MessageWorkerModule } from './message-worker.module';
import { MessagesController } from './messages.controller';

@Module({
  imports: [MessageWorkerModule],
  controllers: [MessagesController],
  providers: [QueueMessage, MessageQueries],
})
export class MessagesModule {}
