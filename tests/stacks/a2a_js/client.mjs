// A client session with the JavaScript A2A SDK's own client (@a2a-js/sdk 1.x), run from the stack's npm install.
//
//     node client.mjs BASE_URL [--rest] [--legacy]
//
// Fetches the card, picks JSON-RPC (or HTTP+JSON with --rest) from it, streams a message to
// completion, then makes the mistakes the library lets through: it polls the task it saw
// complete, subscribes to it, cancels it, sets a push config on an agent without push, and polls
// a task that does not exist. Prints {"task": id, "refused": [...]} at the end: the calls refused,
// each by the SDK's error name. With --legacy the SDK's v0.3 layer is on (card resolver and
// transports), so it speaks 0.3 to an interface its card declares at 0.3.

import { Role, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory,
} from '@a2a-js/sdk/client';

const base = process.argv[2];
const binding = process.argv.includes('--rest') ? 'HTTP+JSON' : 'JSONRPC';

const legacyCompat = process.argv.includes('--legacy') ? { enabled: true } : undefined;
const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  cardResolver: new DefaultAgentCardResolver({ legacyCompat }),
  transports: [new JsonRpcTransportFactory({ legacyCompat }), new RestTransportFactory({ legacyCompat })],
  preferredTransports: [binding],
}));
const client = await factory.createFromUrl(base);                                          // card
const message = {
  messageId: crypto.randomUUID(), role: Role.ROLE_USER, taskId: '', contextId: '', metadata: {}, extensions: [],
  referenceTaskIds: [], parts: [{ content: { $case: 'text', value: 'run' }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
};
let task;
let state;
for await (const event of client.sendMessageStream({ tenant: '', message, configuration: undefined, metadata: {} })) {
  const payload = event.payload;                                                          // SendStreamingMessage
  if (payload?.$case === 'task') {
    [task, state] = [payload.value.id, payload.value.status?.state];
  } else if (payload?.$case === 'statusUpdate') {
    state = payload.value.status?.state;
  }
}
if (state !== TaskState.TASK_STATE_COMPLETED) {
  throw new Error(`the stream ended in state ${state}`);
}
const refused = [];
const mistakes = [
  () => client.getTask({ tenant: '', id: task, historyLength: undefined }),                 // poll of a finished task
  async () => {                                                                            // subscribe to it
    for await (const event of client.resubscribeTask({ tenant: '', id: task })) {
      void event;
    }
  },
  () => client.cancelTask({ tenant: '', id: task, metadata: {} }),                         // cancel it
  () => client.createTaskPushNotificationConfig({                                          // push, not offered
    tenant: '', taskId: task, id: '', url: 'http://127.0.0.1:9/hook', token: 'push-secret-js', authentication: undefined }),
  () => client.getTask({ tenant: '', id: 'no-such-task', historyLength: undefined }),      // a task never made
];
for (const mistake of mistakes) {
  try {
    await mistake();
  } catch (error) {
    refused.push(error.constructor.name);
  }
}
console.log(JSON.stringify({ task, refused }));
