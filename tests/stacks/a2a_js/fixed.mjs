// client.mjs's session with the fixes a2a-capture's findings name for @a2a-js/sdk applied
// (a2a_capture/analyze/libraries.py); tests/test_library_fixes.py shows the findings gone.
//
//     node fixed.mjs BASE_URL
//
// The same card and stream; then each of client.mjs's follow-up calls only where its fix allows it:
// getTask, resubscribeTask and cancelTask only while the last state the stream gave is not terminal
// (with no getTask before resubscribeTask), and only with the id the stream's `task` event gave.
// Prints {"task": id, "state": N, "sent": [...]}: the follow-up calls made.

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
const TERMINAL = [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED];
const sent = [];
if (!TERMINAL.includes(state)) {                                                           // the task still runs
  sent.push('resubscribeTask');
  for await (const event of client.resubscribeTask({ tenant: '', id: task })) {             // no getTask first
    void event;
  }
}
console.log(JSON.stringify({ task, state, sent }));
